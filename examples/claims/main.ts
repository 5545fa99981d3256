// The README's main job: validate the claims graph, run it end to end with a checkpoint after
// every node in the embedded SQLite store (.waymark/waymark.db), print the path it took.
// plan and write use the example's scripted model unless a real one is named:
//   node --import tsx examples/claims/main.ts '<claim>' --model openai:gpt-4o-mini
import { run } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import claims from './graph.js';

const store = new SqliteStore();

const args = process.argv.slice(2);
const flag = args.indexOf('--model');
const model = flag >= 0 ? args[flag + 1] : undefined;
if (flag >= 0 && (model === undefined || model.startsWith('-'))) {
  console.error('--model needs a provider:model-id, e.g. --model openai:gpt-4o-mini');
  process.exit(2);
}
const positional = flag >= 0 ? [...args.slice(0, flag), ...args.slice(flag + 2)] : args;
const claim = positional[0] ?? 'Tea reached Europe before coffee was first recorded in Yemen';
console.log(
  `graph "${claims.name}" v${claims.version} validated: ${claims.nodes.size} nodes, hash ${claims.hash.slice(0, 12)}`,
);
console.log(
  model === undefined
    ? 'model steps plan and write use the scripted model (no --model given): offline, no key'
    : `model steps plan and write call ${model} (--model)`,
);

const result = await run(
  claims,
  { claim },
  {
    store,
    ...(model !== undefined && { model }),
    onTraceEntry: (e) => {
      const error = e.error
        ? `  ${e.error.code}: ${e.error.message}${e.retried ? ' (retrying)' : ''}`
        : '';
      const tokens = e.usage
        ? `  ${e.usage.inputTokens} in / ${e.usage.outputTokens} out tokens, ${e.usage.model}`
        : '';
      console.log(
        `  ${e.status === 'succeeded' ? 'ok  ' : 'FAIL'} ${e.activation.padEnd(10)} attempt ${e.attempt}  ${e.durationMs} ms${tokens}${error}`,
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
