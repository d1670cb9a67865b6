import { escapeHtml } from '../../../lib/html.js';

export interface TrackingUrls {
  open?: string;
  click?: (url: string) => string;
}

const SKIP = /^(mailto:|tel:|sms:|#|javascript:|data:|cid:)/i;

/**
 * Open and click tracking for one recipient's HTML: every http(s) link of
 * an <a> becomes a signed redirect, except mailto:, anchors and links
 * marked data-posthorn-notrack (whose marker is removed); a 1×1 pixel goes
 * before </body>, or at the end.
 */
export function addTracking(html: string, urls: TrackingUrls): string {
  let out = html;
  if (urls.click) {
    const click = urls.click;
    out = out.replace(/<a\b([^>]*)>/gi, (tag, attrs: string) => {
      if (/\sdata-posthorn-notrack(\s*=\s*("[^"]*"|'[^']*'|[^\s>]*))?/i.test(attrs)) {
        return `<a${attrs.replace(/\sdata-posthorn-notrack(\s*=\s*("[^"]*"|'[^']*'|[^\s>]*))?/i, '')}>`;
      }
      const m = /(\shref\s*=\s*)("([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(attrs);
      if (!m) return tag;
      const raw = decodeEntities((m[3] ?? m[4] ?? m[5] ?? '').trim());
      if (!raw || SKIP.test(raw) || !/^https?:\/\//i.test(raw)) return tag;
      const replaced = `${m[1]}"${escapeHtml(click(raw))}"`;
      return `<a${attrs.slice(0, m.index)}${replaced}${attrs.slice(m.index + m[0].length)}>`;
    });
  }
  if (urls.open) {
    const pixel = `<img src="${escapeHtml(urls.open)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;
    out = /<\/body>/i.test(out) ? out.replace(/<\/body>(?![\s\S]*<\/body>)/i, `${pixel}</body>`) : out + pixel;
  }
  return out;
}

function decodeEntities(s: string): string {
  return s
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}
