// The entry of a worker thread when the sources run under tsx (tests): registers tsx in this
// thread, then loads the TypeScript entry named in argv (thread.ts, startThread).
import { register } from 'tsx/esm/api';

register();
await import(process.argv[2]);
