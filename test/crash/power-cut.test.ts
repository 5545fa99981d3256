import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, graph, inspect, resume, run } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';

// A power cut, as SQLite in WAL mode with `synchronous: 'normal'` can meet it: the commits since
// the last checkpoint live in the WAL, which the operating system had not yet written out, so
// the disk holds the database file and a prefix of the WAL, possibly ending in a torn frame.
// (A process crash never loses them: the OS has them; `synchronous: 'full'` fsyncs each commit,
// so a cut keeps every commit that returned.) Each cut below is such a prefix of a real WAL,
// copied while the store was open. Opened again, the store is consistent at an earlier point:
// every run loads (none is half-written, none corrupt), none is ahead of where it really got,
// and resumed, each ends in the state it ended in before the cut.

const chain = graph('power-cut', {
  state: z.object({ n: z.number().default(0), log: z.array(z.string()).default([]) }),
  reducers: { log: append },
})
  .node('a', (s) => ({ n: s.n + 1, log: ['a'] }))
  .node('b', (s) => ({ n: s.n * 10, log: ['b'] }))
  .node('c', (s) => ({ n: s.n + 7, log: ['c'] }))
  .node('d', (s) => ({ n: s.n * 2, log: ['d'] }), { terminal: true })
  .edge('a', 'b')
  .edge('b', 'c')
  .edge('c', 'd')
  .entry('a')
  .compile();

const dir = mkdtempSync(join(tmpdir(), 'waymark-power-cut-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const walHeaderBytes = 32;
const frameHeaderBytes = 24;

describe('a power cut under synchronous: normal', () => {
  it('keeps a consistent prefix: every run loads, none is ahead, and each resumes to its end state', async () => {
    const path = join(dir, 'runs.db');
    const store = new SqliteStore({ path });
    const runIds = Array.from({ length: 12 }, (_, i) => `r${i}`);
    const ended = new Map<string, { n: number; log: string[] }>();
    const seqs = new Map<string, number>();
    for (const runId of runIds) {
      const result = await run(chain, {}, { store, runId, snapshotEvery: 2 });
      expect(result.status).toBe('succeeded');
      ended.set(runId, result.state);
      seqs.set(runId, (await store.getRun(runId))!.seq);
    }
    // Copied while the store is open: closing it would checkpoint the WAL into the file.
    const db = readFileSync(path);
    const wal = readFileSync(`${path}-wal`);
    await store.close();
    const pageSize = db.readUInt16BE(16) === 1 ? 65_536 : db.readUInt16BE(16);
    const frameBytes = frameHeaderBytes + pageSize;
    const frames = Math.floor((wal.length - walHeaderBytes) / frameBytes);
    expect(frames).toBeGreaterThan(10);

    // No frame, a few, half, all but one, a torn last frame, and all of them.
    const cuts = [
      0,
      walHeaderBytes + 3 * frameBytes,
      walHeaderBytes + Math.floor(frames / 2) * frameBytes,
      walHeaderBytes + (frames - 1) * frameBytes,
      walHeaderBytes + (frames - 1) * frameBytes + Math.floor(frameBytes / 3),
      wal.length,
    ];
    const resumedRuns: number[] = [];
    for (const [i, cut] of cuts.entries()) {
      const copy = join(dir, `cut-${i}.db`);
      writeFileSync(copy, db);
      writeFileSync(`${copy}-wal`, wal.subarray(0, cut));
      const after = new SqliteStore({ path: copy });
      try {
        const listed = await after.listRuns();
        let resumed = 0;
        for (const record of listed) {
          expect(record.seq, `${record.id} at cut ${i}`).toBeLessThanOrEqual(seqs.get(record.id)!);
          const view = await inspect(after, chain, record.id);
          if (view.snapshot.status !== 'succeeded') {
            resumed++;
            expect((await resume(after, chain, record.id)).status).toBe('succeeded');
          }
          expect((await inspect(after, chain, record.id)).snapshot.state).toEqual(
            ended.get(record.id),
          );
        }
        resumedRuns.push(resumed);
        // The whole WAL keeps everything: the cut that loses nothing.
        if (cut === wal.length) expect(listed.map((r) => r.id).sort()).toEqual([...runIds].sort());
      } finally {
        await after.close();
      }
    }
    // Some cuts land mid-run: those runs were behind, and went on from where the cut left them.
    expect(resumedRuns.some((n) => n > 0)).toBe(true);
    expect(resumedRuns.at(-1)).toBe(0);
  });
});
