import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * waymark's version, from the package.json of the package this file is part of: found by
 * walking up from here, since the file may run from src/, dist/, or the CLI's transpiled copy
 * under node_modules/.cache. `0.0.0` when none is found.
 */
export const waymarkVersion: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
        if (pkg.name === 'waymark' && typeof pkg.version === 'string') return pkg.version;
      } catch {
        // not a package.json this reads: keep walking
      }
    }
    const up = dirname(dir);
    if (up === dir) return '0.0.0';
    dir = up;
  }
})();
