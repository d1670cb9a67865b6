// npm run corpus — how the bounce classifier reads test/fixtures/bounces-sisimai/ against the
// verdicts sisimai's own tests give for the same messages (issue 42's yardstick): kind, the number
// of failed recipients, the status class and code, and hard (Permanent) against sisimai's
// hard_bounce, each as a share of the messages or recipients where sisimai says something.
// Recipients are compared in order (sisimai's verdicts name no address). Prints a markdown table,
// then the disagreements on hard/soft with the reason sisimai gives.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { presentReport } from '../src/modules/receiving/bounces/report.presenter.js';
import { readReport } from '../src/modules/receiving/bounces/report.js';

const DIR = fileURLToPath(new URL('../test/fixtures/bounces-sisimai/', import.meta.url));

interface Verdict {
  file: string;
  recipients: Array<{ status: string; reason: string; hard_bounce: boolean }>;
}

/** What sisimai's verdict makes of a message's kind, in the appliance's words. */
function kindOf(v: Verdict): string {
  const reasons = new Set(v.recipients.map((r) => r.reason));
  if (!v.recipients.length || reasons.has('delivered')) return 'other';
  if (reasons.has('feedback')) return 'complaint';
  if (reasons.has('vacation')) return 'auto_reply';
  return 'bounce';
}

const verdicts = JSON.parse(readFileSync(`${DIR}verdicts.json`, 'utf8')) as Verdict[];
const score = { kind: [0, 0], count: [0, 0], cls: [0, 0], status: [0, 0], hard: [0, 0] };
const count = (k: keyof typeof score, ok: boolean) => {
  score[k][0] += ok ? 1 : 0;
  score[k][1] += 1;
};
const misread: string[] = [];
for (const v of verdicts) {
  const got = presentReport(readReport(readFileSync(DIR + v.file)));
  const kind = kindOf(v);
  count('kind', got.kind === kind);
  if (kind !== 'bounce') continue;
  count('count', got.recipients.length === v.recipients.length);
  v.recipients.forEach((want, i) => {
    const r = got.recipients[i];
    if (want.status) {
      count('cls', r?.status?.[0] === want.status[0]);
      count('status', r?.status === want.status);
    }
    const hard = r?.bounce_type === 'Permanent';
    count('hard', hard === want.hard_bounce);
    if (hard !== want.hard_bounce)
      misread.push(
        `| ${v.file} | ${want.reason} | ${want.hard_bounce ? 'hard' : 'soft'} | ${r?.reason ?? '—'} | ${r?.bounce_type ?? '—'} |`,
      );
  });
}
const pct = ([ok, n]: number[]) => `${n ? ((100 * ok) / n).toFixed(1) : '—'}% (${ok}/${n})`;
console.log(`| figure | agreement with sisimai |
|---|---|
| kind (bounce, complaint, auto-reply, other), messages | ${pct(score.kind)} |
| failed recipients found, bounces | ${pct(score.count)} |
| status class (4 or 5), recipients | ${pct(score.cls)} |
| full status code, recipients | ${pct(score.status)} |
| hard vs soft, recipients | ${pct(score.hard)} |

Hard/soft disagreements:

| file | sisimai reason | sisimai | our reason | our bounce_type |
|---|---|---|---|---|
${misread.join('\n')}`);
