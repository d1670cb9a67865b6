import { expect } from 'chai';
import { ApiError } from '../../src/lib/errors.js';
import {
  planAccept,
  type AcceptFacts,
  type AcceptRequest,
  type Accepted,
} from '../../src/modules/sending/emails/accept-rules.js';
import { answerKey } from '../../src/modules/sending/emails/idempotency.js';
import { prepareEmail } from '../../src/modules/sending/emails/prepare.js';
import type { Project } from '../../src/modules/account/projects/projects.repo.js';
import { periodsOf } from '../../src/modules/account/projects/periods.js';
import { suppressionKey } from '../../src/modules/sending/suppressions/suppression.js';

const NOW = Date.parse('2026-11-25T10:00:00Z');
const SIM = 'simulator.posthorn.test';
const settings = {
  hostname: 'mta.test',
  routeOf: (env: string, a: string) => (env === 'live' ? a.slice(a.indexOf('@') + 1) : ''),
  testDomain: SIM,
};

const project = (id: string, limits: Partial<Project['limits']> = {}): Project => ({
  id,
  name: id,
  approved: true,
  suspended: false,
  limits: { daily: 0, monthly: 0, domains: 0, verifications: 0, ...limits },
  bounceSuppressionDays: 0,
  softBounceSuppression: null,
  ipPool: null,
  createdAt: 0,
  updatedAt: 0,
});

function send(
  p: Project,
  to: string[],
  over: Partial<AcceptRequest> & { body?: Record<string, unknown> } = {},
): AcceptRequest {
  const { body, ...rest } = over;
  return {
    project: p,
    environment: 'live',
    prepared: prepareEmail({ from: 'orders@shop.test', to, subject: 's', text: 't', ...body }, NOW),
    attachments: [],
    requestId: 'req_1',
    idempotency: null,
    ...rest,
  };
}

function facts(over: Partial<AcceptFacts> = {}): AcceptFacts {
  return {
    now: NOW,
    suppressed: new Map(),
    verified: new Map([
      ['prj_a|shop.test', { listUnsubscribe: false }],
      ['prj_b|shop.test', { listUnsubscribe: false }],
    ]),
    projects: new Map(),
    usage: new Map(),
    answered: new Map(),
    ...over,
  };
}

const codeOf = (o: Accepted | ApiError) => (o instanceof ApiError ? o.code : o.replay ? 'replay' : o.email.status);

