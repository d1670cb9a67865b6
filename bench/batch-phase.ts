// The batch phase: test-key emails/s through POST /v1/emails/batch (100 emails a request) against
// the same emails sent one per POST /v1/emails, in interleaved pairs of runs on one appliance, so
// that both see the same warm process and the same database (docs/benchmark.md).

export interface BatchRun {
  /** emails accepted per second */
  emails_per_s: number;
  /** requests answered per second, and their latencies (ms) */
  rate: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface BatchPhaseResult {
  single: BatchRun[];
  batch: BatchRun[];
  /** mean batch emails/s ÷ mean single emails/s */
  ratio: number;
}

type Load = (
  path: string,
  body: string,
  secs: number,
) => Promise<{ rate: number; p50: number; p99: number; errors: number }>;

export const BATCH_SIZE = 100;

export async function batchPhase(o: {
  load: Load;
  /** one email's JSON template (@@I@@: the request's number) */
  email: string;
  seconds: number;
  pairs: number;
  step: (s: string) => void;
}): Promise<BatchPhaseResult> {
  const batchBody = `[${Array.from({ length: BATCH_SIZE }, () => o.email).join(',')}]`;
  const single: BatchRun[] = [];
  const batch: BatchRun[] = [];
  for (let i = 0; i < o.pairs; i++) {
    const s = await o.load('/v1/emails', o.email, o.seconds);
    single.push({ emails_per_s: s.rate, ...s });
    o.step(`  single: ${Math.round(s.rate)} emails/s`);
    const b = await o.load('/v1/emails/batch', batchBody, o.seconds);
    batch.push({ emails_per_s: b.rate * BATCH_SIZE, ...b });
    o.step(`  batch of ${BATCH_SIZE}: ${Math.round(b.rate * BATCH_SIZE)} emails/s (${Math.round(b.rate)} requests/s)`);
  }
  const mean = (runs: BatchRun[]) => runs.reduce((n, r) => n + r.emails_per_s, 0) / runs.length;
  return { single, batch, ratio: mean(batch) / mean(single) };
}
