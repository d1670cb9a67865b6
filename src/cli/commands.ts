import DomainList from './commands/domain/list.js';
import DomainShow from './commands/domain/show.js';
import DomainVerify from './commands/domain/verify.js';
import KeyCreate from './commands/key/create.js';
import KeyList from './commands/key/list.js';
import KeyRevoke from './commands/key/revoke.js';
import Migrate from './commands/migrate.js';
import ProjectCreate from './commands/project/create.js';
import ProjectList from './commands/project/list.js';
import ProjectSet from './commands/project/set.js';
import Serve from './commands/serve.js';

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
  'domain:list': DomainList,
  'domain:show': DomainShow,
  'domain:verify': DomainVerify,
};
