import { defineConfig } from 'vitest/config';

// Two projects, run one after the other by `npm test`: everything, then the chaos test, alone
// (its four worker processes would skew the other files' timing). The global setup fails the
// run if the machine's PostgreSQL was restarted meanwhile: tests restart only their own servers.
const chaos = ['test/workers/chaos.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/support/machine-postgres.global.ts'],
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
