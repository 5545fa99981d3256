import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';

/**
 * Where the built page lives: `dist/ui` of the package, found from this module's place, which is
 * `dist/server/` when installed, `src/server/` under tsx, or a transpiled copy of src/ under
 * node_modules/.cache in a clone (bin/clone.js). In a clone, `npm run build` makes it.
 */
export const uiDir = findUiDir();

function findUiDir(): string {
  let dir = fileURLToPath(new URL('.', import.meta.url));
  for (let i = 0; i < 8; i++) {
    // dist/ui beside dist/server; src/ui is the page's source (no assets), never served.
    for (const candidate of [join(dir, 'ui'), join(dir, 'dist', 'ui')]) {
      if (existsSync(join(candidate, 'index.html')) && existsSync(join(candidate, 'assets')))
        return candidate + sep;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return fileURLToPath(new URL('../../dist/ui/', import.meta.url));
}

/** Whether the page has been built (`npm run build`), so `waymark ui` has something to serve. */
export function uiBuilt(dir: string = uiDir): boolean {
  return existsSync(join(dir, 'index.html'));
}

const types: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.map': 'application/json',
};

// The page calls only its own origin; the graph library sets inline styles on elements.
const policy =
  "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

/**
 * The web page's files under `/ui/`, without the token: they are the same for everyone and hold
 * no data (the page asks the API for that, with the token). `/` sends a browser to `/ui/`.
 * Hashed assets are cached for good; `index.html` never, so a new build is picked up.
 *
 * @example
 * app.route('/', uiAssets(uiDir)); // before the token check
 */
export function uiAssets(dir: string): Hono {
  const root = normalize(dir);
  const assets = new Hono();
  assets.get('/', (c) => c.redirect('/ui/'));
  assets.get('/ui', (c) => c.redirect('/ui/'));
  assets.get('/ui/*', async (c) => {
    const wanted = decodeURIComponent(c.req.path.slice('/ui/'.length)) || 'index.html';
    const file = normalize(join(root, wanted));
    // A path that climbs out of the folder (`..`) is no file of the page.
    const inside = file.startsWith(root.endsWith(sep) ? root : root + sep);
    const body = inside ? await readFile(file).catch(() => undefined) : undefined;
    if (body === undefined) return c.text('no such file of the page', 404);
    const hashed = wanted.startsWith('assets/');
    return c.body(new Uint8Array(body), 200, {
      'content-type': types[extname(file)] ?? 'application/octet-stream',
      'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
      'content-security-policy': policy,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
  });
  return assets;
}
