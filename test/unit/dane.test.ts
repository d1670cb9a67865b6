import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  daneRequiresTls,
  daneUsable,
  daneVerify,
  parseTlsaRdata,
  tlsaToString,
  type PeerCert,
  type Tlsa,
} from '../../src/mta/tls-policy/dane.js';

// real certificates, made by openssl in a temp dir: two CAs, an intermediate under the first, and
// leaves for mx.example.test (one expired, one self-signed)
const CA_CONFIG = `[ca]
default_ca = d
[d]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = p
unique_subject = no
[p]
commonName = supplied
[leaf]
subjectAltName = DNS:mx.example.test
basicConstraints = CA:FALSE
[inter]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
`;

describe('DANE for SMTP (RFC 7672)', function () {
  let dir = '';
  const certs: Record<string, X509Certificate> = {};

  // openssl with a command line split on spaces (no argument here contains one but the subjects,
  // passed separately)
  function openssl(line: string, ...more: string[]): void {
    execFileSync('openssl', [...line.split(' '), ...more], { cwd: dir, stdio: 'pipe' });
  }
  const newKey = '-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes';
  function selfSigned(name: string, cn: string, ext: string[]): void {
    const addext = ext.flatMap((e) => ['-addext', e]);
    openssl(`req -x509 ${newKey} -keyout ${name}.key -out ${name}.pem -days 30`, '-subj', `/CN=${cn}`, ...addext);
  }
  function issue(name: string, cn: string, ca: string, section: string, dates = '-days 30'): void {
    openssl(`req -new ${newKey} -keyout ${name}.key -out ${name}.csr`, '-subj', `/CN=${cn}`);
    const signer = `-cert ${ca}.pem -keyfile ${ca}.key -extensions ${section}`;
    openssl(`ca -batch -notext -config ca.cnf ${signer} ${dates} -in ${name}.csr -out ${name}.pem`);
  }

  before(function () {
    this.timeout(60000);
    dir = mkdtempSync(join(tmpdir(), 'posthorn-dane-'));
    writeFileSync(join(dir, 'ca.cnf'), CA_CONFIG);
    writeFileSync(join(dir, 'index.txt'), '');
    writeFileSync(join(dir, 'serial'), '1000\n');
    const caExt = ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign'];
    selfSigned('ca', 'Test Root CA', caExt);
    selfSigned('ca2', 'Other CA', caExt);
    selfSigned('self', 'mx.example.test', ['subjectAltName=DNS:mx.example.test']);
    issue('leaf', 'mx.example.test', 'ca', 'leaf');
    issue('leaf2', 'mx.example.test', 'ca2', 'leaf');
    issue('inter', 'Test Intermediate', 'ca', 'inter');
    issue('leafi', 'mx.example.test', 'inter', 'leaf');
    issue('expired', 'mx.example.test', 'ca', 'leaf', '-startdate 20200101000000Z -enddate 20200201000000Z');
    // an impostor CA with the real one's name and key identifier but its own key (so that only the
    // signature tells them apart), and a leaf signed by a certificate that is not a CA
    const skid = execFileSync('openssl', ['x509', '-in', 'ca.pem', '-noout', '-ext', 'subjectKeyIdentifier'], {
      cwd: dir,
    })
      .toString()
      .split('\n')[1]
      .trim();
    selfSigned('fakeca', 'Test Root CA', [...caExt, `subjectKeyIdentifier=${skid}`]);
    issue('forged', 'mx.example.test', 'fakeca', 'leaf');
    issue('byleaf', 'mx.example.test', 'leaf', 'leaf');
    for (const n of ['ca', 'ca2', 'self', 'leaf', 'leaf2', 'inter', 'leafi', 'expired', 'forged', 'byleaf']) {
      certs[n] = new X509Certificate(readFileSync(join(dir, `${n}.pem`)));
    }
  });

  after(function () {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const chain = (...names: string[]): PeerCert[] => names.map((n) => ({ raw: certs[n].raw }));
  const spki = (n: string): Buffer => certs[n].publicKey.export({ type: 'spki', format: 'der' });
  const sha = (alg: 'sha256' | 'sha512', b: Buffer): Buffer => createHash(alg).update(b).digest();
  /** a TLSA record for certificate n: usage, selector, matching type as in "3 1 1" */
  function tlsa(n: string, usage: number, selector: number, matchingType: number): Tlsa {
    const content = selector === 0 ? certs[n].raw : spki(n);
    const data = matchingType === 0 ? content : sha(matchingType === 1 ? 'sha256' : 'sha512', content);
    return { usage, selector, matchingType, data };
  }

  describe('DANE-EE(3): the leaf itself, no name or date checks (§3.1.1)', function () {
    for (const [s, m] of [
      [1, 1],
      [0, 1],
      [1, 2],
      [1, 0],
      [0, 0],
      [0, 2],
    ] as const) {
      it(`3 ${s} ${m} matches the self-signed leaf`, function () {
        const r = daneVerify([tlsa('self', 3, s, m)], chain('self'), 'mx.example.test');
        expect(r).to.deep.include({ ok: true });
      });
    }
    it('3 1 1 of another key does not match', function () {
      const r = daneVerify([tlsa('leaf2', 3, 1, 1)], chain('self'), 'mx.example.test');
      expect(r).to.deep.include({ ok: false });
    });
    it('matches the leaf only, not a certificate above it', function () {
      expect(daneVerify([tlsa('ca', 3, 1, 1)], chain('leaf', 'ca'), 'mx.example.test')).to.deep.include({ ok: false });
    });
    it('ignores the host name', function () {
      expect(daneVerify([tlsa('self', 3, 1, 1)], chain('self'), 'other.example.test')).to.deep.include({ ok: true });
    });
    it('ignores an expired certificate', function () {
      expect(daneVerify([tlsa('expired', 3, 1, 1)], chain('expired', 'ca'), 'mx.example.test')).to.deep.include({
        ok: true,
      });
    });
    it('any one matching record authenticates, and is the one returned', function () {
      const good = tlsa('self', 3, 1, 1);
      const r = daneVerify([tlsa('leaf2', 3, 1, 1), good], chain('self'), 'mx.example.test');
      expect(r).to.deep.equal({ ok: true, matched: good });
    });
    it('uses a given SubjectPublicKeyInfo when there is no certificate (raw public key)', function () {
      const r = daneVerify([tlsa('self', 3, 1, 1)], [{ raw: Buffer.alloc(0), publicKeyDer: spki('self') }], 'mx');
      expect(r).to.deep.include({ ok: true });
    });
  });

  describe('DANE-TA(2): chain to the anchor, then name checks (§3.1.2, §3.2)', function () {
    it('2 0 1 on the CA, leaf issued by it → ok', function () {
      expect(daneVerify([tlsa('ca', 2, 0, 1)], chain('leaf', 'ca'), 'mx.example.test')).to.deep.include({ ok: true });
    });
    it('2 1 1 on the CA → ok', function () {
      expect(daneVerify([tlsa('ca', 2, 1, 1)], chain('leaf', 'ca'), 'mx.example.test')).to.deep.include({ ok: true });
    });
    it('a leaf from another CA, the anchor sent alongside → fails', function () {
      const r = daneVerify([tlsa('ca', 2, 0, 1)], chain('leaf2', 'ca'), 'mx.example.test');
      expect(r.ok).to.equal(false);
      expect(r).to.have.property('reason').that.matches(/chain/);
    });
    it("a leaf signed by another key under the CA's name → fails (the signature is checked)", function () {
      expect(certs.forged.issuer).to.equal(certs.ca.subject);
      const r = daneVerify([tlsa('ca', 2, 0, 1)], chain('forged', 'ca'), 'mx.example.test');
      expect(r).to.deep.include({ ok: false });
    });
    it('a certificate that is not a CA cannot be the trust anchor', function () {
      const r = daneVerify([tlsa('leaf', 2, 0, 1)], chain('byleaf', 'leaf'), 'mx.example.test');
      expect(r).to.deep.include({ ok: false });
    });
    it('a leaf from another CA with its own chain → fails', function () {
      expect(daneVerify([tlsa('ca', 2, 0, 1)], chain('leaf2', 'ca2'), 'mx.example.test')).to.deep.include({
        ok: false,
      });
    });
    it('a wrong host name → fails', function () {
      const r = daneVerify([tlsa('ca', 2, 0, 1)], chain('leaf', 'ca'), 'other.example.test');
      expect(r.ok).to.equal(false);
      expect(r)
        .to.have.property('reason')
        .that.matches(/other\.example\.test/);
    });
    it('the host name may be given with a trailing dot, in any case', function () {
      expect(daneVerify([tlsa('ca', 2, 0, 1)], chain('leaf', 'ca'), 'MX.Example.Test.')).to.deep.include({ ok: true });
    });
    it('another reference identifier (the TLSA base domain) may match instead (§3.2.2)', function () {
      const r = daneVerify([tlsa('ca', 2, 0, 1)], chain('leaf', 'ca'), 'alias.example.test', {
        referenceNames: ['mx.example.test'],
      });
      expect(r).to.deep.include({ ok: true });
    });
    it('the anchor must be presented: the leaf alone fails (§3.1.2)', function () {
      expect(daneVerify([tlsa('ca', 2, 0, 1)], chain('leaf'), 'mx.example.test')).to.deep.include({ ok: false });
    });
    it('a leaf matched as its own trust anchor does not count', function () {
      expect(daneVerify([tlsa('self', 2, 0, 1)], chain('self'), 'mx.example.test')).to.deep.include({ ok: false });
    });
    it('an expired leaf fails under DANE-TA', function () {
      const r = daneVerify([tlsa('ca', 2, 0, 1)], chain('expired', 'ca'), 'mx.example.test');
      expect(r.ok).to.equal(false);
      expect(r)
        .to.have.property('reason')
        .that.matches(/expired/);
    });
    it('checks dates against the given time', function () {
      const later = new Date(Date.now() + 365 * 86400 * 1000);
      expect(daneVerify([tlsa('ca', 2, 0, 1)], chain('leaf', 'ca'), 'mx.example.test', { now: later }).ok).to.equal(
        false,
      );
    });
    it('through an intermediate, to the root → ok, whatever order the chain comes in', function () {
      const ta = [tlsa('ca', 2, 0, 1)];
      expect(daneVerify(ta, chain('leafi', 'inter', 'ca'), 'mx.example.test')).to.deep.include({ ok: true });
      expect(daneVerify(ta, chain('leafi', 'ca', 'inter'), 'mx.example.test')).to.deep.include({ ok: true });
    });
    it('the intermediate as the trust anchor → ok', function () {
      expect(daneVerify([tlsa('inter', 2, 1, 2)], chain('leafi', 'inter'), 'mx.example.test')).to.deep.include({
        ok: true,
      });
    });
    it('a missing intermediate breaks the chain', function () {
      expect(daneVerify([tlsa('ca', 2, 0, 1)], chain('leafi', 'ca'), 'mx.example.test')).to.deep.include({ ok: false });
    });
  });

  describe('usable records (§3.1.3, RFC 7671 §9)', function () {
    it('ignores PKIX-TA(0) and PKIX-EE(1), though TLS stays mandatory (§2.2)', function () {
      const records = [tlsa('self', 1, 1, 1), tlsa('ca', 0, 0, 1)];
      expect(daneUsable(records)).to.deep.equal([]);
      expect(daneRequiresTls(records)).to.equal(true);
      expect(daneVerify(records, chain('self'), 'mx.example.test')).to.deep.equal({
        ok: false,
        reason: 'no usable TLSA records',
      });
    });
    it('no records: TLS is not required by DANE', function () {
      expect(daneRequiresTls([])).to.equal(false);
    });
    it('drops unknown selectors and matching types, and digests of the wrong length', function () {
      const good = tlsa('self', 3, 1, 1);
      const records: Tlsa[] = [
        { ...good, selector: 2 },
        { ...good, matchingType: 3 },
        { ...good, usage: 4 },
        { ...good, data: good.data.subarray(0, 31) },
        { ...tlsa('self', 3, 1, 2), data: good.data },
        { ...good, matchingType: 0, data: Buffer.alloc(0) },
        good,
      ];
      expect(daneUsable(records)).to.deep.equal([good]);
    });
    it('uses only the strongest digest per usage and selector; Full(0) always counts', function () {
      const s256 = tlsa('self', 3, 1, 1);
      const s512 = tlsa('leaf2', 3, 1, 2);
      const full = tlsa('self', 3, 1, 0);
      const certSha256 = tlsa('self', 3, 0, 1);
      expect(daneUsable([s256, s512, full, certSha256])).to.deep.equal([s512, full, certSha256]);
      // the SHA2-256 record matching the key no longer authenticates once a SHA2-512 one is published
      expect(daneVerify([s256, s512], chain('self'), 'mx.example.test').ok).to.equal(false);
      expect(daneVerify([s256, s512, full], chain('self'), 'mx.example.test').ok).to.equal(true);
    });
  });

  describe('parseTlsaRdata (RFC 6698 §2.1)', function () {
    it('reads usage, selector, matching type and data', function () {
      const data = Buffer.alloc(32, 0xab);
      const t = parseTlsaRdata(Buffer.concat([Buffer.from([3, 1, 1]), data]));
      expect(t).to.deep.equal({ usage: 3, selector: 1, matchingType: 1, data });
    });
    it('rejects RDATA without association data', function () {
      expect(parseTlsaRdata(Buffer.from([3, 1, 1]))).to.equal(null);
      expect(parseTlsaRdata(Buffer.alloc(0))).to.equal(null);
    });
    it('prints the presentation format (RFC 8460 §4.5)', function () {
      expect(tlsaToString({ usage: 3, selector: 1, matchingType: 1, data: Buffer.from([0x1f, 0x85]) })).to.equal(
        '3 1 1 1F85',
      );
    });
  });
});
