#!/usr/bin/env node
// The `waymark` command. It decides where the code it runs lives, then hands over to main(),
// which loads only what the command needs (docs/cli.md, "Startup"): nothing here imports tsx,
// zod or the SQLite driver. An installed package runs dist/; a clone of the repository runs a
// transpiled copy of src/, made again whenever a file in src/ changes (bin/clone.js).
import { existsSync, readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
// `waymark --version` alone is answered before anything is loaded: scripts call it to check.
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${version}\n`);
  process.exit(0);
}
// Stack traces are printed only with --verbose: map them to the sources then, and pay for
// reading source maps only then.
if (argv.includes('--verbose')) process.setSourceMapsEnabled(true);

const clone = existsSync(new URL('../src/cli/main.ts', import.meta.url));
const root = clone
  ? (await import('./clone.js')).transpiledSource()
  : new URL('../dist/', import.meta.url).href;
const { main } = await import(new URL('cli/main.js', root).href);
const code = await main(argv, { version });
// Nodes may leave timers or sockets behind; the run is recorded, so the command ends here.
process.exit(code);
