import type { Knex } from 'knex';
import * as m0001 from './0001_foundation.js';
import * as m0002 from './0002_emails.js';
import * as m0003 from './0003_domains.js';
import * as m0004 from './0004_events.js';
import * as m0005 from './0005_sending.js';
import * as m0006 from './0006_webhooks.js';
import * as m0007 from './0007_key_prefix.js';
import * as m0008 from './0008_unused_index.js';
import * as m0009 from './0009_unfanned_events.js';
import * as m0010 from './0010_events_by_type.js';
import * as m0011 from './0011_outbound_queue.js';
import * as m0012 from './0012_templates.js';
import * as m0013 from './0013_inbound.js';
import * as m0014 from './0014_suppression_list.js';
import * as m0015 from './0015_request_logs.js';
import * as m0016 from './0016_retention.js';
import * as m0017 from './0017_dashboard_sessions.js';
import * as m0018 from './0018_suppression_expiry.js';
import * as m0019 from './0019_dkim_rotation.js';
import * as m0020 from './0020_blocklists.js';
import * as m0021 from './0021_dmarc_reports.js';
import * as m0022 from './0022_list_unsubscribe.js';
import * as m0023 from './0023_contacts.js';
import * as m0024 from './0024_segments.js';
import * as m0025 from './0025_topics.js';
import * as m0026 from './0026_broadcasts.js';
import * as m0027 from './0027_forms.js';
import * as m0028 from './0028_nodes.js';
import * as m0029 from './0029_delivery_claims.js';
import * as m0030 from './0030_bounce_reasons.js';
import * as m0031 from './0031_mta_shaping.js';
import * as m0032 from './0032_mta_sts.js';
import * as m0033 from './0033_tls_rpt_sent.js';
import * as m0034 from './0034_queue_wait.js';
import * as m0035 from './0035_report_mail.js';
import * as m0036 from './0036_webhook_formats.js';
import * as m0037 from './0037_topic_default_subscription.js';
import * as m0038 from './0038_key_domain.js';
import * as m0039 from './0039_resend_contacts.js';
import * as m0040 from './0040_resend_templates.js';
import * as m0041 from './0041_webhook_answers.js';

export interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

// The explicit, ordered list of migrations. Each one runs unchanged on SQLite
// and PostgreSQL: knex's schema builder only, epoch-millisecond BIGINTs for
// time, TEXT holding JSON for structured values.
export const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['0001_foundation', m0001],
  ['0002_emails', m0002],
  ['0003_domains', m0003],
  ['0004_events', m0004],
  ['0005_sending', m0005],
  ['0006_webhooks', m0006],
  ['0007_key_prefix', m0007],
  ['0008_unused_index', m0008],
  ['0009_unfanned_events', m0009],
  ['0010_events_by_type', m0010],
  ['0011_outbound_queue', m0011],
  ['0012_templates', m0012],
  ['0013_inbound', m0013],
  ['0014_suppression_list', m0014],
  ['0015_request_logs', m0015],
  ['0016_retention', m0016],
  ['0017_dashboard_sessions', m0017],
  ['0018_suppression_expiry', m0018],
  ['0019_dkim_rotation', m0019],
  ['0020_blocklists', m0020],
  ['0021_dmarc_reports', m0021],
  ['0022_list_unsubscribe', m0022],
  ['0023_contacts', m0023],
  ['0024_segments', m0024],
  ['0025_topics', m0025],
  ['0026_broadcasts', m0026],
  ['0027_forms', m0027],
  ['0028_nodes', m0028],
  ['0029_delivery_claims', m0029],
  ['0030_bounce_reasons', m0030],
  ['0031_mta_shaping', m0031],
  ['0032_mta_sts', m0032],
  ['0033_tls_rpt_sent', m0033],
  ['0034_queue_wait', m0034],
  ['0035_report_mail', m0035],
  ['0036_webhook_formats', m0036],
  ['0037_topic_default_subscription', m0037],
  ['0038_key_domain', m0038],
  ['0039_resend_contacts', m0039],
  ['0040_resend_templates', m0040],
  ['0041_webhook_answers', m0041],
];

export const migrationSource: Knex.MigrationSource<readonly [string, Migration]> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: ([name]) => name,
  getMigration: async ([, migration]) => migration,
};
