import { thrownApiError } from '../helpers/assert.js';
import { expect } from 'chai';
import { ApiError, validationError } from '../../src/lib/errors.js';
import { SCOPES } from '../../src/modules/account/keys/scopes.js';
import type { Domain } from '../../src/modules/deliverability/domains/domains.repo.js';
import { expectedRecords } from '../../src/modules/deliverability/domains/records.js';
import type { Endpoint } from '../../src/modules/notifying/webhooks/webhooks.repo.js';
import {
  fromResendDomain,
  fromResendDomainPatch,
  pageOfAll,
  relativeName,
  resendDomainStatus,
  resendListedDomain,
  resendRecords,
} from '../../src/modules/compat/resend/resend-domains.js';
import { fromResendKey, resendListedKey } from '../../src/modules/compat/resend/resend-keys.js';
import {
  asEndpointError,
  eventsFromResend,
  fromResendWebhookPatch,
  resendListedWebhook,
  resendWebhook,
} from '../../src/modules/compat/resend/resend-webhooks.js';

// The pure translations of the Resend-compatible surface's account resources (docs/resend.md).

const NOW = Date.parse('2026-03-01T10:00:00.000Z');

const domain = (over: Partial<Domain> = {}): Domain => ({
  id: 'dom_1',
  projectId: 'prj_1',
  name: 'example.com',
  region: null,
  status: 'pending',
  failureReason: null,
  verifiedAt: null,
  lastCheckedAt: null,
  openTracking: false,
  clickTracking: true,
  listUnsubscribe: false,
  tls: 'opportunistic',
  returnPath: 'send',
  dkimToken: 'tok',
  activeSelector: 'ph1',
  dkimActivatedAt: NOW,
  checks: {},
  createdAt: NOW,
  updatedAt: NOW,
  ...over,
});

const records = () =>
  expectedRecords({
    domain: 'example.com',
    returnPath: 'send',
    token: 'tok',
    zone: 'dkim.appliance.test',
    hostname: 'mta.appliance.test',
    publicKeys: {},
  });