describe('the accept rules (interface §4.1, §7), in arrival order', function () {
  const A = project('prj_a');
  const B = project('prj_b');

  it('live mail needs a From domain verified in its own project', function () {
    const plan = planAccept([send(A, ['x@one.test']), send(project('prj_c'), ['x@one.test'])], facts(), settings);
    expect(plan.outcomes.map(codeOf)).to.deep.equal(['queued', 'domain_not_verified']);
    expect(plan.emails).to.have.length(1);
  });

  it('skips suppressed recipients of the sending project only, and refuses a send to nobody else', function () {
    const suppressed = new Map([[suppressionKey('prj_a', 'gone@one.test'), 'bounce' as const]]);
    const plan = planAccept(
      [send(A, ['gone@one.test']), send(B, ['gone@one.test']), send(A, ['gone@one.test', 'ok@two.test'])],
      facts({ suppressed }),
      settings,
    );
    expect(plan.outcomes.map(codeOf)).to.deep.equal(['recipient_suppressed', 'queued', 'queued']);
    const mixed = plan.emails[1];
    expect(mixed.recipients.map((r) => `${r.address}:${r.status}`)).to.deep.equal([
      'gone@one.test:suppressed',
      'ok@two.test:queued',
    ]);
    expect(plan.events.map((e) => `${e.type}:${e.recipient}`)).to.deep.equal(['email.suppressed:gone@one.test']);
  });

  it('counts live recipients against the daily limit request by request; a refused request counts nothing', function () {
    const { day, month } = periodsOf(NOW);
    const limited = project('prj_a', { daily: 5 });
    const usage = new Map([[`prj_a|${day}`, 2]]);
    const plan = planAccept(
      [
        send(limited, ['1@one.test', '2@one.test']),
        send(limited, ['3@one.test', '4@one.test']),
        send(limited, ['5@one.test']),
      ],
      facts({ usage, projects: new Map([['prj_a', limited]]) }),
      settings,
    );
    expect(plan.outcomes.map(codeOf)).to.deep.equal(['queued', 'daily_limit_exceeded', 'queued']);
    expect(plan.usage).to.deep.equal([
      ['prj_a', day, 3],
      ['prj_a', month, 3],
    ]);
  });

  it("the limits as stored now win over the request's own copy of its project", function () {
    const stale = project('prj_a');
    const plan = planAccept(
      [send(stale, ['1@one.test'])],
      facts({
        projects: new Map([['prj_a', project('prj_a', { monthly: 0, daily: 1 })]]),
        usage: new Map([[`prj_a|${periodsOf(NOW).day}`, 1]]),
      }),
      settings,
    );
    expect(plan.outcomes.map(codeOf)).to.deep.equal(['daily_limit_exceeded']);
  });

  it('an unsubscription stops only sends that ask for List-Unsubscribe (the header, <auto> or its own, or the domain setting)', function () {
    const suppressed = new Map([[suppressionKey('prj_a', 'reader@one.test'), 'unsubscribe' as const]]);
    const receipt = send(A, ['reader@one.test']);
    const newsletter = send(A, ['reader@one.test'], { body: { headers: { 'List-Unsubscribe': '<auto>' } } });
    const own = send(A, ['reader@one.test'], {
      body: { headers: { 'list-unsubscribe': '<https://shop.test/unsub>' } },
    });
    const plan = planAccept([receipt, newsletter, own], facts({ suppressed }), settings);
    expect(plan.outcomes.map(codeOf)).to.deep.equal(['queued', 'recipient_suppressed', 'recipient_suppressed']);

    const asking = new Map([['prj_a|shop.test', { listUnsubscribe: true }]]);
    const byDomain = planAccept(
      [send(A, ['reader@one.test']), send(A, ['other@one.test'])],
      facts({ suppressed, verified: asking }),
      settings,
    );
    expect(byDomain.outcomes.map(codeOf)).to.deep.equal(['recipient_suppressed', 'queued']);
    expect(byDomain.emails[0].headers).to.deep.equal({ 'List-Unsubscribe': '<auto>' });
    // the send's own header wins over the domain's <auto>
    const mine = planAccept(
      [send(A, ['other@one.test'], { body: { headers: { 'List-Unsubscribe': '<mailto:u@shop.test>' } } })],
      facts({ verified: asking }),
      settings,
    );
    expect(mine.emails[0].headers).to.deep.equal({ 'List-Unsubscribe': '<mailto:u@shop.test>' });
  });

  context('with an Idempotency-Key', function () {
    const keyed = (p: Project, hash: string, to = ['x@one.test']) => send(p, to, { idempotency: { key: 'k1', hash } });

    it('records the 202 it answers, showing the email as accepted', function () {
      const plan = planAccept([keyed(A, 'h1')], facts(), settings);
      const [accepted] = plan.outcomes as Array<Accepted>;
      expect(plan.answers).to.have.length(1);
      expect(plan.answers[0]).to.include({ projectId: 'prj_a', key: 'k1', hash: 'h1', status: 202, createdAt: NOW });
      expect(plan.answers[0].body).to.include({ id: accepted.email!.id, status: 'queued', attempts: 0 });
    });

    it('gives the recorded answer to the same request again, and 409 to another body; the key is per project', function () {
      const answered = new Map([[answerKey('prj_a', 'k1'), { hash: 'h1', status: 202, body: { id: 'msg_first' } }]]);
      const plan = planAccept([keyed(A, 'h1'), keyed(A, 'h2'), keyed(B, 'h1')], facts({ answered }), settings);
      expect(plan.outcomes.map(codeOf)).to.deep.equal(['replay', 'idempotency_conflict', 'queued']);
      expect((plan.outcomes[0] as Accepted).replay).to.deep.equal({
        hash: 'h1',
        status: 202,
        body: { id: 'msg_first' },
      });
      expect(plan.emails.map((e) => e.projectId)).to.deep.equal(['prj_b']);
    });

    it("two requests with one key in one batch: the second gets the first one's answer, and one email is stored", function () {
      const plan = planAccept([keyed(A, 'h1'), keyed(A, 'h1')], facts(), settings);
      expect(plan.outcomes.map(codeOf)).to.deep.equal(['queued', 'replay']);
      expect((plan.outcomes[1] as Accepted).replay!.body).to.deep.equal(plan.answers[0].body);
      expect(plan.emails).to.have.length(1);
    });

    it('a refused request records nothing: the key stays free for a corrected retry', function () {
      const plan = planAccept(
        [send(project('prj_c'), ['x@one.test'], { idempotency: { key: 'k1', hash: 'h1' } })],
        facts(),
        settings,
      );
      expect(plan.outcomes.map(codeOf)).to.deep.equal(['domain_not_verified']);
      expect(plan.answers).to.deep.equal([]);
    });
  });

  context('test mail due now', function () {
    it('is stored as its first simulated attempt left it, while the 202 shows it queued', function () {
      const plan = planAccept(
        [send(A, [`delivered@${SIM}`], { environment: 'test' }), send(A, [`delayed@${SIM}`], { environment: 'test' })],
        facts(),
        settings,
      );
      expect(plan.outcomes.map(codeOf)).to.deep.equal(['queued', 'queued']);
      expect(plan.emails.map((e) => e.status)).to.deep.equal(['accepted', 'queued']);
      // the delivered one's walk is over: no queue row; the delayed one waits a second for its retry
      expect(plan.rows.map((q) => [q.emailId, q.state, q.attempts, q.nextAttemptAt])).to.deep.equal([
        [plan.emails[1].id, 'queued', 1, NOW + 1000],
      ]);
      expect(plan.events.map((e) => `${e.type}:${e.simulated}`)).to.deep.equal([
        'email.sent:true',
        'email.delivered:true',
        'email.delivery_delayed:true',
      ]);
    });

    it('scheduled test mail waits like any other', function () {
      const plan = planAccept(
        [
          send(A, [`delivered@${SIM}`], {
            environment: 'test',
            body: { scheduled_at: new Date(NOW + 3_600_000).toISOString() },
          }),
        ],
        facts(),
        settings,
      );
      expect(plan.emails.map((e) => e.status)).to.deep.equal(['scheduled']);
      expect(plan.rows.map((q) => q.state)).to.deep.equal(['queued']);
    });
  });
});
