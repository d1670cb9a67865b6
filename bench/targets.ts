// The throughput targets as ratios to what the same run measured of the machine itself (RSA-2048
// signatures on one core, a bare Koa app, Postfix): machines differ by 4×, so an absolute rate says
// more about the machine than about the code (docs/benchmark.md, "The targets"). Each figure of a
// run beside its target, as one markdown table; a figure whose phase or reference did not run
// shows as "not run" and is not judged.

type Report = Record<string, any>;

export interface TargetRow {
  figure: string;
  target: string;
  /** the ratio (or figure) the target is about, and what it was computed from */
  measured: string;
  /** null: nothing to judge (a phase or its reference not run) */
  met: boolean | null;
}

const num = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;
const n = (x: number) => Math.round(x).toLocaleString('en-US');
const r2 = (x: number) => x.toFixed(2);

/** One RSA-2048 signature's time on one core, in µs. */
const signatureUs = (r: Report) =>
  num(r.rsa2048_signs_per_s_one_core) && r.rsa2048_signs_per_s_one_core > 0
    ? 1e6 / r.rsa2048_signs_per_s_one_core
    : null;

/** The appliance's CPU per delivered message over all its threads (µs), as the delivery phase measured it. */
function cpuPerMessage(r: Report): number | null {
  const c = r.delivery_cpu_us_per_message_10_domains;
  return c && num(c.main) && num(c.busiest_worker) && num(c.rest) ? c.main + c.busiest_worker + c.rest : null;
}

