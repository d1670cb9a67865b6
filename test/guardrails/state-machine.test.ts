import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMAIL_STATUSES, RECIPIENT_STATUSES } from '../../src/modules/sending/emails/email.js';
import { QUEUE_STATES } from '../../src/modules/sending/emails/queue.repo.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** The state machine (lifecycle*.ts) and the repos that store what it returns. */
const OWNERS = /^modules\/sending\/emails\/(lifecycle(-\w+)?\.ts|emails\.repo\.ts|queue\.repo\.ts)$/;

/**
 * An object property or an assignment giving `status` one of an email's or a
 * recipient's statuses, or `state` one of a queue row's, as a literal. (The
 * Idempotency-Key rows have a `state` of their own: 'done'.)
 */
const statuses = [...new Set([...EMAIL_STATUSES, ...RECIPIENT_STATUSES])].join('|');
const WRITE = new RegExp(`\\b(?:status\\s*[:=]\\s*'(?:${statuses})'|state\\s*[:=]\\s*'(?:${QUEUE_STATES.join('|')})')`);
const EXCEPT = {
  'modules/sending/emails/idempotency.repo.ts': /state: 'done'/,
  // a broadcast has a state machine of its own, with a status of the same name
  'modules/audience/broadcasts/broadcast.ts': /status: '(scheduled|cancelled)'/,
};

describe('one owner of the email state machine (STYLE 13, LIFECYCLE.md)', function () {
  it('no status of an email, a recipient or a queue row is written outside lifecycle.ts and its repos', function () {
    const found: string[] = [];
    for (const rel of readdirSync(SRC, { recursive: true, encoding: 'utf8' }).map((f) => f.split('\\').join('/'))) {
      if (!rel.endsWith('.ts') || OWNERS.test(rel)) continue;
      readFileSync(join(SRC, rel), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const allowed = EXCEPT[rel as keyof typeof EXCEPT];
          if (WRITE.test(line) && !(allowed && allowed.test(line))) found.push(`src/${rel}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found, found.join('\n')).to.deep.equal([]);
  });

  it("one writer stores its changes: the repos' state writers are called by store-change.ts, the claim's by mta/claim-batch.ts", function () {
    const found: string[] = [];
    for (const rel of sources()) {
      const text = readFileSync(join(SRC, rel), 'utf8');
      for (const [writer, owner] of Object.entries(STATE_WRITERS)) {
        if (rel !== owner && !DEFINED_IN.test(rel) && new RegExp(`\\b${writer}\\b(?=\\s*[(,}])`).test(text))
          found.push(`src/${rel} uses ${writer} (only ${owner} may)`);
      }
    }
    expect(found, found.join('\n')).to.deep.equal([]);
  });
});

const sources = () =>
  readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .map((f) => f.split('\\').join('/'))
    .filter((rel) => rel.endsWith('.ts'));

/**
 * The repo functions that write an email's, a recipient's or a queue row's state, and the one file
 * that may call each: store-change.ts stores what lifecycle*.ts decided; the claim moves many rows
 * in one statement and is checked against lifecycle.ts by test/integration/claim-equivalence.test.ts.
 */
const STATE_WRITERS: Record<string, string> = {
  saveEmailState: 'modules/sending/emails/store-change.ts',
  saveRecipient: 'modules/sending/emails/store-change.ts',
  saveQueueRow: 'modules/sending/emails/store-change.ts',
  deleteQueueRow: 'modules/sending/emails/store-change.ts',
  deleteEmails: 'modules/sending/emails/store-change.ts',
  saveClaimedEmails: 'mta/claim-batch.ts',
  claimDueRows: 'mta/claim-batch.ts',
};
/** the repos that define them */
const DEFINED_IN = /^modules\/sending\/emails\/(email-rows|email-recipients|queue)\.repo\.ts$/;
