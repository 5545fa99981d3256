// Module resolution hooks for the `waymark` command in a clone of the repository: a graph file
// that imports `waymark` (or `waymark/sqlite`, `waymark/testing`) gets the very modules the
// command runs from src/, not a dist/ build that may be missing or stale.
const entries = {
  waymark: '../src/index.ts',
  'waymark/sqlite': '../src/sqlite.ts',
  'waymark/testing': '../src/testing/index.ts',
};

export async function resolve(specifier, context, next) {
  const entry = entries[specifier];
  if (entry === undefined) return next(specifier, context);
  // Handed on, not short-circuited: tsx's own resolve must see the .ts file to load it.
  return next(new URL(entry, import.meta.url).href, context);
}
