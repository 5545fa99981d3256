import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The bundled corpus: small source files with planted resilience defects and decoys. They are
 * stored as `<name>.ts.txt` so the project's type-check and formatter leave them (and so their
 * line numbers) alone; the audit sees them under their source names (`src/http/client.ts`).
 */
const root = fileURLToPath(new URL('./corpus/', import.meta.url));
const suffix = '.txt';

/**
 * Every file of the corpus by its exact name, read once. Lookups compare names exactly, never
 * through the file system: on a case-insensitive disk `src/Queue/buffer.ts` would open
 * `src/queue/buffer.ts`, and a finding citing the wrong path would pass as real.
 */
const files: ReadonlyMap<string, string> = new Map(
  readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((entry) => entry.split('\\').join('/'))
    .filter((entry) => entry.endsWith(suffix))
    .sort()
    .map((entry) => [entry.slice(0, -suffix.length), readFileSync(root + entry, 'utf8')]),
);

/** The names of the corpus files, sorted. */
export function corpusFiles(): string[] {
  return [...files.keys()];
}

/** The text of a corpus file by its exact, case-sensitive name; `undefined` if there is none. */
export function readSource(file: string): string | undefined {
  return files.get(file);
}

/** The lines of a source text, 1-based through `lines[n - 1]`, without a trailing empty line. */
export function linesOf(source: string): string[] {
  const lines = source.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}
