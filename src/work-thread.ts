// The entry of a parsing pool thread (lib/work-pool.ts): the tasks of work-tasks.ts, nothing else.
import { serveTasks } from './lib/work-pool.js';
import { WORK_TASKS } from './work-tasks.js';
import { nameThisThread } from './log/thread-name.js';

nameThisThread('ph-parsing');

serveTasks(WORK_TASKS);
