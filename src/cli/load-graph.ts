import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire, register as registerHooks } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isWaymarkError, WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { Diagnostic } from '../graph/diagnostic.js';
import { Spelling } from '../graph/spelling.js';
import type { GraphDef } from '../graph/types.js';
import { validate } from '../graph/validate.js';

/** A graph file as `waymark validate` sees it: the declaration and every problem in it. */
export interface Declaration {
  readonly path: string;
  /** The compiled graph; absent when the declaration has problems. */
  readonly graph: CompiledGraph | undefined;
  readonly def: GraphDef | undefined;
  /** Errors and warnings; the graph compiled if none of them is an error. */
  readonly diagnostics: readonly Diagnostic[];
}

interface Builder {
  toDef(): GraphDef;
  validate(): Diagnostic[];
  compile(): CompiledGraph;
}

/**
 * The public entries of the package (package.json `exports`), by the file each is in under the
 * command's own code: dist/ when installed, the transpiled src/ in a clone. A graph file that
 * imports one of them gets the command's copy (graph-hooks.ts).
 */
export const publicEntries: Readonly<Record<string, string>> = {
  waymark: 'index.js',
  'waymark/sqlite': 'sqlite.js',
  'waymark/postgres': 'postgres.js',
  'waymark/model': 'model/index.js',
  'waymark/server': 'server.js',
  'waymark/client': 'client.js',
  'waymark/otel': 'otel.js',
  'waymark/testing': 'testing/index.js',
};

let loaders: Promise<void> | undefined;

/**
 * Registers tsx (TypeScript without a build step) and the command's own hooks, once, before
 * the first graph file is imported: commands that load no graph file never pay for tsx.
 */
function registerLoaders(): Promise<void> {
  loaders ??= (async () => {
    const { register } = await import('tsx/esm/api');
    register();
    const root = new URL('../', import.meta.url);
    const entries = Object.fromEntries(
      Object.entries(publicEntries).map(([specifier, file]) => [
        specifier,
        new URL(file, root).href,
      ]),
    );
    registerHooks(new URL('./graph-hooks.js', import.meta.url), { data: { entries } });
  })();
  return loaders;
}

/**
 * Loads a graph file (TypeScript or JavaScript; tsx is registered first, so no build step) and
 * returns its default export compiled. A builder is compiled here; a compiled graph is used as
 * it is.
 * @throws WaymarkError `GRAPH_FILE_INVALID` (missing, does not load, not a graph) or
 *   `GRAPH_INVALID` (with every diagnostic).
 *
 * @example
 * const { graph, path } = await loadGraph('examples/claims/graph.ts');
 */
export async function loadGraph(file: string): Promise<{ graph: CompiledGraph; path: string }> {
  const declaration = await loadDeclaration(file);
  if (declaration.graph !== undefined) return { graph: declaration.graph, path: declaration.path };
  const name = declaration.def?.name ?? file;
  const errors = declaration.diagnostics.filter(isError);
  throw new WaymarkError(
    'GRAPH_INVALID',
    `graph "${name}" in ${file} has ${errors.length} problem(s)`,
    {
      details: errors,
      retryable: false,
    },
  );
}

/** Like {@link loadGraph}, but a graph with problems is returned with them, not thrown. */
export async function loadDeclaration(file: string): Promise<Declaration> {
  const path = resolve(file);
  if (!existsSync(path) || !statSync(path).isFile()) {
    const nearest = nearestModule(file);
    throw invalid(`there is no graph file ${file}`, path, {
      reason: 'missing',
      ...(nearest !== undefined && { nearest }),
    });
  }
  await registerLoaders();
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (cause) {
    // A module that calls .compile() at the top level fails to import with every diagnostic.
    if (isWaymarkError(cause) && cause.code === 'GRAPH_INVALID') {
      return { path, graph: undefined, def: undefined, diagnostics: diagnosticsOf(cause.details) };
    }
    throw notLoaded(file, path, cause);
  }
  const value = module.default;
  // A compiled graph has no errors, but may have warnings: its plain-data def still shows them.
  if (isCompiled(value)) {
    try {
      return { path, graph: value, def: value.def, diagnostics: validate(value.def) };
    } catch (cause) {
      // It only looks like one: a hand-made object, or one from an incompatible copy.
      const why = cause instanceof Error ? cause.message : String(cause);
      throw invalid(
        `${file} has a default export that looks like a compiled graph but is not one (${why})`,
        path,
        { cause },
      );
    }
  }
  if (isBuilder(value)) {
    const def = value.toDef();
    const diagnostics = value.validate();
    const graph = diagnostics.some(isError) ? undefined : value.compile();
    return { path, graph, def, diagnostics };
  }
  const what =
    value === undefined ? 'no default export' : `a default export of type ${describe(value)}`;
  throw invalid(`${file} has ${what}, not a graph`, path, { reason: 'not-a-graph' });
}

