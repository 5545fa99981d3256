import { MemoryStore } from '../../src/store/memory-store.js';
import { storeConformance } from './conformance.js';

storeConformance('MemoryStore', async () => ({
  store: new MemoryStore(),
  cleanup: async () => {},
}));
