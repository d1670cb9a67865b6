import type { Design } from './design.schema.js';

// The colours and fonts a design is drawn with. The accent is the sender's
// brand colour, so where it is used as text it is darkened (light scheme) or
// lightened (dark scheme) until it reaches WCAG AA contrast (4.5:1) against
// the card it sits on; a button's label is whichever of white or near-black
// reads better on the accent.

export interface Palette {
  accent: string;
  /** links and accent text on the light card */
  accentText: string;
  /** links and accent text on the dark card */
  accentTextDark: string;
  /** a button's label on the accent */
  onAccent: string;
  /** a light wash of the accent (discount box) */
  tint: string;
  background: string;
  card: string;
  text: string;
  muted: string;
  border: string;
  font: string;
  /** Outlook for Windows ignores a stack whose first font it lacks */
  msoFont: string;
}

export const DARK = {
  background: '#0f1115',
  card: '#1b1e24',
  text: '#e6e8eb',
  muted: '#a3a9b3',
  border: '#3a3f48',
  tint: '#23272f',
} as const;

const FONTS = {
  sans: {
    font: "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif",
    msoFont: 'Arial, sans-serif',
  },
  serif: { font: "Georgia, Cambria, 'Times New Roman', Times, serif", msoFont: "Georgia, 'Times New Roman', serif" },
} as const;

type Rgb = [number, number, number];

const rgbOf = (hex: string): Rgb => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as Rgb;
const hexOf = (c: Rgb) => `#${c.map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;
const mix = (a: Rgb, b: Rgb, t: number): Rgb => [0, 1, 2].map((i) => a[i] + (b[i] - a[i]) * t) as Rgb;

function luminance(c: Rgb): number {
  const [r, g, b] = c.map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a: string, b: string): number {
  const [x, y] = [luminance(rgbOf(a)), luminance(rgbOf(b))];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

/** The accent moved towards `towards` in small steps until it reads on `ground`. */
function readableOn(accent: string, ground: string, towards: string): string {
  for (let t = 0; t <= 1; t += 0.05) {
    const c = hexOf(mix(rgbOf(accent), rgbOf(towards), t));
    if (contrast(c, ground) >= 4.5) return c;
  }
  return towards;
}

export function paletteOf(design: Design): Palette {
  const accent = (design.accent ?? '#1a56db').toLowerCase();
  const card = '#ffffff';
  return {
    accent,
    accentText: readableOn(accent, card, '#000000'),
    accentTextDark: readableOn(accent, DARK.card, '#ffffff'),
    onAccent: contrast(accent, '#ffffff') >= contrast(accent, '#111111') ? '#ffffff' : '#111111',
    tint: hexOf(mix(rgbOf(accent), [255, 255, 255], 0.92)),
    background: (design.background ?? '#f4f5f7').toLowerCase(),
    card,
    text: '#1f2328',
    muted: '#5f6670',
    border: '#e3e6ea',
    ...FONTS[design.font ?? 'sans'],
  };
}
