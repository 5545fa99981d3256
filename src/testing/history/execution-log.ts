import { z } from 'zod';

// What ran where and when, as a test harness saw it: the other half of a history check. A
// store records what was committed; only the processes that ran the bodies know when each body
// started, and under which lease. One JSON object per line, so that many processes (workers
// killed at any moment) can append to one file and a torn last line loses only that line.

const AttemptRecord = z.object({
  type: z.literal('attempt'),
  runId: z.string(),
  activation: z.string(),
  attempt: z.number().int().min(1),
  /** Who ran it: a worker id, a process id, a host and pid. */
  holder: z.string(),
  /** When the body started, in ms since the epoch (the clock the store's commits use). */
  at: z.number(),
  /** The lease epoch it ran under, when the harness knows it. */
  epoch: z.number().int().optional(),
});

const LeaseRecord = z.object({
  type: z.literal('lease'),
  runId: z.string(),
  /** The task's activation for a task lease; absent for the run's own lease. */
  activation: z.string().optional(),
  holder: z.string(),
  epoch: z.number().int(),
  at: z.number(),
});

const EffectRecord = z.object({
  type: z.literal('effect'),
  /** The idempotency key the receiver applied. */
  key: z.string(),
  /** JSON of what the receiver answered, when the run records it as the effect's result. */
  result: z.string().optional(),
  at: z.number(),
});

/** One line of an execution log: an attempt started, a lease held, an effect applied. */
export const ExecutionRecord = z.discriminatedUnion('type', [
  AttemptRecord,
  LeaseRecord,
  EffectRecord,
]);

/**
 * One line of an execution log: `attempt` (a node body started, by whom, when, under which
 * epoch), `lease` (a holder took a run's or a task's lease at an epoch), `effect` (a receiver
 * applied an idempotency key).
 */
export type ExecutionRecord = z.infer<typeof ExecutionRecord>;

/**
 * The line a harness appends to its execution log for one record.
 *
 * @example
 * appendFileSync(log, executionLine({ type: 'attempt', runId: ctx.runId,
 *   activation: ctx.activationId, attempt: ctx.attempt, holder: String(process.pid), at: Date.now() }));
 */
export function executionLine(record: ExecutionRecord): string {
  return `${JSON.stringify(record)}\n`;
}

/**
 * Reads an execution log back. A line that does not parse is left out and counted: the last
 * line of a process killed while it wrote is torn, and that must not hide the rest.
 *
 * @example
 * const { records, torn } = parseExecutionLog(readFileSync(log, 'utf8'));
 */
export function parseExecutionLog(text: string): {
  readonly records: ExecutionRecord[];
  readonly torn: number;
} {
  const records: ExecutionRecord[] = [];
  let torn = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      torn++;
      continue;
    }
    const parsed = ExecutionRecord.safeParse(value);
    if (parsed.success) records.push(parsed.data);
    else torn++;
  }
  return { records, torn };
}
