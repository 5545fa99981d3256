import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/memory-store.js';
import { workQueueConformance } from '../../src/testing/index.js';

workQueueConformance(
  'MemoryStore',
  async () => ({ store: new MemoryStore(), cleanup: async () => {} }),
  { describe, it, beforeEach, afterEach, expect },
);
