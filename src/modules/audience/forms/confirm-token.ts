import { signIdToken, verifyIdToken, type IdTokenKind } from '../../../lib/id-token.js';

// The token of a signup's confirmation link (`/f/<form>/confirm/<token>`, docs/forms.md). Pure.
//
// The submission id and 32 hex digits of the HMAC (128 bits). The submission's row says when it
// was made: the link works for CONFIRM_WINDOW_MS.

const KIND: IdTokenKind = { purpose: 'form-confirm', prefix: 'fsb', digits: 32 };

/** How long a confirmation link works, and how long a pending contact waits for it. */
export const CONFIRM_WINDOW_MS = 7 * 86_400_000;

export const signConfirmToken = (key: Buffer, submissionId: string) => signIdToken(key, KIND, submissionId);

/** The submission id (`fsb_…`) a token names, or null when it was not made with this key. */
export const verifyConfirmToken = (key: Buffer, token: string) => verifyIdToken(key, KIND, token);

export const confirmUrl = (publicUrl: string, formId: string, token: string) =>
  `${publicUrl.replace(/\/+$/, '')}/f/${formId}/confirm/${token}`;
