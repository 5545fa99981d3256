import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The web page of `waymark ui`: src/ui built into dist/ui, served by the API's server at /ui/.
// Vite 8 transforms TSX with oxc; React's automatic runtime needs no plugin. Everything is
// bundled (no CDN): the page works offline.
export default defineConfig({
  root: fileURLToPath(new URL('./src/ui/', import.meta.url)),
  base: '/ui/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  build: {
    outDir: fileURLToPath(new URL('./dist/ui/', import.meta.url)),
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: true,
    chunkSizeWarningLimit: 1024,
    rolldownOptions: {
      // @xyflow/react marks itself "use client" for server-rendering frameworks; meaningless here.
      onLog(level, log, handler) {
        if (log.code === 'MODULE_LEVEL_DIRECTIVE') return;
        handler(level, log);
      },
    },
  },
  logLevel: 'warn',
});
