// @ts-expect-error the parser ships no types: what it returns is described below
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export interface PromFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Array<{
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }>;
}

/** Prometheus text parsed by a parser of the format (not ours), by family name. */
export function parseMetrics(text: string): Map<string, PromFamily> {
  return new Map((parsePrometheusTextFormat(text) as PromFamily[]).map((f) => [f.name, f]));
}

/** The sum of a family's values over the series whose labels include `labels`. */
export function valueOf(families: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): number {
  const f = families.get(name);
  if (!f) return 0;
  return f.metrics
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .reduce((sum, m) => sum + Number(m.value ?? m.count ?? 0), 0);
}

/**
 * A histogram series' `_count` read from the text itself: the parser above
 * keeps a histogram's buckets but not its series' labels, count or sum.
 */
export function histogramCount(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^(\w+)_count(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total += Number(m[3]);
  }
  return total;
}