// Duck-typed, not instanceof: the file may import waymark from another copy of the package.
function isCompiled(value: unknown): value is CompiledGraph {
  const v = value as Partial<CompiledGraph> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.name === 'string' &&
    typeof v.hash === 'string' &&
    typeof v.def === 'object' &&
    v.nodes instanceof Map
  );
}

function isBuilder(value: unknown): value is Builder {
  const v = value as Partial<Builder> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.toDef === 'function' &&
    typeof v.validate === 'function' &&
    typeof v.compile === 'function'
  );
}

/**
 * Whether a diagnostic stops compile(). One without a severity came from a copy of waymark that
 * had no warnings yet: every diagnostic was an error then.
 *
 * @example
 * const errors = diagnostics.filter(isError);
 */
export function isError(d: Diagnostic): boolean {
  return d.severity !== 'warning';
}

function diagnosticsOf(details: unknown): Diagnostic[] {
  return Array.isArray(details) ? (details as Diagnostic[]) : [];
}

/** GRAPH_FILE_INVALID for a file whose import failed, keeping the facts of why. */
function notLoaded(file: string, path: string, cause: unknown): WaymarkError {
  const code = (cause as { code?: unknown } | null)?.code;
  // A .js file in a CommonJS package, written with import/export: Node loads it as CommonJS
  // and then fails on its own ES module syntax, in words that do not say so.
  if (code === 'ERR_REQUIRE_CYCLE_MODULE' || code === 'ERR_REQUIRE_ESM') {
    const packageJson = nearestPackageJson(path);
    return invalid(
      `${file} does not load: it is written as an ES module, but is loaded as CommonJS (${packageJson === undefined ? 'no package.json above it' : `${packageJson} has no "type": "module"`})`,
      path,
      { cause, reason: 'commonjs', packageJson: packageJson ?? null },
    );
  }
  const why = whyNotLoaded(cause, path);
  const located = /:\d+:\d+: /.test(why);
  return invalid(`${file} does not load: ${why}`, path, {
    cause,
    ...(located && { reason: 'syntax' }),
  });
}

function nearestPackageJson(file: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      try {
        const type = (JSON.parse(readFileSync(candidate, 'utf8')) as { type?: unknown }).type;
        return type === 'module' ? undefined : candidate;
      } catch {
        return candidate;
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Why an import failed, in one line that keeps the facts: esbuild's first location line for a
 * syntax error in TypeScript (`file.ts:4:2: ERROR: Expected "}" but found ";"`), the file and
 * line V8 names for one in JavaScript, the message otherwise.
 */
function whyNotLoaded(cause: unknown, path: string): string {
  if (!(cause instanceof Error)) return String(cause);
  const lines = cause.message.split('\n').map((l) => l.trim());
  const located = lines.find((l) => /:\d+:\d+: ERROR: /.test(l));
  if (located !== undefined) return located;
  // V8 keeps the place of a syntax error in an ES module out of the message and the stack:
  // esbuild (which came with tsx) parses the file again to find it.
  // (tsx's import scanner reports it as "Parse error <file>:1:1", without the place either.)
  if (cause instanceof SyntaxError || /^Parse error /.test(lines[0] ?? '')) {
    return locateSyntaxError(path) ?? lines[0] ?? cause.name;
  }
  return lines[0] ?? String(cause);
}

function locateSyntaxError(path: string): string | undefined {
  try {
    const require = createRequire(createRequire(import.meta.url).resolve('tsx'));
    const esbuild = require('esbuild') as {
      transformSync(code: string, options: object): unknown;
    };
    esbuild.transformSync(readFileSync(path, 'utf8'), {
      loader: 'js',
      format: 'esm',
      sourcefile: path,
      logLevel: 'silent',
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    return message
      .split('\n')
      .find((l) => /:\d+:\d+: ERROR: /.test(l))
      ?.trim();
  }
  return undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** A module beside the missing `file` whose name is a misspelling of it, as the user would type it. */
function nearestModule(file: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dirname(resolve(file))).filter((name) => /\.(ts|mts|js|mjs)$/.test(name));
  } catch {
    return undefined;
  }
  const found = new Spelling(names).suggest(basename(file));
  if (found === undefined) return undefined;
  const folder = dirname(file);
  if (folder !== '.') return join(folder, found);
  return file.startsWith('./') ? `./${found}` : found;
}

function invalid(
  message: string,
  path: string,
  more: {
    readonly cause?: unknown;
    readonly reason?: string;
    readonly packageJson?: string | null;
    readonly nearest?: string;
  } = {},
): WaymarkError {
  const { cause, ...details } = more;
  return new WaymarkError('GRAPH_FILE_INVALID', message, {
    retryable: false,
    details: { path, ...details },
    ...(cause !== undefined && { cause }),
  });
}
