import { describe, expect, it } from 'vitest';
import { readEvent, readRun, readSnapshot, readWait } from '../../src/store/internal/rows.js';

// The SQLite schema has NOT NULL wherever the contract has no null, so these rows cannot be made
// with SQL; a file damaged on disk or written by another program can still hold them.
describe('reading stored rows', () => {
  it('a NULL where text is expected is STORE_CORRUPT naming the run, the table, the row and the column', () => {
    expect(() => readSnapshot({ seq: 2, data: null }, 'r1')).toThrow(
      expect.objectContaining({
        code: 'STORE_CORRUPT',
        message:
          'STORE_CORRUPT: run "r1" cannot be read: its snapshots row at seq 2 holds NULL in column data, expected text',
        details: { runId: 'r1', table: 'snapshots', key: 2, column: 'data' },
      }),
    );
  });

  it('a number where text is expected, or text where a number is, is STORE_CORRUPT', () => {
    expect(() => readEvent({ seq: 3, at: 1, event: 42, trace: null }, 'r1')).toThrow(
      /events row at seq 3 holds number 42 in column event, expected text/,
    );
    expect(() => readEvent({ seq: 3, at: '1', event: '{}', trace: null }, 'r1')).toThrow(
      /events row at seq 3 holds string "1" in column at, expected a time/,
    );
    expect(() => readEvent({ seq: 2.5, at: 1, event: '{}', trace: null }, 'r1')).toThrow(
      /column seq, expected an integer/,
    );
  });

  it('nullable columns read NULL as null', () => {
    expect(readEvent({ seq: 1, at: 5, event: '{}', trace: null }, 'r1')).toEqual({
      seq: 1,
      at: 5,
      event: '{}',
      trace: null,
    });
    const wait = {
      run_id: 'r1',
      request_id: 'q1',
      node: 'approve',
      activation: 'approve:1',
      request: '{}',
      opened_at: 1,
      answer: null,
      answered_by: null,
      answered_at: null,
      closed_at: null,
    };
    expect(readWait(wait, 'r1')).toMatchObject({
      answer: null,
      answeredBy: null,
      answeredAt: null,
    });
    expect(() => readWait({ ...wait, answered_at: 'soon' }, 'r1')).toThrow(
      /waits row "q1" holds string "soon" in column answered_at/,
    );
  });

  /** A runs row joined with its head, as the SQLite store reads it (schema version 3). */
  const runRow = {
    id: 'r1',
    graph: 'g',
    graph_hash: 'h',
    graph_version: 1,
    state_version: 1,
    format: 1,
    created_at: 1,
    labels: null,
    // from the head
    status: 'waiting',
    seq: 0,
    updated_at: 1,
    error: null,
  };

  it("a run's head with a status outside the contract is STORE_CORRUPT naming its events row", () => {
    expect(() => readRun({ ...runRow, status: 'paused' }, 'r1', 0)).toThrow(
      /events row at seq 0 holds string "paused" in column status/,
    );
    expect(readRun(runRow, 'r1', 0).status).toBe('waiting');
  });

  it('a run whose history has no head (its newest rows are gone) is STORE_CORRUPT', () => {
    const headless = { ...runRow, status: null, seq: null, updated_at: null };
    expect(() => readRun(headless, 'r1', 0)).toThrow(
      expect.objectContaining({
        code: 'STORE_CORRUPT',
        message: expect.stringMatching(/no row of its history holds its status/),
        details: { runId: 'r1', table: 'events' },
      }),
    );
  });
});
