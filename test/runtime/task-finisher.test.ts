import { describe, expect, it } from 'vitest';
import { TaskFinisher } from '../../src/runtime/worker/task-finisher.js';
import type { ClaimedTask, FinishedTask } from '../../src/store/store.js';

// A worker's results go to the store in batches: those that end in one loop turn, or while the
// statement before is in flight, share one statement; none waits for a timer.

function task(activation: string): ClaimedTask {
  return {
    runId: 'r1',
    activation,
    attempt: 1,
    node: 'work',
    graph: 'g',
    graphHash: 'h',
    notBefore: null,
    input: '{}',
    owner: 'w1',
    epoch: 1,
    expiresAt: 0,
  };
}

/** A store whose statements the test ends by hand; every activation named in `lost` lost its lease. */
function store(lost: readonly string[] = []) {
  const calls: FinishedTask[][] = [];
  const pending: (() => void)[] = [];
  return {
    calls,
    /** Lets the oldest statement in flight return. */
    land: () => pending.shift()?.(),
    finishTasks(finished: readonly FinishedTask[]): Promise<boolean[]> {
      calls.push([...finished]);
      return new Promise((resolve) =>
        pending.push(() => resolve(finished.map((f) => !lost.includes(f.task.activation)))),
      );
    },
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('TaskFinisher', () => {
  it('writes the results of tasks that end in one turn in one statement, in the order they ended', async () => {
    const s = store(['b']);
    const finisher = new TaskFinisher(s);
    const results = ['a', 'b', 'c'].map((id) => finisher.finish(task(id), `"${id}"`, 1));
    await turn();
    expect(s.calls.map((c) => c.map((f) => f.task.activation))).toEqual([['a', 'b', 'c']]);
    s.land();
    expect(await Promise.all(results)).toEqual([true, false, true]);
  });

  it('gathers the results that end while a statement is in flight into the next one', async () => {
    const s = store();
    const finisher = new TaskFinisher(s);
    const first = finisher.finish(task('a'), '"a"', 1);
    await turn();
    const later = ['b', 'c'].map((id) => finisher.finish(task(id), `"${id}"`, 2));
    await turn();
    expect(s.calls).toHaveLength(1);
    s.land();
    await first;
    await turn();
    expect(s.calls.map((c) => c.map((f) => f.task.activation))).toEqual([['a'], ['b', 'c']]);
    s.land();
    expect(await Promise.all(later)).toEqual([true, true]);
  });

  it('a statement that fails rejects each of its results, and the next batch is written anyway', async () => {
    let fail = true;
    const finisher = new TaskFinisher({
      finishTasks: async (finished) => {
        if (fail) {
          fail = false;
          throw new Error('connection reset');
        }
        return finished.map(() => true);
      },
    });
    const failed = finisher.finish(task('a'), '"a"', 1);
    await expect(failed).rejects.toThrow('connection reset');
    await expect(finisher.finish(task('b'), '"b"', 2)).resolves.toBe(true);
  });
});
