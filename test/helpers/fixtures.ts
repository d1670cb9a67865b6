import { insertEmails } from '../../src/modules/sending/emails/email-rows.repo.js';
import type { Email } from '../../src/modules/sending/emails/email.js';
import { newId } from '../../src/lib/ids.js';
import type { Store } from '../../src/store/store.js';

/** An email row as the sending service stores it, for tests that only read emails. */
export async function storedEmail(
  store: Store,
  projectId: string,
  over: Partial<Email> & { rcpt?: string[] } = {},
): Promise<Email> {
  const now = Date.now();
  const id = newId('email', now);
  const to = over.rcpt ?? over.to ?? ['someone@example.test'];
  const e: Email = {
    id,
    projectId,
    environment: 'test',
    status: 'queued',
    statusReason: null,
    from: 'sender@example.test',
    fromDomain: 'example.test',
    to,
    cc: [],
    bcc: [],
    replyTo: null,
    subject: 'hello',
    html: null,
    text: 'hi',
    templateId: null,
    templateVersion: null,
    tags: {},
    headers: {},
    requestId: newId('request', now),
    scheduledAt: null,
    attempts: 0,
    providerMessageId: null,
    messageId: `<${id}@test>`,
    acceptedAt: null,
    createdAt: now,
    updatedAt: now,
    recipients: to.map((address) => ({
      id: newId('recipient', now),
      address,
      kind: 'to' as const,
      status: 'queued' as const,
      details: null,
      queueRowId: null,
      delayNotified: false,
      updatedAt: now,
    })),
    broadcastId: null,
    contactId: null,
    ...over,
  };
  await insertEmails(store.knex, [e]);
  return e;
}