export function targetRows(r: Report): TargetRow[] {
  const rows: TargetRow[] = [];
  const add = (figure: string, target: string, measured: string | null, met: boolean | null) =>
    rows.push({ figure, target, measured: measured ?? 'not run', met: measured === null ? null : met });
  const rsa = num(r.rsa2048_signs_per_s_one_core) ? r.rsa2048_signs_per_s_one_core : null;
  const d10 = num(r.deliveries_per_s_10_domains) ? r.deliveries_per_s_10_domains : null;

  add(
    'DKIM deliveries/s (10 domains) ÷ RSA-2048 signs/s on one core',
    '≥ 1.0',
    d10 !== null && rsa ? `${r2(d10 / rsa)} (${n(d10)} ÷ ${n(rsa)})` : null,
    d10 !== null && rsa ? d10 / rsa >= 1.0 : null,
  );

  const cpu = cpuPerMessage(r);
  const sig = signatureUs(r);
  const c = r.delivery_cpu_us_per_message_10_domains;
  add(
    'appliance CPU per delivered message ÷ one RSA-2048 signature',
    '≤ 2.0',
    cpu !== null && sig
      ? `${r2(cpu / sig)} (main ${c.main} + background ${c.busiest_worker} + rest ${c.rest} = ${n(cpu)} µs ÷ ${n(sig)} µs)`
      : null,
    cpu !== null && sig ? cpu / sig <= 2.0 : null,
  );

  const pf = r.postfix && num(r.postfix.relay_per_s) && num(r.postfix.relay_dkim_per_s) ? r.postfix : null;
  add(
    'DKIM deliveries/s ÷ Postfix + OpenDKIM relay/s; ÷ Postfix relay/s',
    '≥ 3× and ≥ 2×',
    d10 !== null && pf
      ? `${r2(d10 / pf.relay_dkim_per_s)}× and ${r2(d10 / pf.relay_per_s)}× (Postfix + OpenDKIM ${n(pf.relay_dkim_per_s)}/s, Postfix ${n(pf.relay_per_s)}/s)`
      : null, // not run, or Postfix or OpenDKIM not installed: nothing to compare
    d10 !== null && pf ? d10 / pf.relay_dkim_per_s >= 3 && d10 / pf.relay_per_s >= 2 : null,
  );

  const hooks = num(r.webhook_events_per_s) ? r.webhook_events_per_s : null;
  const koaGet = num(r.koa_hello_requests_per_s) && r.koa_hello_requests_per_s > 0 ? r.koa_hello_requests_per_s : null;
  add(
    'webhook events/s (one endpoint) ÷ bare Koa GET/s',
    '≥ 0.25',
    hooks !== null && koaGet ? `${r2(hooks / koaGet)} (${n(hooks)} ÷ ${n(koaGet)})` : null,
    hooks !== null && koaGet ? hooks / koaGet >= 0.25 : null,
  );

  const test = r.accept_test_key && num(r.accept_test_key.rate) ? r.accept_test_key : null;
  const live = r.accept_live_key && num(r.accept_live_key.rate) ? r.accept_live_key : null;
  const liveP50 = live?.accept_to_delivered_ms?.p50;
  add(
    'live-key accepts/s while delivering ÷ test-key accepts/s (while deliveries/s ÷ RSA ≥ 0.5)',
    '≥ 0.6, median accept → delivered ≤ 1 s',
    live && test && test.rate > 0 && rsa
      ? `${r2(live.rate / test.rate)} (${n(live.rate)} ÷ ${n(test.rate)}; deliveries/s ÷ RSA ${r2(live.deliveries_per_s / rsa)}; median ${num(liveP50) ? `${n(liveP50)} ms` : '?'})`
      : null,
    live && test && test.rate > 0 && rsa
      ? live.rate / test.rate >= 0.6 && live.deliveries_per_s / rsa >= 0.5 && num(liveP50) && liveP50 <= 1000
      : null,
  );

  const koaPost = r.koa_post_202 && num(r.koa_post_202.rate) && r.koa_post_202.rate > 0 ? r.koa_post_202 : null;
  add(
    'test-key accepts/s ÷ bare Koa POST → 202, same load',
    '≥ 0.8, p99 ≤ 20 ms',
    test && koaPost
      ? `${r2(test.rate / koaPost.rate)} (${n(test.rate)} ÷ ${n(koaPost.rate)}), p99 ${test.p99.toFixed(1)} ms`
      : null,
    test && koaPost ? test.rate / koaPost.rate >= 0.8 && test.p99 <= 20 : null,
  );

  const empty = r.accept_test_key_empty && num(r.accept_test_key_empty.rate) ? r.accept_test_key_empty : null;
  add(
    `test-key accepts/s with ${r.preload ? n(r.preload.emails) : 'N'} emails stored ÷ on an empty database`,
    '≥ 0.8 (BENCH_PRELOAD=1000000)',
    test && empty && r.preload && empty.rate > 0
      ? `${r2(test.rate / empty.rate)} (${n(test.rate)} ÷ ${n(empty.rate)})`
      : null,
    test && empty && r.preload && empty.rate > 0 ? test.rate / empty.rate >= 0.8 : null,
  );

  const b = r.broadcast?.transactional;
  add(
    `transactional p99 while a ${r.broadcast ? n(r.broadcast.contacts) : '100,000'}-contact broadcast fans out`,
    '≤ 1 s',
    b && num(b.p99_ms) ? `${n(b.p99_ms)} ms (fan-out ${n(r.broadcast.fan_out_emails_per_s)} emails/s)` : null,
    b && num(b.p99_ms) ? b.p99_ms <= 1000 : null,
  );

  // absolute, not a ratio: what a person waits for in the browser, on the machine that runs it
  const dash = r.dashboard?.available && num(r.dashboard.slowest_interactive_ms) ? r.dashboard : null;
  const slowest = dash
    ? Object.entries(dash.pages as Record<string, { interactive_ms: number }>).sort(
        (a, b) => b[1].interactive_ms - a[1].interactive_ms,
      )[0]
    : null;
  add(
    'dashboard: slowest page, first visit, to interactive',
    '< 500 ms',
    dash && slowest ? `${n(dash.slowest_interactive_ms)} ms (${slowest[0]})` : null,
    dash ? dash.slowest_interactive_ms < 500 : null,
  );
  add(
    'dashboard: largest page, first visit, with its script, stylesheet and frames',
    '< 200 KB',
    dash && num(dash.largest_kb) ? `${dash.largest_kb} KB` : null,
    dash && num(dash.largest_kb) ? dash.largest_kb < 200 : null,
  );
  return rows;
}

/** The machine line the figures are read against. */
export function machineLine(r: Report, cores: number): string {
  const part = (label: string, x: unknown, unit: string) => (num(x) ? `${label} ${n(x)}${unit}` : null);
  return [
    `${cores} cores`,
    part('RSA-2048', r.rsa2048_signs_per_s_one_core, ' signs/s on one core'),
    part('bare Koa GET', r.koa_hello_requests_per_s, '/s'),
    r.koa_post_202 && num(r.koa_post_202.rate) ? `bare Koa POST → 202 ${n(r.koa_post_202.rate)}/s` : null,
    part('fsync', r.machine_fsyncs_per_s, '/s'),
    r.load_client ? `load client ${r.load_client}` : null,
  ]
    .filter(Boolean)
    .join(', ');
}

export function targetTable(r: Report, cores: number): string {
  const mark = (m: boolean | null) => (m === null ? '' : m ? 'met' : 'NOT met');
  return [
    `Machine: ${machineLine(r, cores)}`,
    '',
    '| figure | target | measured | |',
    '|---|---|---|---|',
    ...targetRows(r).map((x) => `| ${x.figure} | ${x.target} | ${x.measured} | ${mark(x.met)} |`),
  ].join('\n');
}
