// npm run corpus — how the bounce classifier reads test/fixtures/bounces-sisimai/ against the
// verdicts sisimai's own tests give for the same messages (issue 42's yardstick): kind, the number
// of failed recipients, the status class and code, hard (Permanent) against sisimai's hard_bounce,
// and the reason (sisimai's names mapped to ours in test/fixtures/bounce-corpus-score.ts), each as a
// share of the messages or recipients where sisimai says something: over every verdict, and without
// the few judged wrong for the message's own text (listed below the table), which the targets apply
// to. Then the disagreements; `-v` adds the status ones and the diagnostic read for each.
import {
  FIGURES,
  JUDGED_WRONG,
  percent,
  scoreCorpus,
  type Disagreement,
  type Figure,
} from '../test/fixtures/bounce-corpus-score.js';

const verbose = process.argv.includes('-v');
const score = scoreCorpus();
const show = (f: { ok: number; n: number }) => `${percent(f).toFixed(1)}% (${f.ok}/${f.n})`;

const rows = (Object.keys(FIGURES) as Figure[]).map((k) => {
  const mark = percent(score.judged[k]) >= FIGURES[k].target ? '' : ' ✗';
  return `| ${FIGURES[k].label} | ${show(score.figures[k])} | ${show(score.judged[k])} | ≥ ${FIGURES[k].target}%${mark} |`;
});
console.log(`${score.messages} messages

| figure | all verdicts | judged | target |
|---|---|---|---|
${rows.join('\n')}

Verdicts judged wrong (left out of "judged" for the figures named):
${Object.entries(JUDGED_WRONG)
  .map(([file, j]) => `- ${file} (${j.figures.join(', ')}): ${j.why}`)
  .join('\n')}`);

const sections: Array<[Disagreement['figure'], string]> = [
  ['kind', 'Kind disagreements'],
  ['count', 'Recipient count disagreements'],
  ['hard', 'Hard/soft disagreements'],
  ['reason', 'Reason disagreements'],
  ...(verbose ? [['status', 'Status disagreements'] as [Disagreement['figure'], string]] : []),
];
for (const [figure, title] of sections) {
  const list = score.disagreements.filter((d) => d.figure === figure);
  if (!list.length) continue;
  console.log(`\n${title} (${list.length}):\n\n| file | sisimai | ours |\n|---|---|---|`);
  for (const d of list) {
    const judged = JUDGED_WRONG[d.file]?.figures.includes(figure === 'status' ? 'cls' : figure)
      ? ' (judged wrong)'
      : '';
    console.log(`| ${d.file}${judged} | ${d.want} | ${d.got} |`);
    if (verbose && d.diagnostic) console.log(`|   | ↳ ${d.diagnostic.slice(0, 300).replace(/\|/g, '\\|')} | |`);
  }
}
