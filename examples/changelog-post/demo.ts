// The README's main job (`npm start`): drives the changelog-post example through the real
// `waymark` command, printing each command as you would type it. Validate; run with an injected
// fact-check outage (the run fails there, its checkpoints kept); resume (only fact-check and what
// follows run); stop at the editor's approval; approve (publish runs once); resume again
// (nothing runs, nothing is published twice). Everything lives in .waymark/ under the current
// directory: no server, no API key. The model steps use the example's scripted model unless a
// real one is named: `npm start -- --model openai:gpt-4o-mini` (with OPENAI_API_KEY set).
import { spawnSync } from 'node:child_process';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cmsFile, readCms } from './cms.js';

const bin = fileURLToPath(new URL('../../bin/waymark.js', import.meta.url));
const graph = shown(fileURLToPath(new URL('./graph.ts', import.meta.url)));
const input = shown(fileURLToPath(new URL('./input.json', import.meta.url)));
const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
const runId = `post-${stamp}-${Math.random().toString(16).slice(2, 6)}`;
const cms = cmsFile();
const callsBefore = readCms(cms).calls;
const started = performance.now();
const flag = process.argv.indexOf('--model');
const model = flag >= 0 ? process.argv[flag + 1] : undefined;
if (flag >= 0 && (model === undefined || model.startsWith('-'))) {
  console.error('demo: --model needs a provider:model-id, e.g. --model openai:gpt-4o-mini');
  process.exit(2);
}

/** Runs one `waymark` command as a user would, and checks it ended the way the story says. */
function waymark(args: string[], expected: number, env: Record<string, string> = {}): void {
  const prefix = Object.entries(env).map(([k, v]) => `${k}=${v} `);
  console.log(`\n$ ${prefix.join('')}npx waymark ${args.map(quote).join(' ')}`);
  const result = spawnSync(process.execPath, [bin, ...args], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  if (result.status !== expected) {
    console.error(`\ndemo: expected exit code ${expected}, got ${result.status}; stopping here`);
    process.exit(1);
  }
  console.log(`(exit code ${result.status})`);
}

console.log(
  model === undefined
    ? 'Model steps (select, outline, draft, fact-check) use the scripted model (no --model given):\n' +
        'offline, no key. `npm start -- --model openai:gpt-4o-mini` runs them on a real one.\n'
    : `Model steps (select, outline, draft, fact-check) call ${model} (--model); the run keeps it.\n`,
);
console.log('1. Check the graph before anything runs (and before any model is paid for).');
waymark(['validate', graph], 0);

console.log('\n2. Run it while the fact-check service is down: fact-check fails after its retry,');
console.log('   the run stops `failed` and every step before it stays checkpointed.');
const modelArgs = model === undefined ? [] : ['--model', model];
waymark(['run', graph, '--input-file', input, '--run-id', runId, ...modelArgs], 1, {
  WAYMARK_FAULTS: 'fact-check',
});

console.log(
  '\n3. The service is back: resume. Steps 1-4 are read back, only fact-check onward runs;',
);
console.log('   it sends unbacked claims back to draft (the scripted first draft invents one),');
console.log('   then the run waits for the editor.');
waymark(['resume', runId], 3);

console.log('\n4. The editor approves (no process was held while waiting); publish runs once.');
waymark(['approve', runId, '--by', 'editor@example.com'], 0);

console.log(
  '\n5. Resume again, as a crashed worker or an impatient user would: nothing runs twice.',
);
waymark(['resume', runId], 0);

const posts = Object.values(readCms(cms).posts).filter((p) => p.key.startsWith(`${runId}/`));
const calls = readCms(cms).calls - callsBefore;
console.log(
  `\nThe CMS (${shown(cms)}) holds ${posts.length} post for this run after ${calls} publish call(s):`,
);
for (const post of posts) {
  console.log(`  ${post.id} "${post.title}" under key ${post.key}, written by ${post.model}`);
}
console.log(
  `\nLook around: npx waymark ls, npx waymark show ${runId}, npx waymark trace ${runId},`,
);
console.log(`             npx waymark graph ${graph} --run ${runId}`);
console.log(`(demo took ${((performance.now() - started) / 1000).toFixed(1)} s)`);
if (posts.length !== 1) process.exit(1);

function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith('..') ? path : rel;
}

function quote(arg: string): string {
  return /^[\w@./:=-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
