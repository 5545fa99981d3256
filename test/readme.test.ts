import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';

describe('the README', () => {
  it('its example runs as written and prints the path it promises', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const code = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toBeDefined();
    const dir = new URL('./.tmp/', import.meta.url);
    mkdirSync(dir, { recursive: true });
    const file = new URL('readme-example.ts', dir);
    writeFileSync(file, code!.replace("from 'waymark'", "from '../../src/index.js'"));
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      await import(file.href);
      expect(log).toHaveBeenCalledWith('succeeded', ['plan', 'search', 'verify', 'publish']);
    } finally {
      log.mockRestore();
    }
  });

  it('names the two set-up commands, and the test command is what CI runs', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const ci = readFileSync(new URL('../.ci/run', import.meta.url), 'utf8');
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test ');
    expect(ci).toMatch(/^npm test$/m);
  });
});
