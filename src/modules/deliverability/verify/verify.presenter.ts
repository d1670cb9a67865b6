import type { VerificationResult, Verification, VerifiedBatch } from './verify.service.js';

/** interface §2.6: `{object: "email_verification", email, result, reasons, suggestion, …}` */
export function presentVerification(v: Verification) {
  return {
    object: 'email_verification' as const,
    email: v.email,
    result: v.result,
    reasons: v.reasons,
    suggestion: v.suggestion,
    free_provider: v.freeProvider,
    role_account: v.roleAccount,
    disposable: v.disposable,
    mail_servers: v.mailServers,
  };
}

/**
 * interface §4.4: the batch's answer, its results in the order sent, a summary
 * and the month's verifications. One whole batch, not a page: no next_cursor.
 */
export function presentVerifiedBatch(b: VerifiedBatch) {
  return {
    object: 'list' as const,
    data: b.results.map(presentVerification),
    summary: summaryOf(b.results),
    verifications: { used: b.used, limit: b.limit },
  };
}

/** interface §4.4 `summary`: how many results of each kind (of verifications, or of their presented rows). */
export function summaryOf(results: readonly { result: VerificationResult }[]): Record<VerificationResult, number> {
  const summary = { valid: 0, invalid: 0, risky: 0, unknown: 0 };
  for (const r of results) summary[r.result]++;
  return summary;
}
