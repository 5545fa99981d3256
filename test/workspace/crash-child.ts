// The process the workspace crash test kills: it starts a run of crashGraph on a SQLite file
// and says `ready`; its fix branch hangs (HANG_FIX=1) until the test sends SIGKILL.
// Usage: node --import tsx crash-child.ts <db> <repo> <log> <run-id>
import { run } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { crashGraph } from './crash-graph.js';

const [db, repo, log, runId] = process.argv.slice(2) as [string, string, string, string];
const store = new SqliteStore({ path: db });
process.stdout.write('ready\n');
await run(crashGraph(repo, log), {}, { store, runId });
