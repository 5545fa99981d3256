import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { workQueueConformance } from '../../src/testing/index.js';

// The work queue conformance suite on SQLite: two connections to one file, as two worker
// processes on one machine would open it.
workQueueConformance(
  'SqliteStore',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-queue-'));
    const path = join(dir, 'waymark.db');
    const store = new SqliteStore({ path });
    const other = new SqliteStore({ path });
    return {
      store,
      other,
      cleanup: async () => {
        await store.close();
        await other.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { describe, it, beforeEach, afterEach, expect },
);
