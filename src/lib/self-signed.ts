import { generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  BasicConstraints,
  Certificate,
  ExtendedKeyUsage,
  Extension,
  Extensions,
  GeneralName,
  id_ce_basicConstraints,
  id_ce_extKeyUsage,
  id_ce_subjectAltName,
  id_kp_serverAuth,
  Name,
  RelativeDistinguishedName,
  SubjectAlternativeName,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
} from '@peculiar/asn1-x509';

// The certificate the SMTP listeners present when they face the network and
// smtp.tls is not set (docs/security.md): without one, STARTTLS could not be
// offered and AUTH would never be (API keys are never taken in clear text
// from a non-loopback client). Self-signed, so clients that verify refuse it
// until told to trust it; better than clear text for opportunistic TLS (MX).
// Node's crypto signs but cannot write an X.509 certificate: the structure is
// @peculiar/asn1-x509's (docs/dependencies.md), the signature node:crypto's.
// The files are written by smtp/self-signed-tls.ts.

/** Where the certificate and its key live: data_dir/tls, owner-only. */
export function selfSignedFiles(dataDir: string): { key: string; cert: string } {
  return { key: join(dataDir, 'tls', 'selfsigned-key.pem'), cert: join(dataDir, 'tls', 'selfsigned-cert.pem') };
}

/** An address (a bind host, or a client's) on the loopback interface: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase();
  return a === 'localhost' || a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.');
}

/** Valid this long: it is replaced only when it runs out or stops naming outbound.hostname. */
const VALID_DAYS = 5 * 365;
/** …or when less than this is left of it. */
const RENEW_BEFORE_MS = 30 * 86_400_000;

/** Whether a certificate (PEM) made before may still be presented for `hostname`. */
export function stillServes(certPem: string | Buffer, hostname: string, now: number): boolean {
  try {
    const cert = new X509Certificate(certPem);
    return cert.checkHost(hostname) !== undefined && Date.parse(cert.validTo) - now > RENEW_BEFORE_MS;
  } catch {
    return false;
  }
}

/** A new RSA key and a certificate for `hostname` it signs itself, both PEM. */
export function makeSelfSigned(hostname: string, now: number): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    cert: certificatePem(hostname, privateKey, publicKey, now),
  };
}

/** sha256WithRSAEncryption (RFC 4055), with the NULL parameters RSA algorithm identifiers carry. */
const SHA256_WITH_RSA = new AlgorithmIdentifier({ algorithm: '1.2.840.113549.1.1.11', parameters: null });
const COMMON_NAME = '2.5.4.3';

function certificatePem(hostname: string, privateKey: KeyObject, publicKey: KeyObject, now: number): string {
  const name = new Name([
    new RelativeDistinguishedName([
      new AttributeTypeAndValue({ type: COMMON_NAME, value: new AttributeValue({ utf8String: hostname }) }),
    ]),
  ]);
  const extension = (id: string, value: unknown, critical = false) =>
    new Extension({ extnID: id, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });
  const serial = randomBytes(16);
  serial[0] &= 0x7f; // a positive INTEGER (RFC 5280 §4.1.2.2)
  const tbs = new TBSCertificate({
    version: 2, // v3
    serialNumber: new Uint8Array(serial).buffer,
    signature: SHA256_WITH_RSA,
    issuer: name,
    subject: name,
    validity: new Validity({ notBefore: new Date(now - 3_600_000), notAfter: new Date(now + VALID_DAYS * 86_400_000) }),
    subjectPublicKeyInfo: AsnConvert.parse(publicKey.export({ type: 'spki', format: 'der' }), SubjectPublicKeyInfo),
    extensions: new Extensions([
      extension(id_ce_basicConstraints, new BasicConstraints({ cA: false }), true),
      extension(id_ce_subjectAltName, new SubjectAlternativeName([new GeneralName({ dNSName: hostname })])),
      extension(id_ce_extKeyUsage, new ExtendedKeyUsage([id_kp_serverAuth])),
    ]),
  });
  const signature = sign('sha256', Buffer.from(AsnConvert.serialize(tbs)), privateKey);
  const der = Buffer.from(
    AsnConvert.serialize(
      new Certificate({
        tbsCertificate: tbs,
        signatureAlgorithm: SHA256_WITH_RSA,
        signatureValue: new Uint8Array(signature).buffer,
      }),
    ),
  );
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END CERTIFICATE-----\n`;
}
