#!/usr/bin/env node
// The `waymark` command. tsx is registered first so graph files may be TypeScript, loaded
// without a build step. In a clone of the repository the command runs from src/ (always the
// code you are looking at); an installed package has only dist/.
import { existsSync } from 'node:fs';
import { register as registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register();
const source = new URL('../src/cli/main.ts', import.meta.url);
const clone = existsSync(fileURLToPath(source));
// Registered after tsx, so it resolves first: `import ... from 'waymark'` in a graph file
// lands on src/ too.
if (clone) registerHooks('./source-hooks.mjs', import.meta.url);
const { main } = clone ? await import(source.href) : await import('../dist/cli/main.js');
const code = await main(process.argv.slice(2));
// Nodes may leave timers or sockets behind; the run is recorded, so the command ends here.
process.exit(code);
