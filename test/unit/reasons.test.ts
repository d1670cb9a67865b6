import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { classifyBounce } from '../../src/modules/receiving/bounces/classify-bounce.js';
import {
  BOUNCE_REASONS,
  REASONS,
  bounceTypeOf,
  isHard,
  reasonInfo,
} from '../../src/modules/receiving/bounces/reasons.js';
import { readReport } from '../../src/modules/receiving/bounces/report.js';
import { classifyReply } from '../../src/mta/classify-reply.js';
import { SMTP_REPLIES } from '../fixtures/smtp-replies.js';

/** An example as the classifier meets it: an SMTP reply when it starts with a code, else a DSN's diagnostic. */
function classify(example: string) {
  const code = /^([245]\d\d)[ -]/.exec(example)?.[1];
  return code ? classifyReply(Number(code), example).bounce! : classifyBounce({ diagnostic: example, final: true });
}

// The closed set of reasons (src/modules/receiving/bounces/reasons.ts): each defined once, with
// replies that mean it; the classifier reads each of them back to its own reason.
describe('bounce reasons: one closed set, each with examples the classifier reads back', function () {
  it('the four hard reasons are the ones that say the address is gone', function () {
    expect(BOUNCE_REASONS.filter(isHard).sort()).to.deep.equal([
      'has_moved',
      'host_unknown',
      'not_accept',
      'user_unknown',
    ]);
  });

  it('bounce_type: Permanent only for a final hard reason, Undetermined only when nothing explains', function () {
    for (const r of BOUNCE_REASONS) {
      expect(bounceTypeOf(r, false), r).to.equal('Transient');
      expect(bounceTypeOf(r, true), r).to.equal(
        isHard(r) ? 'Permanent' : r === 'undefined' ? 'Undetermined' : 'Transient',
      );
    }
  });

  for (const reason of BOUNCE_REASONS)
    it(`${reason}: ${REASONS[reason].meaning}`, function () {
      const { examples } = REASONS[reason];
      expect(examples.length, 'examples').to.be.at.least(1);
      for (const example of examples) {
        const b = classify(example);
        expect(b.reason, example).to.equal(reason);
        // a hard reason on a 5xx is Permanent; a soft one never is
        if (isHard(reason) && /^5/.test(b.status)) expect(b.bounceType, example).to.equal('Permanent');
        if (!isHard(reason)) expect(b.bounceType, example).to.not.equal('Permanent');
      }
    });

  it('never gives a reason outside the set, on any corpus', function () {
    this.timeout(60000);
    const seen = new Set<string>();
    for (const r of SMTP_REPLIES) seen.add(classifyReply(r.code, r.text).bounce?.reason ?? 'undefined');
    for (const dir of ['../fixtures/bounces/', '../fixtures/bounces-sisimai/']) {
      const path = fileURLToPath(new URL(dir, import.meta.url));
      for (const f of readdirSync(path).filter((x) => x.endsWith('.eml')))
        for (const r of readReport(readFileSync(path + f)).recipients) if (r.reason) seen.add(r.reason);
    }
    for (const reason of seen) expect(BOUNCE_REASONS, reason).to.include(reason);
  });

  it('reads a stored reason name only when it is one of the table (a name from a row or an event is text)', function () {
    expect(reasonInfo('mailbox_full')).to.include({ hard: false, repeatable: true });
    expect(reasonInfo('user_unknown')).to.include({ hard: true });
    for (const name of ['constructor', 'toString', '__proto__', 'no_such_reason', '', null, 42])
      expect(reasonInfo(name), String(name)).to.equal(null);
  });
});
