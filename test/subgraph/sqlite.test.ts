import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, loadTrace, resume, rewind, run } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { dyingAt } from '../support/stores.js';
import { askGraph, type Calls, postGraph } from './fixtures.js';

// The LangGraph subgraph bugs, made impossible, on a real SQLite file that each phase opens
// afresh, as a new process would.
const dirs: string[] = [];
const dbFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-subgraph-'));
  dirs.push(dir);
  return join(dir, 'waymark.db');
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function withStore<T>(path: string, fn: (store: SqliteStore) => Promise<T>): Promise<T> {
  const store = new SqliteStore({ path });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

describe('subgraphs on a SQLite file', () => {
  it('after a wait inside a subgraph, the child nodes completed before it do not run again', async () => {
    const path = dbFile();
    const calls: Calls = {};
    const g = askGraph(calls);

    const first = await withStore(path, (store) => run(g, { text: 'post' }, { store, runId: 'r' }));
    expect(first.status).toBe('waiting');
    await withStore(path, (store) =>
      answer(store, 'r', 'r/ask/approve:1', { approved: true }, { by: 'editor' }),
    );
    const done = await withStore(path, (store) => resume(store, g, 'r'));

    expect(done.status).toBe('succeeded');
    expect(done.state.result).toBe('published post!');
    expect(calls).toEqual({ start: 1, draft: 1, finish: 1 });
  });

  it('a crash inside the child resumes inside it from the file, no completed child node again', async () => {
    const path = dbFile();
    const calls: Calls = {};
    const g = postGraph(calls);
    await withStore(path, (store) =>
      run(g, { text: 'one two three' }, { store: dyingAt(store, 5), runId: 'r' }).catch(
        () => 'died',
      ),
    );
    expect(calls).toEqual({ prep: 1, read: 1, score: 1, accept: 1 });

    const resumed = await withStore(path, (store) => resume(store, g, 'r', { snapshotEvery: 1 }));

    expect(resumed.status).toBe('succeeded');
    expect(calls).toEqual({ prep: 1, read: 1, score: 1, accept: 2, publish: 1 });
    const trace = await withStore(path, (store) => loadTrace(store, 'r'));
    expect(trace.path).toEqual(['prep', 'review/read', 'review/score', 'review/accept', 'publish']);
  });

  it('rewinding to a node inside the subgraph does not re-run its earlier nodes', async () => {
    const path = dbFile();
    const calls: Calls = {};
    const g = postGraph(calls);
    await withStore(path, (store) => run(g, { text: 'one two three' }, { store, runId: 'first' }));

    const second = await withStore(path, (store) =>
      rewind(store, g, 'first', { to: 'review/accept', runId: 'second' }),
    );

    expect(second.status).toBe('succeeded');
    expect(second.trace.path).toEqual(['review/accept', 'publish']);
    expect(calls).toEqual({ prep: 1, read: 1, score: 1, accept: 1, publish: 1 });
  });
});
