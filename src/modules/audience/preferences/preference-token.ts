import { signIdToken, verifyIdToken, type IdTokenKind } from '../../../lib/id-token.js';

// The token of a contact's preference page link (`/p/<token>`, docs/contacts.md). Pure.
//
// The contact id and 20 hex digits of the HMAC (80 bits): a preference link names the person
// (the contact), not one email, and stays valid for as long as the contact exists.

const KIND: IdTokenKind = { purpose: 'preferences', prefix: 'con', digits: 20 };

export const signPreferenceToken = (key: Buffer, contactId: string) => signIdToken(key, KIND, contactId);

/** The contact id (`con_…`) a token names, or null when it was not made with this key. */
export const verifyPreferenceToken = (key: Buffer, token: string) => verifyIdToken(key, KIND, token);

/** The page's address under http.public_url. */
export const preferencesUrl = (publicUrl: string, token: string) => `${publicUrl.replace(/\/+$/, '')}/p/${token}`;
