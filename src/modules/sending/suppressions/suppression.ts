// A suppression as the accept and the MTA compare against it (no I/O).

export const SUPPRESSION_REASONS = ['bounce', 'complaint', 'manual', 'unsubscribe'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/**
 * Whether a suppression stops a send. An unsubscription (one-click or the
 * unsubscribe mailbox) stops only the kind of mail it came from: sends that
 * ask for List-Unsubscribe (newsletters, notifications). A password reset or
 * a receipt, which carries none, still reaches the person (docs/unsubscribe.md).
 */
export const blocksSend = (reason: SuppressionReason, asksForUnsubscribe: boolean) =>
  reason !== 'unsubscribe' || asksForUnsubscribe;

/**
 * The bounce that suppressed an address: its reason (docs/bounces.md's closed set, as the classifier
 * read it then), enhanced status and the server's words. Null for the other reasons.
 */
export interface SuppressingBounce {
  reason: string;
  status: string | null;
  diagnostic: string | null;
}

export interface Suppression {
  projectId: string;
  address: string;
  reason: SuppressionReason;
  /** set when live mail suppressed the address for a bounce */
  bounce?: SuppressingBounce | null;
  emailId: string | null;
  createdAt: number;
  /** when it stops blocking (ms); null: never */
  expiresAt: number | null;
}

/** Suppressions are per project: the key of a (project, bare lower-cased address) pair. */
export const suppressionKey = (projectId: string, address: string) => `${projectId}\u0000${address}`;
