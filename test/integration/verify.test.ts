import { expect } from 'chai';
import { setProject } from '../../src/modules/account/projects/projects.service.js';
import { expectError } from '../helpers/assert.js';
import { eachDatabase } from '../helpers/databases.js';
import { startTestApi, type TestApi, type Tenant } from '../helpers/api.js';
import { startDnsWorld, type DnsWorld } from '../helpers/dns-world.js';

// interface §4.4 and §2.6, CONTRACT §5: address verification against a DNS server on loopback
eachDatabase('address verification (issue 22)', (db) => {
  let world: DnsWorld;
  let api: TestApi;
  let t: Tenant;

  before(async function () {
    world = await startDnsWorld();
    world.add('ok.test', 'MX', { exchange: 'mx2.ok.test', priority: 20 });
    world.add('ok.test', 'MX', { exchange: 'mx1.ok.test', priority: 10 });
    world.add('aonly.test', 'A', '192.0.2.10');
    world.add('nullmx.test', 'MX', { exchange: '.', priority: 0 });
    world.add('nothing.test', 'TXT', 'v=spf1 -all');
    world.add('xn--mnchen-3ya.test', 'MX', { exchange: 'mx.xn--mnchen-3ya.test', priority: 10 });
    for (const d of ['mailinator.com', 'gmail.com', 'gmx.com', 'hotmial.com', 'acme.co'])
      world.add(d, 'MX', { exchange: `mx.${d}`, priority: 5 });
    // a null MX sent twice, and MX records naming an IP address: both with an A record that must not be used
    world.add('twonull.test', 'MX', { exchange: '.', priority: 0 });
    world.add('twonull.test', 'MX', { exchange: '.', priority: 10 });
    world.add('twonull.test', 'A', '192.0.2.30');
    world.add('ipmx.test', 'MX', { exchange: '192.0.2.5', priority: 10 });
    world.add('ipmx.test', 'A', '192.0.2.31');
    // a CNAME loop: the test DNS answers SERVFAIL
    world.add('loop.test', 'CNAME', 'loop.test');
    api = await startTestApi(db().store, { dns: { resolvers: [world.address] }, verify: { dns_timeout_ms: 400 } });
    t = await api.tenant({ scopes: ['emails:verify'] });
  });
  after(async function () {
    await api.stop();
    await world.stop();
  });

  const batch = async (emails: unknown[]) => {
    const r = await t.api.post('/v1/verify/batch', { emails });
    expect(r.status, r.text).to.equal(200);
    return r.body as {
      object: string;
      data: Array<Record<string, any>>;
      summary: Record<string, number>;
      verifications: { used: number; limit: number };
    };
  };
  const one = async (email: string) => (await batch([email])).data[0];

  it('answers in the order sent, with a summary and the month’s verifications used', async function () {
    const emails = ['not an address', 'someone@ok.test', 'postmaster@ok.test', 'x@nullmx.test'];
    const r = await batch(emails);
    expect(r.object).to.equal('list');
    expect(r.data.map((v) => v.email)).to.deep.equal(emails);
    expect(r.data.map((v) => v.result)).to.deep.equal(['invalid', 'valid', 'risky', 'invalid']);
    expect(r.summary).to.deep.equal({ valid: 1, invalid: 2, risky: 1, unknown: 0 });
    expect(r.data[1]).to.deep.equal({
      object: 'email_verification',
      email: 'someone@ok.test',
      result: 'valid',
      reasons: [],
      suggestion: null,
      free_provider: false,
      role_account: false,
      disposable: false,
      mail_servers: ['mx1.ok.test', 'mx2.ok.test'],
    });
    expect(r.verifications.limit).to.equal(0);
    const again = await batch(['a@ok.test']);
    expect(again.verifications.used).to.equal(r.verifications.used + 1);
  });

  it('takes 100 addresses on 100 domains, refuses 101, an empty list and unknown fields, naming the field', async function () {
    const hundred = Array.from({ length: 100 }, (_, i) => `user${i}@d${i}.ok.test`);
    for (let i = 0; i < 100; i++) world.add(`d${i}.ok.test`, 'A', '192.0.2.20');
    const r = await batch(hundred);
    expect(r.data).to.have.length(100);
    expect(r.data.every((v, i) => v.email === hundred[i] && v.result === 'valid')).to.equal(true);
    expectError(
      await t.api.post('/v1/verify/batch', { emails: [...hundred, 'one@more.test'] }),
      400,
      'validation_error',
      'emails',
    );
    expectError(await t.api.post('/v1/verify/batch', { emails: [] }), 400, 'validation_error', 'emails');
    expectError(
      await t.api.post('/v1/verify/batch', { emails: ['a@ok.test'], fast: true }),
      400,
      'validation_error',
      'fast',
    );
    expectError(await t.api.post('/v1/verify/batch', {}), 400, 'validation_error', 'emails');
  });

  it('reads DNS as a sending MTA would: MX by preference, A without MX, null MX, NXDOMAIN, no records, IDN', async function () {
    expect(await one('a@aonly.test'))
      .to.include({ result: 'valid' })
      .and.to.have.deep.property('mail_servers', ['aonly.test']);
    for (const email of ['a@nullmx.test', 'a@nxdomain.test', 'a@nothing.test']) {
      const v = await one(email);
      expect(v, email).to.include({ result: 'invalid' });
      expect(v.reasons, email).to.deep.equal(['no_mail_server']);
      expect(v.mail_servers, email).to.deep.equal([]);
    }
    expect(await one('kurt@münchen.test'))
      .to.include({ result: 'valid', email: 'kurt@münchen.test' })
      .and.to.have.deep.property('mail_servers', ['mx.xn--mnchen-3ya.test']);
  });

  it('takes a null MX sent twice, or MX records naming only IP addresses, as no mail server, without trying the A record', async function () {
    for (const email of ['a@twonull.test', 'a@ipmx.test']) {
      const v = await one(email);
      expect(v, email).to.include({ result: 'invalid' });
      expect(v.reasons, email).to.deep.equal(['no_mail_server']);
      expect(v.mail_servers, email).to.deep.equal([]);
    }
  });

  it('a DNS error (SERVFAIL) is unknown with dns_error, not invalid', async function () {
    const v = await one('a@loop.test');
    expect(v).to.include({ result: 'unknown', suggestion: null });
    expect(v.reasons).to.deep.equal(['dns_error']);
  });

  it('a domain whose DNS does not answer in time is unknown, and is asked again next time', async function () {
    const held = world.hold('slow.test');
    const v = await one('a@slow.test');
    expect(v).to.include({ result: 'unknown' });
    expect(v.reasons).to.deep.equal(['dns_timeout']);
    held.release();
    world.add('slow.test', 'MX', { exchange: 'mx.slow.test', priority: 10 });
    expect(await one('b@slow.test')).to.include({ result: 'valid' });
  });

  it('what the lists know outranks what DNS did not say: a disposable or role address is risky even when DNS times out', async function () {
    const held = [world.hold('eu.mailinator.com'), world.hold('slow2.test')];
    const r = await batch(['x@eu.mailinator.com', 'postmaster@slow2.test', 'jane@slow2.test']);
    expect(r.data.map((v) => [v.result, v.reasons])).to.deep.equal([
      ['risky', ['disposable', 'dns_timeout']],
      ['risky', ['role_account', 'dns_timeout']],
      ['unknown', ['dns_timeout']],
    ]);
    for (const h of held) h.release();
  });

  it('flags disposable domains, role accounts and free providers; disposable and role are risky', async function () {
    expect(await one('temp@mailinator.com'))
      .to.include({ result: 'risky', disposable: true })
      .and.to.have.deep.property('reasons', ['disposable']);
    const role = await one('Sales+eu@ok.test');
    expect(role).to.include({ result: 'risky', role_account: true });
    expect(role.reasons).to.deep.equal(['role_account']);
    expect(await one('jane@gmail.com')).to.include({ result: 'valid', free_provider: true });
    expect(await one('jane@ok.test')).to.include({ free_provider: false, role_account: false, disposable: false });
  });

  it('suggests the whole corrected address for a likely typo, not for a real domain with its own mail servers', async function () {
    const typo = await one('jane@gmial.com');
    expect(typo).to.include({ result: 'invalid', suggestion: 'jane@gmail.com' });
    expect((await one('jane@gmail.con')).suggestion).to.equal('jane@gmail.com');
    // a known typo that someone registered, with MX records of its own
    expect((await one('jane@hotmial.com')).suggestion).to.equal('jane@hotmail.com');
    expect((await one('jane@gmx.com')).suggestion).to.equal(null);
    // the same typo of a TLD: corrected where the domain takes no mail, taken as meant where it has MX records
    expect((await one('jane@shop.co')).suggestion).to.equal('jane@shop.com');
    expect((await one('jane@acme.co')).suggestion).to.equal(null);
    expect((await one('jane@ok.test')).suggestion).to.equal(null);
  });

  it('answers every string: bad syntax, control characters and the empty string are invalid_syntax, not a refused request', async function () {
    const bad = [
      '',
      ' a@ok.test',
      'a@ok.test\r\nBcc: x@y.test',
      'a\u0000@ok.test',
      'a@[192.0.2.1]',
      '(c)a@ok.test',
      'a..b@ok.test',
      'a@localhost',
      `${'x'.repeat(65)}@ok.test`,
    ];
    const r = await batch(bad);
    for (const v of r.data) {
      expect(v.result, JSON.stringify(v.email)).to.equal('invalid');
      expect(v.reasons, JSON.stringify(v.email)).to.deep.equal(['invalid_syntax']);
    }
    expect(r.data.map((v) => v.email)).to.deep.equal(bad);
    // however long: a string is answered, not refused, and quickly
    for (const long of [
      `${'a'.repeat(5000)}@ok.test`,
      `"${'a'.repeat(3_000_000)}"@ok.test`,
      `a@${'é'.repeat(3_000_000)}.test`,
    ]) {
      expect((await one(long)).reasons).to.deep.equal(['invalid_syntax']);
    }
    expectError(
      await t.api.post('/v1/verify/batch', { emails: ['a@ok.test', 42] }),
      400,
      'validation_error',
      'emails[1]',
    );
  });

  it('POST /v1/verify checks one address with the same quota', async function () {
    const r = await t.api.post('/v1/verify', { email: 'someone@ok.test' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ object: 'email_verification', email: 'someone@ok.test', result: 'valid' });
    expectError(await t.api.post('/v1/verify', { emails: ['a@ok.test'] }), 400, 'validation_error');
    const q = await api.tenant({ scopes: ['emails:verify'] });
    expect((await q.api.post('/v1/verify', { email: 'a@ok.test' })).status).to.equal(200);
    expect((await q.api.post('/v1/verify/batch', { emails: ['b@ok.test'] })).body.verifications.used).to.equal(2);
  });

  it('refuses a batch the month’s remaining verifications cannot cover with 429 quota_exhausted, consuming nothing', async function () {
    const q = await api.tenant({ scopes: ['emails:verify'] });
    await setProject(api.deps, q.project.id, { limits: { verifications: 5 } });
    const first = await q.api.post('/v1/verify/batch', { emails: ['a@ok.test', 'b@ok.test', 'c@ok.test'] });
    expect(first.body.verifications).to.deep.equal({ used: 3, limit: 5 });
    expectError(
      await q.api.post('/v1/verify/batch', { emails: ['d@ok.test', 'e@ok.test', 'f@ok.test'] }),
      429,
      'quota_exhausted',
    );
    const rest = await q.api.post('/v1/verify/batch', { emails: ['d@ok.test', 'e@ok.test'] });
    expect(rest.status, rest.text).to.equal(200);
    expect(rest.body.verifications).to.deep.equal({ used: 5, limit: 5 });
    expectError(await q.api.post('/v1/verify', { email: 'g@ok.test' }), 429, 'quota_exhausted');
  });

  it('batches at once share the month exactly: of 12 batches of 10 against 50, five are answered and 50 are used', async function () {
    const q = await api.tenant({ scopes: ['emails:verify'] });
    await setProject(api.deps, q.project.id, { limits: { verifications: 50 } });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, b) =>
        q.api.post('/v1/verify/batch', { emails: Array.from({ length: 10 }, (__, i) => `u${b}-${i}@ok.test`) }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).to.have.length(5);
    expect(answers.filter((a) => a.status === 429).every((a) => a.body.error.code === 'quota_exhausted')).to.equal(
      true,
    );
    expect(
      answers
        .map((a) => a.body.verifications?.used)
        .filter(Boolean)
        .sort((x: number, y: number) => x - y),
    ).to.deep.equal([10, 20, 30, 40, 50]);
    expectError(await q.api.post('/v1/verify', { email: 'last@ok.test' }), 429, 'quota_exhausted');
  });

  it('needs the emails:verify scope; another scope is 403', async function () {
    const sender = await t.newKey({ scopes: ['emails:send'] });
    expectError(await sender.api.post('/v1/verify/batch', { emails: ['a@ok.test'] }), 403, 'forbidden');
    expectError(await api.anonymous.post('/v1/verify/batch', { emails: ['a@ok.test'] }), 401, 'unauthorized');
  });
});
