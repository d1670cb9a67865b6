import { Type, type Static } from '@sinclair/typebox';

// Any string is an address to check: one that is not an address, however long, is answered
// `invalid`, not refused (the body size limit bounds the work; the checks are linear in its length).
const Address = Type.String({ description: 'the address to check' });

/** interface §4.4 */
export const VerifyBatchBody = Type.Object(
  {
    emails: Type.Array(Address, {
      minItems: 1,
      maxItems: 100,
      description: '1 to 100 addresses; one verification each',
    }),
  },
  { additionalProperties: false },
);
export type VerifyBatchBody = Static<typeof VerifyBatchBody>;

/** CONTRACT §5: one address */
export const VerifyOneBody = Type.Object({ email: Address }, { additionalProperties: false });
export type VerifyOneBody = Static<typeof VerifyOneBody>;
