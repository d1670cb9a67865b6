import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import {
  FIGURES,
  JUDGED_WRONG,
  SISIMAI_DIR,
  SISIMAI_REASONS,
  percent,
  readVerdicts,
  scoreCorpus,
  type CorpusScore,
  type Figure,
} from '../fixtures/bounce-corpus-score.js';
import { BOUNCE_REASONS } from '../../src/modules/receiving/bounces/reasons.js';

// sisimai's verdicts on its own public sample mail (test/fixtures/bounces-sisimai/README.md) as the
// yardstick of the bounce reader: each figure `npm run corpus` prints holds its target. The targets
// apply to the verdicts not judged wrong for the message's own text (JUDGED_WRONG, each with why).
describe('bounce corpus (sisimai): agreement with the reference parser', function () {
  let score: CorpusScore;
  before(function () {
    this.timeout(60000);
    score = scoreCorpus();
  });

  it('has a verdict for every message in the folder, and a judgement only for messages in it', function () {
    const files = readdirSync(SISIMAI_DIR).filter((f) => f.endsWith('.eml'));
    const verdicts = readVerdicts().map((v) => v.file);
    expect(verdicts.slice().sort()).to.deep.equal(files.sort());
    for (const file of Object.keys(JUDGED_WRONG)) expect(verdicts, file).to.include(file);
  });

  it('maps every sisimai reason of the corpus to one of ours, or to a kind of message', function () {
    const kinds = new Set(['vacation', 'feedback', 'delivered']);
    for (const v of readVerdicts())
      for (const r of v.recipients) {
        if (kinds.has(r.reason)) continue;
        expect(SISIMAI_REASONS, `${v.file}: ${r.reason}`).to.have.property(r.reason);
        expect(BOUNCE_REASONS).to.include(SISIMAI_REASONS[r.reason]);
      }
  });

  for (const k of Object.keys(FIGURES) as Figure[])
    it(`${FIGURES[k].label}: at least ${FIGURES[k].target}%`, function () {
      const judged = score.judged[k];
      const misses = score.disagreements.filter((d) => d.figure === k || (k === 'cls' && d.figure === 'status'));
      expect(percent(judged), misses.map((d) => `${d.file}: ${d.want} → ${d.got}`).join('\n')).to.be.at.least(
        FIGURES[k].target,
      );
    });
});
