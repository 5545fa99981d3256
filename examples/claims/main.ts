// The README's main job: validate the claims graph, run it end to end with a checkpoint after
// every node in the embedded SQLite store (.waymark/waymark.db), print the path it took.
import { run } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import claims from './graph.js';

const store = new SqliteStore();

const claim = process.argv[2] ?? 'Tea reached Europe before coffee was first recorded in Yemen';
console.log(
  `graph "${claims.name}" v${claims.version} validated: ${claims.nodes.size} nodes, hash ${claims.hash.slice(0, 12)}`,
);

const result = await run(
  claims,
  { claim },
  {
    store,
    onTraceEntry: (e) => {
      const error = e.error
        ? `  ${e.error.code}: ${e.error.message}${e.retried ? ' (retrying)' : ''}`
        : '';
      console.log(
        `  ${e.status === 'succeeded' ? 'ok  ' : 'FAIL'} ${e.activation.padEnd(10)} attempt ${e.attempt}  ${e.durationMs} ms${error}`,
      );
    },
  },
);

console.log(`\nstatus: ${result.status} after ${result.steps} steps`);
console.log(`path:   ${result.trace.path.join(' -> ')}`);
switch (result.status) {
  case 'succeeded':
    console.log(`\n${result.state.report}`);
    break;
  case 'waiting':
    console.log('waiting for an answer');
    break;
  default:
    console.log(`error:  ${result.error.code}: ${result.error.message}`);
}
const usage = await store.usage(result.runId);
console.log(
  `\ncheckpointed in ${store.path}: run ${result.runId}, ${usage.events} events (${usage.eventBytes} bytes), ${usage.snapshots} snapshots`,
);
await store.close();
process.exitCode = result.status === 'succeeded' ? 0 : 1;
