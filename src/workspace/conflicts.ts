/** One region of a file both sides changed: its first line in the marked file, and three sides. */
export interface ConflictHunk {
  /** The line (1-based) where the region starts in the file with markers. */
  readonly line: number;
  /** What the branches merged before had there. */
  readonly ours: string;
  /** What the common base had there. */
  readonly base: string;
  /** What the branch being merged has there. */
  readonly theirs: string;
}

/** A conflicted path as `merge-tree -z` reports it: the path and git's conflict type. */
export interface ParsedConflict {
  readonly path: string;
  readonly type: string;
}

/**
 * Reads `git merge-tree --write-tree -z` output: the result tree, then the conflicted files
 * (`<mode> <oid> <stage>\t<path>`), then messages (`<n> NUL <paths> NUL <type> NUL <text>`).
 * The types are git's stable strings (`CONFLICT (contents)`); the texts are not read.
 *
 * @example
 * const { tree, conflicts } = parseMergeTree(stdout);
 */
export function parseMergeTree(out: string): {
  readonly tree: string;
  readonly conflicts: readonly ParsedConflict[];
} {
  const parts = out.split('\0');
  const tree = parts[0]!.trim();
  let i = 1;
  const staged = new Set<string>();
  for (; i < parts.length && parts[i] !== ''; i++) {
    const tab = parts[i]!.indexOf('\t');
    if (tab >= 0) staged.add(parts[i]!.slice(tab + 1));
  }
  i++;
  const types = new Map<string, string>();
  while (i < parts.length && parts[i] !== '') {
    const n = Number(parts[i]);
    if (!Number.isInteger(n) || n < 1) break;
    const paths = parts.slice(i + 1, i + 1 + n);
    const type = parts[i + 1 + n] ?? '';
    i += n + 3;
    const m = /^CONFLICT \((.+)\)$/.exec(type);
    if (m === null) continue;
    for (const path of paths) if (!types.has(path)) types.set(path, m[1]!);
  }
  // Every path with stages is a conflict, typed or not (git 2.39 types add/add as contents).
  for (const path of staged) if (!types.has(path)) types.set(path, 'contents');
  const conflicts = [...types].map(([path, type]) => ({ path, type }));
  conflicts.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { tree, conflicts };
}

/**
 * The conflicting regions of a file with diff3 markers (`<<<<<<<`, `|||||||`, `=======`,
 * `>>>>>>>`), in order.
 *
 * @example
 * hunksOf('a\n<<<<<<< x\nONE\n||||||| b\nb\n=======\nTWO\n>>>>>>> y\n') // [{ line: 2, ours: 'ONE\n', base: 'b\n', theirs: 'TWO\n' }]
 */
export function hunksOf(text: string): ConflictHunk[] {
  const lines = text.split('\n');
  const hunks: ConflictHunk[] = [];
  let at = -1;
  let part: 'ours' | 'base' | 'theirs' | undefined;
  let sides = { ours: '', base: '', theirs: '' };
  lines.forEach((l, n) => {
    if (part === undefined) {
      if (l.startsWith('<<<<<<<')) {
        at = n + 1;
        part = 'ours';
        sides = { ours: '', base: '', theirs: '' };
      }
      return;
    }
    if (l.startsWith('|||||||') && part === 'ours') part = 'base';
    else if (l.startsWith('=======') && part !== 'theirs') part = 'theirs';
    else if (l.startsWith('>>>>>>>') && part === 'theirs') {
      hunks.push({ line: at, ...sides });
      part = undefined;
    } else sides[part] += `${l}\n`;
  });
  return hunks;
}
