// A router that returns a target it did not declare, on a subgraph node: the error names the node
// the user declared (`draft`, not its internal exit `draft/__end__`), says which declared target
// was likely meant, and the hint asks for the fix before a resume, since a resume with the graph
// as it is fails the same way.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { expectExit, fixture, root, sandbox, testTimeoutMs } from './support.js';

const misrouted = fixture('misrouted.ts');

it('names the declared node with a did-you-mean, and hints the fix, then the resume', {
  timeout: testTimeoutMs,
}, async () => {
  const box = sandbox();
  // The user's own copy of the file, so that fixing it is editing it.
  const src = pathToFileURL(join(root, 'src/index.js')).href;
  const zod = pathToFileURL(join(root, 'node_modules/zod/index.js')).href;
  const text = readFileSync(misrouted, 'utf8')
    .replaceAll('../../../src/index.js', src)
    .replaceAll("'zod'", `'${zod}'`);
  const file = box.write('misrouted.ts', text);

  const out = await box.waymark(['run', file, '--input', '{"ticket":"t"}', '--run-id', 'm']);

  expectExit(out, 1);
  const error = out.lines.find((l) => l.startsWith('error:'));
  expect(error).toContain(
    'ROUTE_UNDECLARED: the router of "draft" returned "aprove-refund" (did you mean "approve-refund"?), not one of its declared targets [approve-refund, END]',
  );
  expect(error).not.toContain('the router of "draft/__end__"');
  const next = out.lines.slice(out.lines.findIndex((l) => l.startsWith('next:')));
  expect(next[0]).toBe(
    `next:        fix the router of "draft" or its targets in ${file} (a resume with the graph as it is fails the same way), then:`,
  );
  expect(next[1]?.trim()).toBe(`waymark resume m --db ${box.db}`);

  box.write('misrouted.ts', text.replace("'aprove-refund'", "'approve-refund'"));
  const resumed = await box.waymark(['--json', 'resume', 'm']);
  expectExit(resumed, 0);
});
