// The shape of a mailbox provider's entry in the built-in table (builtin-providers.ts).

export interface ProviderLimits {
  /** concurrent SMTP connections per source IP */
  maxConnections: number;
  /** messages per SMTP connection before it is closed and a new one opened; null: no cap */
  maxMessagesPerConnection: number | null;
  /** token bucket rate per source IP; null: no rate limit */
  maxMessagesPerMinute: number | null;
  /** recipients per message the provider accepts; null: no documented cap */
  maxRecipientsPerMessage: number | null;
}

export interface ProviderDefinition extends ProviderLimits {
  /** lower-case id, e.g. 'google', 'microsoft365', 'outlook', 'yahoo' */
  name: string;
  /** MX host name suffixes, lower case, each beginning with '.', e.g. '.google.com' */
  mxSuffixes: string[];
  /** whether warm-up schedules apply to it (the big consumer providers: true) */
  warmup: boolean;
  /** public postmaster documentation the entry was taken from (URLs) */
  sources: string[];
}
