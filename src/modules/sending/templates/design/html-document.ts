import { DARK, type Palette } from './palette.js';
import { LAYOUT } from './html-parts.js';

// The document around the blocks: a 600 px card centred on the background.
// Layout and colours are inline; the <style> only adds what inline styles
// cannot say (the dark scheme, the phone width), so a client that drops it
// still shows the light, 600 px layout. Outlook for Windows ignores
// max-width, hence the fixed-width table in its conditional comment.

const WIDTH = 600;

function styleOf(p: Palette): string {
  return `<style>
:root { color-scheme: light dark; supported-color-schemes: light dark; }
body { margin: 0 !important; padding: 0 !important; width: 100% !important; -webkit-text-size-adjust: 100%; -ms-text-size-adjust: 100%; }
table { border-collapse: collapse; mso-table-lspace: 0pt; mso-table-rspace: 0pt; }
img { border: 0; outline: none; text-decoration: none; -ms-interpolation-mode: bicubic; }
a[x-apple-data-detectors] { color: inherit !important; text-decoration: none !important; }
@media only screen and (max-width: 620px) {
  .ph-container { width: 100% !important; max-width: 100% !important; }
  .ph-outer { padding: 0 !important; }
  .ph-pad { padding-left: 20px !important; padding-right: 20px !important; }
  .ph-col { display: block !important; width: 100% !important; max-width: 100% !important; }
  .ph-col-text { padding: 16px 0 0 0 !important; }
  img.ph-fluid { width: 100% !important; max-width: 100% !important; height: auto !important; }
}
@media (prefers-color-scheme: dark) {
  .ph-bg { background-color: ${DARK.background} !important; }
  .ph-card { background-color: ${DARK.card} !important; }
  .ph-text, .ph-text a { color: ${DARK.text} !important; }
  .ph-muted { color: ${DARK.muted} !important; }
  .ph-link { color: ${p.accentTextDark} !important; }
  .ph-tint { background-color: ${DARK.tint} !important; }
  .ph-rule, .ph-box { border-color: ${DARK.border} !important; }
}
</style>`;
}

const msoStyle = (p: Palette) =>
  `<!--[if mso]><noscript><xml><o:OfficeDocumentSettings><o:PixelsPerInch>96</o:PixelsPerInch></o:OfficeDocumentSettings></xml></noscript>` +
  `<style>body, table, td, p, a, li, h1, h2, th { font-family: ${p.msoFont} !important; }</style><![endif]-->`;

function headOf(p: Palette): string {
  return [
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta http-equiv="X-UA-Compatible" content="IE=edge">',
    '<meta name="x-apple-disable-message-reformatting">',
    '<meta name="format-detection" content="telephone=no, date=no, address=no, email=no, url=no">',
    '<meta name="color-scheme" content="light dark">',
    '<meta name="supported-color-schemes" content="light dark">',
    '<title></title>',
    msoStyle(p),
    styleOf(p),
    '</head>',
  ].join('\n');
}

/** The whole HTML document around the rows of the blocks. */
export function documentHtml(p: Palette, rows: string): string {
  const card =
    `<table ${LAYOUT} class="ph-container ph-card" width="${WIDTH}" bgcolor="${p.card}" style="width:${WIDTH}px;max-width:${WIDTH}px;background-color:${p.card};` +
    `border-top:4px solid ${p.accent};border-radius:8px;border-collapse:separate;word-break:break-word;overflow-wrap:anywhere;">\n` +
    `<tr><td height="16" style="height:16px;font-size:1px;line-height:16px;">&nbsp;</td></tr>\n${rows}` +
    `<tr><td height="24" style="height:24px;font-size:1px;line-height:24px;">&nbsp;</td></tr>\n</table>`;
  const body =
    `<body class="ph-bg" style="margin:0;padding:0;background-color:${p.background};">\n` +
    `<table ${LAYOUT} class="ph-bg" width="100%" bgcolor="${p.background}" style="width:100%;background-color:${p.background};">\n` +
    `<tr><td class="ph-outer" align="center" style="padding:24px 12px;">\n` +
    `<!--[if mso]><table ${LAYOUT} width="${WIDTH}" align="center"><tr><td><![endif]-->\n${card}\n<!--[if mso]></td></tr></table><![endif]-->\n` +
    `</td></tr>\n</table>\n</body>`;
  return `<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml" xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office">\n${headOf(p)}\n${body}\n</html>\n`;
}
