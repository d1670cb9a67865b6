// A suppression as the accept and the MTA compare against it (no I/O).

export const SUPPRESSION_REASONS = ['bounce', 'complaint', 'manual'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export interface Suppression {
  projectId: string;
  address: string;
  reason: SuppressionReason;
  emailId: string | null;
  createdAt: number;
  /** when it stops blocking (ms); null: never */
  expiresAt: number | null;
}

/** Suppressions are per project: the key of a (project, bare lower-cased address) pair. */
export const suppressionKey = (projectId: string, address: string) => `${projectId}\u0000${address}`;
