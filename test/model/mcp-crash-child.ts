// The process the MCP crash test kills: it runs commentGraph on a SQLite file; its agent hangs
// in the `wait` tool (HANG=1) after its effect tool's call was recorded.
// Usage: node --import tsx mcp-crash-child.ts <db> <calls> <log> <run-id>
import { run } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { commentGraph } from './mcp-crash-graph.js';

const [db, calls, log, runId] = process.argv.slice(2) as [string, string, string, string];
await run(commentGraph(calls, log), {}, { store: new SqliteStore({ path: db }), runId });
