import { type EffectLedger, effectKey, performEffect } from '../../effects/ledger.js';
import type {
  Memory,
  MemoryItem,
  MemoryPutOptions,
  MemorySearchOptions,
} from '../../graph/memory.js';
import type { ItemRecord } from '../../store/store.js';
import { memoryOf, newItem, readItem } from './memory-of.js';

/** Where `ctx.memory` is: the run, the activation, and the attempt's signal. */
export interface MemoryScope {
  readonly runId: string;
  readonly activationId: string;
  readonly signal: () => AbortSignal;
}

/**
 * `ctx.memory`: reads go to the store; each put and delete is an effect in the run's ledger,
 * named by the operation, the address and how many times this attempt wrote that address before
 * (`memory:put#1:[["users","u1"],"prefs"]`). A body run again (a crash, a retry, a resume) makes
 * the same writes in the same order for each address and finds them recorded: the store is not
 * written twice, and the call returns what the first one did. Names count per address, not per
 * call, so a body that writes other addresses in another order still finds its records.
 *
 * @example
 * const memory = recordedMemory(ledger, { runId, activationId: 'plan:1', signal: () => signal });
 */
export function recordedMemory(ledger: EffectLedger, scope: MemoryScope): Memory {
  const reads = memoryOf(ledger.items);
  const writes = new Map<string, number>();
  const key = (op: 'put' | 'delete', namespace: readonly string[], itemKey: string) => {
    const address = JSON.stringify([namespace, itemKey]);
    const n = (writes.get(`${op}${address}`) ?? 0) + 1;
    writes.set(`${op}${address}`, n);
    return effectKey(scope.runId, scope.activationId, `memory:${op}#${n}:${address}`);
  };
  return {
    get: reads.get,
    listNamespaces: reads.listNamespaces,
    search: <V>(prefix: readonly string[], options?: MemorySearchOptions) =>
      reads.search<V>(prefix, options),
    put: async <V>(
      namespace: readonly string[],
      itemKey: string,
      value: V,
      options?: MemoryPutOptions,
    ): Promise<MemoryItem<V>> => {
      // Checked before anything is recorded: a refused put records nothing.
      const item = newItem(namespace, itemKey, value, options);
      const recorded = await performEffect<ItemRecord>(
        ledger,
        key('put', item.namespace, itemKey),
        () => ledger.items.putItem(item),
        scope.signal(),
      );
      return readItem<V>(recorded);
    },
    delete: (namespace: readonly string[], itemKey: string) =>
      performEffect(
        ledger,
        key('delete', namespace, itemKey),
        () => ledger.items.deleteItem(namespace, itemKey),
        scope.signal(),
      ),
  };
}
