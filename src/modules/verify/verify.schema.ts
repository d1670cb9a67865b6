import { Type, type Static } from '@sinclair/typebox';

// Any string is an address to check: one that is not an address is answered `invalid`, not refused.
// The length cap only bounds the work: nothing over 254 octets is a mailbox (RFC 5321).
const Address = Type.String({ maxLength: 1000, description: 'the address to check' });

/** interface §4.4 */
export const VerifyBatchBody = Type.Object(
  { emails: Type.Array(Address, { minItems: 1, maxItems: 100, description: '1 to 100 addresses; one verification each' }) },
  { additionalProperties: false },
);
export type VerifyBatchBody = Static<typeof VerifyBatchBody>;

/** CONTRACT §5: one address */
export const VerifyOneBody = Type.Object({ email: Address }, { additionalProperties: false });
export type VerifyOneBody = Static<typeof VerifyOneBody>;
