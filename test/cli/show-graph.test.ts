// `show` names the graph a run goes under now. A run resumed under a changed graph has its
// checkpoint restamped with the new one; the run's row keeps the graph it started under, which
// `show` gives beside it (issue 30, point 11: it printed the old hash as if nothing changed).
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { expectExit, jsonOf, root, sandbox, testTimeoutMs } from './support.js';

const waymark = pathToFileURL(`${root}src/index.ts`).href;
const zod = pathToFileURL(`${root}node_modules/zod/index.js`).href;

/** A person asks, then a code node: `label` is what the code node writes, `version` the graph's. */
const source = (label: string, version: number) => `
import { z } from '${zod}';
import { graph, person } from '${waymark}';
export default graph('edited', { state: z.object({ ok: z.boolean().default(false), label: z.string().default('') }), version: ${version} })
  .node('ask', person({ prompt: 'OK?', answer: z.object({ ok: z.boolean() }) }))
  .node('${label}', () => ({ label: '${label}' }), { writes: ['label'], terminal: true })
  .edge('ask', '${label}')
  .entry('ask')
  .compile();
`;

it('after a resume under an edited graph, show gives the new graph and the one the run started under', {
  timeout: testTimeoutMs,
}, async () => {
  const box = sandbox();
  const file = box.write('edited.ts', source('finish', 1));
  expectExit(await box.waymark(['run', file, '--run-id', 'r']), 3);
  const before = jsonOf(await box.waymark(['--json', 'show', 'r']), 'run') as unknown as {
    graph: { hash: string; version: number };
    startedUnder?: unknown;
  };
  expect(before.graph.version).toBe(1);
  expect(before.startedUnder).toBeUndefined();

  // The node after the wait is renamed (a new hash) and the version bumped; the answer resumes it.
  box.write('edited.ts', source('done', 2));
  expectExit(await box.waymark(['answer', 'r', '--value', '{"ok":true}']), 0);
  const after = jsonOf(await box.waymark(['--json', 'show', 'r']), 'run') as unknown as {
    graph: { hash: string; version: number };
    startedUnder: { hash: string; version: number };
    path: string[];
  };
  expect(after.path).toEqual(['ask', 'done']);
  expect(after.graph.version).toBe(2);
  expect(after.graph.hash).not.toBe(before.graph.hash);
  expect(after.startedUnder).toEqual({ name: 'edited', hash: before.graph.hash, version: 1 });

  const text = await box.waymark(['show', 'r']);
  expect(text.lines).toContain(
    `graph    edited v2 (${after.graph.hash.slice(0, 12)}), started under v1 (${before.graph.hash.slice(0, 12)})`,
  );
});
