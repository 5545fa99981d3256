import { defineConfig } from 'vitest/config';

// Two projects, run one after the other by `npm test`: everything, then the chaos test, alone.
// The chaos test restarts PostgreSQL, which would fail any other file's connections mid-test.
const chaos = ['test/workers/chaos.test.ts'];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'examples/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...chaos],
        },
      },
      { test: { name: 'chaos', include: chaos } },
    ],
  },
});