describe('Resend domains', function () {
  context('status', function () {
    it('is not_started for a pending domain never checked, pending once checked', function () {
      expect(resendDomainStatus({ status: 'pending', lastCheckedAt: null })).to.equal('not_started');
      expect(resendDomainStatus({ status: 'pending', lastCheckedAt: NOW })).to.equal('pending');
    });

    it('keeps verified, failed and temporary_failure, which Resend has too', function () {
      for (const s of ['verified', 'failed', 'temporary_failure'] as const)
        expect(resendDomainStatus({ status: s, lastCheckedAt: NOW })).to.equal(s);
    });
  });

  context('records', function () {
    it('names records relative to the domain, as Resend does', function () {
      expect(relativeName('ph1._domainkey.example.com', 'example.com')).to.equal('ph1._domainkey');
      expect(relativeName('example.com', 'example.com')).to.equal('@');
      expect(relativeName('other.test', 'example.com')).to.equal('other.test');
    });

    it('gives each a Resend kind, ttl "Auto" as a string, and priority only on the MX', function () {
      const out = resendRecords({ domain: domain(), records: records() });
      expect(out.map((r) => r.record)).to.deep.equal(['DKIM', 'DKIM', 'DKIM', 'SPF', 'SPF', 'DMARC']);
      expect(out.every((r) => r.ttl === 'Auto')).to.equal(true);
      expect(out[3]).to.include({ type: 'MX', name: 'send', value: 'mta.appliance.test', priority: 10 });
      expect(out[4]).to.not.have.property('priority');
    });

    it('shows each record’s last check: not_started, verified, pending, or the domain’s failure', function () {
      const checks = {
        'dkim:ph1': { dns: 'found' as const, seen: [] },
        'dkim:ph2': { dns: 'missing' as const, seen: [] },
        'dkim:ph3': { dns: 'mismatch' as const, seen: [] },
      };
      const pending = resendRecords({ domain: domain({ checks, lastCheckedAt: NOW }), records: records() });
      expect(pending.map((r) => r.status)).to.deep.equal([
        'verified',
        'pending',
        'pending',
        'not_started',
        'not_started',
        'not_started',
      ]);
      const failed = resendRecords({ domain: domain({ checks, status: 'failed' }), records: records() });
      expect(failed.slice(0, 3).map((r) => r.status)).to.deep.equal(['verified', 'failed', 'failed']);
      const lost = resendRecords({ domain: domain({ checks, status: 'temporary_failure' }), records: records() });
      expect(lost[1].status).to.equal('temporary_failure');
    });
  });

  it('lists a domain without records, with Resend’s default region when it has none', function () {
    expect(resendListedDomain(domain())).to.deep.equal({
      id: 'dom_1',
      name: 'example.com',
      status: 'not_started',
      created_at: '2026-03-01T10:00:00.000Z',
      region: 'us-east-1',
      capabilities: { sending: 'enabled', receiving: 'disabled' },
      open_tracking: false,
      click_tracking: true,
    });
    expect(resendListedDomain(domain({ region: 'eu-west-1' })).region).to.equal('eu-west-1');
  });

  context('create and update bodies', function () {
    it('pass our settings through', function () {
      expect(
        fromResendDomain({
          name: 'example.com',
          region: 'eu-west-1',
          custom_return_path: 'bounce',
          open_tracking: true,
          click_tracking: false,
          tls: 'enforced',
        }),
      ).to.deep.equal({
        name: 'example.com',
        region: 'eu-west-1',
        custom_return_path: 'bounce',
        open_tracking: true,
        click_tracking: false,
        tls: 'enforced',
      });
      expect(fromResendDomainPatch({ click_tracking: true })).to.deep.equal({
        open_tracking: undefined,
        click_tracking: true,
        tls: undefined,
      });
    });

    it('take capabilities that ask for what a domain does anyway', function () {
      expect(() =>
        fromResendDomainPatch({ capabilities: { sending: 'enabled', receiving: 'disabled' }, tracking_subdomain: '' }),
      ).to.not.throw();
    });

    for (const [body, field] of [
      [{ capabilities: { receiving: 'enabled' } }, 'capabilities.receiving'],
      [{ capabilities: { sending: 'disabled' } }, 'capabilities.sending'],
      [{ tracking_subdomain: 'links' }, 'tracking_subdomain'],
    ] as const) {
      it(`refuse ${JSON.stringify(body)} naming ${field}, on create and on update`, function () {
        for (const fn of [
          () => fromResendDomain({ name: 'example.com', ...body }),
          () => fromResendDomainPatch(body),
        ]) {
          const e = thrownApiError(fn);
          expect(e).to.include({ code: 'validation_error', field });
          expect(e.message).to.match(/not available/);
        }
      });
    }
  });
});

describe('Resend lists held in memory (pageOfAll)', function () {
  const items = ['k_5', 'k_4', 'k_3', 'k_2', 'k_1'].map((id) => ({ id }));
  const ids = (p: { data: Array<{ id: string }> }) => p.data.map((i) => i.id);
  const same = <T>(x: T) => x;

  it('gives everything without a limit, as Resend’s older lists do', function () {
    const p = pageOfAll(items, {}, same);
    expect(p).to.deep.include({ object: 'list', has_more: false });
    expect(ids(p)).to.deep.equal(['k_5', 'k_4', 'k_3', 'k_2', 'k_1']);
  });

  it('pages older with after and newer with before, saying whether more follow', function () {
    const first = pageOfAll(items, { limit: 2 }, same);
    expect([ids(first), first.has_more]).to.deep.equal([['k_5', 'k_4'], true]);
    const next = pageOfAll(items, { limit: 2, after: 'k_4' }, same);
    expect([ids(next), next.has_more]).to.deep.equal([['k_3', 'k_2'], true]);
    const last = pageOfAll(items, { limit: 2, after: 'k_2' }, same);
    expect([ids(last), last.has_more]).to.deep.equal([['k_1'], false]);
    const back = pageOfAll(items, { limit: 2, before: 'k_2' }, same);
    expect([ids(back), back.has_more]).to.deep.equal([['k_4', 'k_3'], true]);
    const top = pageOfAll(items, { limit: 2, before: 'k_3' }, same);
    expect([ids(top), top.has_more]).to.deep.equal([['k_5', 'k_4'], false]);
  });

  it('refuses after and before together', function () {
    expect(thrownApiError(() => pageOfAll(items, { after: 'k_2', before: 'k_4' }, same))).to.include({
      code: 'validation_error',
      field: 'before',
    });
  });
});

