import { signIdToken, verifyIdToken, type IdTokenKind } from '../../../lib/id-token.js';

// The token of a recipient's unsubscribe links (docs/unsubscribe.md). Pure.
//
// It goes into an email address's local part (mailto:unsubscribe+<token>@…), which RFC 5321 caps
// at 64 octets: 47 characters, the recipient id's 26 and 20 hex digits of the HMAC (80 bits).

const KIND: IdTokenKind = { purpose: 'unsubscribe', prefix: 'rcp', digits: 20 };

export const signUnsubscribeToken = (key: Buffer, recipientId: string) => signIdToken(key, KIND, recipientId);

/** The recipient id (`rcp_…`) a token names, or null when it was not made with this key. */
export const verifyUnsubscribeToken = (key: Buffer, token: string) => verifyIdToken(key, KIND, token);
