// How an endpoint's deliveries are signed and shaped (docs/webhooks.md, "Formats"). Each endpoint
// picks one of each; both default to the service's own, so endpoints made before the choice
// existed keep receiving exactly what they did.

/**
 * `service`: the `Service-Signature` header (t= and v1= hex HMACs keyed with the whole secret
 * string). `standard`: Standard Webhooks (standardwebhooks.com): `webhook-id`,
 * `webhook-timestamp`, `webhook-signature` (v1, base64 HMACs keyed with the secret's decoded bytes).
 */
export const SIGNATURE_FORMATS = ['service', 'standard'] as const;
export type SignatureFormat = (typeof SIGNATURE_FORMATS)[number];

/** `service`: the event as the service defines it. `resend`: Resend's webhook event body (resend-payload.ts). */
export const PAYLOAD_FORMATS = ['service', 'resend'] as const;
export type PayloadFormat = (typeof PAYLOAD_FORMATS)[number];

export const DEFAULT_SIGNATURE_FORMAT: SignatureFormat = 'service';
export const DEFAULT_PAYLOAD_FORMAT: PayloadFormat = 'service';

/**
 * What an endpoint made through a Resend-compatible surface gets: deliveries that Resend's SDK
 * (`resend.webhooks.verify`, itself the `standardwebhooks` package) verifies and whose bodies it
 * types, with the same `whsec_…` secret the service shows for every endpoint.
 */
export const RESEND_COMPATIBLE = { signature: 'standard', payload: 'resend' } as const satisfies {
  signature: SignatureFormat;
  payload: PayloadFormat;
};

/** A stored value read back: one of the list, else the default (a value no release wrote). */
export function signatureFormatOf(v: string | null | undefined): SignatureFormat {
  return SIGNATURE_FORMATS.find((f) => f === v) ?? DEFAULT_SIGNATURE_FORMAT;
}

export function payloadFormatOf(v: string | null | undefined): PayloadFormat {
  return PAYLOAD_FORMATS.find((f) => f === v) ?? DEFAULT_PAYLOAD_FORMAT;
}
