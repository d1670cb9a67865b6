import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { notFound } from '../../../lib/errors.js';
import { iso } from '../../../lib/time.js';
import { deliveriesOfEmail } from '../../../modules/emails/deliveries.repo.js';
import { findEmailById } from '../../../modules/emails/emails.repo.js';
import { presentEmail } from '../../../modules/emails/emails.presenter.js';
import { eventsOfEmail } from '../../../modules/events/events.repo.js';

export default class QueueShow extends BaseCommand {
  static override description = 'Show an email with its recipients, queue rows and events';
  static override examples = ['<%= config.bin %> queue show msg_01j…'];
  static override args = { id: Args.string({ description: 'email id (msg_…)', required: true }) };

  protected async execute() {
    const { args, flags } = await this.parse(QueueShow);
    return this.withStore(flags.config, async ({ store }) => {
      const email = await findEmailById(store.reader, args.id);
      if (!email) throw notFound(`email ${args.id}`);
      const deliveries = await deliveriesOfEmail(store.reader, args.id);
      const events = await eventsOfEmail(store.reader, args.id);
      return {
        ...presentEmail(email),
        project_id: email.projectId,
        message_id: email.messageId,
        recipients: email.recipients.map((r) => ({ address: r.address, kind: r.kind, status: r.status, details: r.details })),
        queue: deliveries.map((d) => ({ id: d.id, route: d.route || '(one transaction)', state: d.state, attempts: d.attempts, next_attempt_at: iso(d.nextAttemptAt), data_started: d.dataStarted })),
        events: events.map((e) => ({ id: e.id, type: e.type, recipient: e.recipient, created_at: iso(e.createdAt) })),
      };
    });
  }
}
