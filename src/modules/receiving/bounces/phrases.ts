import type { BounceReason } from './reasons.js';

/**
 * A reason and the phrases that mean it, compiled into one pattern. The phrases are read against
 * the lower-cased, whitespace-collapsed, capped text of a reply (smtp-text.ts `flat`), so they are
 * written in lower case with single spaces. Each phrase is a small regular expression: literal
 * words, optional words `(?:x )?`, character classes and bounded gaps `[^.;]{0,40}`, never a
 * quantifier inside a quantified group, so a hostile text cannot make one backtrack.
 */
export interface PhraseRule {
  reason: BounceReason;
  pattern: RegExp;
}

export function rule(reason: BounceReason, phrases: readonly string[]): PhraseRule {
  return { reason, pattern: new RegExp(phrases.join('|')) };
}

/** The first rule whose phrases the text holds. */
export function firstMatch(rules: readonly PhraseRule[], text: string): BounceReason | null {
  for (const r of rules) if (r.pattern.test(text)) return r.reason;
  return null;
}
