import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { expect, it, vi } from 'vitest';

it("docs/memory.md's example runs as written and prints what its comments say", async () => {
  const doc = readFileSync(new URL('../../docs/memory.md', import.meta.url), 'utf8');
  const code = /```ts\n([\s\S]*?)```/.exec(doc)?.[1];
  expect(code).toBeDefined();
  const dir = new URL('../.tmp/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL('memory-doc-example.ts', dir);
  writeFileSync(file, code!.replace("from 'waymark'", "from '../../src/index.js'"));
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await import(file.href);
    expect(log.mock.calls).toEqual([['pricing'], [1]]);
  } finally {
    log.mockRestore();
  }
});
