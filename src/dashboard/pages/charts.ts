import { html, type Html } from './html.js';

// Small SVG charts drawn on the server: no script, no library. Each has a
// title and a description for screen readers, and the page shows the same
// numbers in a table beside it. Pure.

export interface Bar {
  label: string;
  /** stacked from the bottom, in order */
  parts: Array<{ value: number; className: string }>;
}

const W = 600;
const H = 160;
const PAD = { left: 52, right: 8, top: 8, bottom: 20 };

/** Stacked bars, one per label, with the highest total at the top. */
export function barChart(title: string, description: string, bars: Bar[]): Html {
  const max = Math.max(1, ...bars.map((b) => b.parts.reduce((s, p) => s + p.value, 0)));
  const slot = (W - PAD.left - PAD.right) / Math.max(1, bars.length);
  const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max);
  const rects = bars.map((b, i) => {
    let base = 0;
    return b.parts.map((p) => {
      const top = y(base + p.value);
      const r =
        p.value > 0
          ? html`<rect class="${p.className}" x="${(PAD.left + i * slot + slot * 0.15).toFixed(1)}" y="${top.toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${(y(base) - top).toFixed(1)}"></rect>`
          : '';
      base += p.value;
      return r;
    });
  });
  return svg(title, description, html`${axis(String(max), '0', bars)}${rects}`);
}

/** A rate per label as a line, against its watch and at-risk thresholds drawn as dashed lines. */
export function rateChart(
  title: string,
  description: string,
  points: Array<{ label: string; rate: number }>,
  thresholds: { watch: number; at_risk: number },
): Html {
  const max = Math.max(thresholds.at_risk * 1.5, ...points.map((p) => p.rate));
  const slot = (W - PAD.left - PAD.right) / Math.max(1, points.length);
  const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max);
  const x = (i: number) => PAD.left + i * slot + slot / 2;
  const line = points.map((p, i) => `${x(i).toFixed(1)},${y(p.rate).toFixed(1)}`).join(' ');
  const limit = (v: number, cls: string, name: string) =>
    html`<line class="${cls}" x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"></line><text class="limit-label" x="${W - PAD.right - 4}" y="${(y(v) - 3).toFixed(1)}" text-anchor="end">${name} ${percent(v)}</text>`;
  return svg(
    title,
    description,
    html`${axis(percent(max), '0%', points)}${limit(thresholds.watch, 'watch', 'watch')}${limit(thresholds.at_risk, 'at-risk', 'at risk')}<polyline class="rate" points="${line}"></polyline>`,
  );
}

export function percent(v: number): string {
  return `${(v * 100).toFixed(2).replace(/\.?0+$/, '')}%`;
}

function axis(top: string, bottom: string, items: Array<{ label: string }>): Html {
  const first = items[0]?.label ?? '';
  const last = items[items.length - 1]?.label ?? '';
  return html`<line class="axis" x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${H - PAD.bottom}"></line>
<line class="axis" x1="${PAD.left}" x2="${W - PAD.right}" y1="${H - PAD.bottom}" y2="${H - PAD.bottom}"></line>
<text x="${PAD.left - 4}" y="${PAD.top + 10}" text-anchor="end">${top}</text><text x="${PAD.left - 4}" y="${H - PAD.bottom}" text-anchor="end">${bottom}</text>
<text x="${PAD.left}" y="${H - 4}">${first}</text><text x="${W - PAD.right}" y="${H - 4}" text-anchor="end">${last}</text>`;
}

function svg(title: string, description: string, body: Html): Html {
  // unique on a page as long as the titles are
  const id = `chart-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return html`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${id}-t ${id}-d" preserveAspectRatio="none"><title id="${id}-t">${title}</title><desc id="${id}-d">${description}</desc>${body}</svg>`;
}