describe('Resend API keys', function () {
  it('full_access (the default) holds every scope and is not restricted by domain_id, as Resend documents', function () {
    expect(fromResendKey({ name: 'Admin' })).to.deep.equal({ name: 'Admin', scopes: SCOPES, domainId: null });
    expect(fromResendKey({ name: 'Admin', permission: 'full_access', domain_id: 'dom_1' }).domainId).to.equal(null);
  });

  it('sending_access holds emails:send only, restricted to domain_id when given', function () {
    expect(fromResendKey({ name: 'Prod', permission: 'sending_access', domain_id: 'dom_1' })).to.deep.equal({
      name: 'Prod',
      scopes: ['emails:send'],
      domainId: 'dom_1',
    });
    // none given: the creating key's, as on /v1
    expect(fromResendKey({ name: 'Prod', permission: 'sending_access' }).domainId).to.equal(undefined);
  });

  it('lists a key with id, name, created_at and last_used_at only', function () {
    expect(
      resendListedKey({
        id: 'key_1',
        projectId: 'prj_1',
        name: 'Production',
        mode: 'live',
        scopes: ['emails:send'],
        prefix: 'ph_live_',
        createdAt: NOW,
        lastUsedAt: null,
        revokedAt: null,
        domainId: null,
        domainName: null,
      }),
    ).to.deep.equal({ id: 'key_1', name: 'Production', created_at: '2026-03-01T10:00:00.000Z', last_used_at: null });
  });
});

describe('Resend webhooks', function () {
  it('takes Resend’s event names that are ours, each once, and our own extra ones', function () {
    expect(eventsFromResend(['email.sent', 'email.delivered', 'email.sent', 'contact.created'])).to.deep.equal([
      'email.sent',
      'email.delivered',
      'contact.created',
    ]);
    expect(eventsFromResend(['email.unsubscribed'])).to.deep.equal(['email.unsubscribed']);
  });

  it('refuses one of Resend’s it does not emit as not available, and an unknown one, naming events[i]', function () {
    const lacking = thrownApiError(() => eventsFromResend(['email.sent', 'contact.topics.updated']));
    expect(lacking).to.include({ code: 'validation_error', field: 'events[1]' });
    expect(lacking.message).to.match(/not available/);
    const unknown = thrownApiError(() => eventsFromResend(['email.nope']));
    expect(unknown).to.include({ field: 'events[0]' });
    expect(unknown.message).to.match(/unknown event type/);
  });

  it('maps the update: endpoint to url, status to active', function () {
    expect(fromResendWebhookPatch({ status: 'disabled' })).to.deep.equal({
      url: undefined,
      events: undefined,
      active: false,
    });
    expect(
      fromResendWebhookPatch({ endpoint: 'https://x.test/h', status: 'enabled', events: ['email.opened'] }),
    ).to.deep.equal({
      url: 'https://x.test/h',
      events: ['email.opened'],
      active: true,
    });
  });

  it('shows a webhook as Resend does: the secret on get only', function () {
    const e: Endpoint = {
      id: 'whe_1',
      projectId: 'prj_1',
      url: 'https://x.test/h',
      description: null,
      events: ['email.sent'],
      active: false,
      secret: 'whsec_abc=',
      previousSecret: null,
      previousSecretUntil: null,
      signatureFormat: 'standard',
      payloadFormat: 'resend',
      createdAt: NOW,
      updatedAt: NOW,
    };
    const listed = {
      id: 'whe_1',
      endpoint: 'https://x.test/h',
      created_at: '2026-03-01T10:00:00.000Z',
      status: 'disabled',
      events: ['email.sent'],
    };
    expect(resendListedWebhook(e)).to.deep.equal(listed);
    expect(resendWebhook(e)).to.deep.equal({ object: 'webhook', ...listed, signing_secret: 'whsec_abc=' });
  });

  it('names a refused URL by Resend’s field, endpoint; other errors pass as they are', function () {
    const renamed = asEndpointError(validationError('url', 'must be https')) as ApiError;
    expect(renamed).to.include({ field: 'endpoint', message: 'endpoint: must be https' });
    const other = validationError('events', 'x');
    expect(asEndpointError(other)).to.equal(other);
  });
});
