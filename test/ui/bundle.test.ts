import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { pageDir } from './fixtures/page-build.js';

// The page's bundle budget (docs/ui.md): what a browser downloads once, gzipped.
const budgetKiB = { js: 250, css: 20 };

it(`the page's bundle stays within its budget: ${budgetKiB.js} KiB of JavaScript and ${budgetKiB.css} KiB of CSS, gzipped`, async () => {
  const assets = join(await pageDir(), 'assets');
  const size = { js: 0, css: 0 };
  for (const name of readdirSync(assets)) {
    const kind = name.endsWith('.js') ? 'js' : name.endsWith('.css') ? 'css' : undefined;
    if (kind !== undefined)
      size[kind] += gzipSync(readFileSync(join(assets, name)), { level: 9 }).length;
  }
  const kib = (n: number) => Math.round((n / 1024) * 10) / 10;
  expect(
    kib(size.js),
    `the page's JavaScript is ${kib(size.js)} KiB gzipped, over its ${budgetKiB.js} KiB budget: look at what a change added (npx vite build -c vite.ui.config.ts)`,
  ).toBeLessThanOrEqual(budgetKiB.js);
  expect(kib(size.css), `the page's CSS is ${kib(size.css)} KiB gzipped`).toBeLessThanOrEqual(
    budgetKiB.css,
  );
  expect(size.js).toBeGreaterThan(0);
}, 120_000);
