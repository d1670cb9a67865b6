import Backup from './commands/backup.js';
import Doctor from './commands/doctor.js';
import DomainList from './commands/domain/list.js';
import DomainShow from './commands/domain/show.js';
import DomainVerify from './commands/domain/verify.js';
import DomainRotateDkim from './commands/domain/rotate-dkim.js';
import DmarcImport from './commands/dmarc/import.js';
import ContactsImport from './commands/contacts/import.js';
import ContactsExport from './commands/contacts/export.js';
import KeyCreate from './commands/key/create.js';
import KeyList from './commands/key/list.js';
import KeyRevoke from './commands/key/revoke.js';
import Listen from './commands/listen.js';
import Migrate from './commands/migrate.js';
import ProjectCreate from './commands/project/create.js';
import Restore from './commands/restore.js';
import QueueRetry from './commands/queue/retry.js';
import ClusterRelease from './commands/cluster/release.js';
import ClusterStatus from './commands/cluster/status.js';
import QueueShow from './commands/queue/show.js';
import QueueStats from './commands/queue/stats.js';
import SuppressionAdd from './commands/suppression/add.js';
import SuppressionList from './commands/suppression/list.js';
import SuppressionRemove from './commands/suppression/remove.js';
import ProjectList from './commands/project/list.js';
import ProjectSet from './commands/project/set.js';
import Serve from './commands/serve.js';
import InboundParse from './commands/inbound/parse.js';
import TemplateList from './commands/template/list.js';
import TemplateRender from './commands/template/render.js';
import TemplateShow from './commands/template/show.js';
import Verify from './commands/verify.js';

// The explicit command list (oclif "explicit" strategy): no directory scan at start.
export const COMMANDS = {
  serve: Serve,
  migrate: Migrate,
  'project:create': ProjectCreate,
  'project:list': ProjectList,
  'project:set': ProjectSet,
  'key:create': KeyCreate,
  'key:list': KeyList,
  'key:revoke': KeyRevoke,
  listen: Listen,
  'domain:list': DomainList,
  'domain:show': DomainShow,
  'domain:verify': DomainVerify,
  'domain:rotate-dkim': DomainRotateDkim,
  'dmarc:import': DmarcImport,
  'contacts:import': ContactsImport,
  'contacts:export': ContactsExport,
  'suppression:list': SuppressionList,
  'suppression:add': SuppressionAdd,
  'suppression:remove': SuppressionRemove,
  'queue:stats': QueueStats,
  'queue:show': QueueShow,
  'queue:retry': QueueRetry,
  'cluster:status': ClusterStatus,
  'cluster:release': ClusterRelease,
  'inbound:parse': InboundParse,
  'template:list': TemplateList,
  'template:show': TemplateShow,
  'template:render': TemplateRender,
  verify: Verify,
  doctor: Doctor,
  backup: Backup,
  restore: Restore,
};
