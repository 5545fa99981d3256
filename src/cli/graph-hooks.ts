// Module hooks the `waymark` command registers (after tsx's, so they run first) before it
// imports a graph file. They run on Node's loader thread and see only what `initialize` gets.
import type { InitializeHook, LoadHook, ResolveHook } from 'node:module';

/** What the command hands the hooks: where each public entry of waymark lives in its copy. */
export interface GraphHooksData {
  /** `waymark`, `waymark/sqlite`, ... to the file:// URL of the module the command runs. */
  readonly entries: Readonly<Record<string, string>>;
}

let entries: Readonly<Record<string, string>> = {};

export const initialize: InitializeHook<GraphHooksData> = (data) => {
  entries = data.entries;
};

/**
 * `import ... from 'waymark'` (and every other public entry) in a graph file gets the very
 * modules the command runs: one copy of waymark in the process, and in a clone of the
 * repository the code you are looking at, not a dist/ build that may be missing or stale.
 */
export const resolve: ResolveHook = (specifier, context, next) => {
  const entry = entries[specifier];
  // Handed on, not short-circuited: tsx's own resolve must see every file it may transform.
  return next(entry ?? specifier, context);
};

/**
 * A TypeScript file imported directly (the graph file) is an ES module whatever its package
 * says. In a package without `"type": "module"` (what `npm init -y` makes) tsx would load it as
 * CommonJS, and Node then fails with "Cannot require() ES Module ... in a cycle". The files it
 * imports in turn keep tsx's own choice (tsx marks those URLs with a query).
 */
export const load: LoadHook = (url, context, next) => {
  if (isOwnTypeScript(url)) return next(url, { ...context, format: 'module' });
  return next(url, context);
};

function isOwnTypeScript(url: string): boolean {
  if (!url.startsWith('file:') || url.includes('?') || url.includes('/node_modules/')) return false;
  return url.endsWith('.ts') || url.endsWith('.tsx');
}
