import pg from 'pg';
import { afterEach, beforeAll, expect, it, vi } from 'vitest';
import { PostgresStore } from '../../src/postgres.js';
import { plannerSettings } from '../../src/store/internal/pg-planner.js';
import { pgStatements } from '../../src/store/internal/pg-sql.js';
import { sampleRun } from '../../src/testing/index.js';
import {
  analyzedPlan,
  describePg,
  pgStoreForFile,
  pgUrl,
  skipReason,
} from './fixtures/postgres.js';

// A worker's claims and commits must not depend on what PostgreSQL knows of the tables. A table
// that is new, truncated, or grew since autovacuum last analyzed it has no statistics that fit,
// and the plan a connection caches then sorted every live run to claim 8, read the events
// table end to end, and scanned every run to commit a batch: 874 runs/s instead of 3,300 with a
// backlog of 20,000 (bench/workers.ts throughput). The store's own connections plan by index.

const db = pgStoreForFile({ emptied: false });
const { schema } = db;

beforeAll(async () => {
  if (skipReason !== undefined) return;
  // No statistics, ever, for the whole file: what a table has before its first autoanalyze.
  for (const table of [
    'runs',
    'events',
    'snapshots',
    'inbox',
    'tasks',
    'timers',
    'rate_admissions',
  ]) {
    await db.pool.query(`ALTER TABLE "${schema}".${table} SET (autovacuum_enabled = false)`);
  }
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** A connection that plans as the store's own do, and caches one plan for any values. */
async function plannedAsTheStore(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  await client.query(plannerSettings);
  await client.query('SET plan_cache_mode = force_generic_plan');
  return client;
}

/** The node types and names of an EXPLAIN (FORMAT JSON) plan, flattened. */
function nodesOf(plan: unknown): { type: string; relation?: string; removed?: number }[] {
  const out: { type: string; relation?: string; removed?: number }[] = [];
  const walk = (node: Record<string, unknown>) => {
    out.push({
      type: node['Node Type'] as string,
      ...(node['Relation Name'] !== undefined && { relation: node['Relation Name'] as string }),
      ...(node['Rows Removed by Filter'] !== undefined && {
        removed: node['Rows Removed by Filter'] as number,
      }),
    });
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk((plan as { Plan: Record<string, unknown> }[])[0]!.Plan);
  return out;
}

/** A plan that walks an index to what it takes: no sort, no table scan, few rows passed over. */
function expectIndexWalk(nodes: ReturnType<typeof nodesOf>): void {
  expect(nodes.map((n) => n.type)).not.toContain('Sort');
  expect(nodes.filter((n) => n.type === 'Seq Scan')).toEqual([]);
  expect(nodes.filter((n) => (n.removed ?? 0) >= 100)).toEqual([]);
}

describePg('PostgreSQL store: plans that do not depend on statistics', () => {
  it('every connection of the store’s own pool takes the planner settings before its first statement', async () => {
    const sent = new Map<unknown, string[]>();
    const query = pg.Client.prototype.query;
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
      sent.set(this, [...(sent.get(this) ?? []), text]);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query);
    const own = new PostgresStore({ connectionString: pgUrl, schema, poolSize: 2 });
    try {
      await Promise.all([own.getRun('nobody'), own.getRun('nobody-else')]);
    } finally {
      await own.close();
    }
    expect(sent.size).toBeGreaterThan(0);
    for (const texts of sent.values()) expect(texts[0]).toBe(plannerSettings);
  });

  it('a pool given to the store keeps its own settings: its connections serve other code too', async () => {
    await db.store.getRun('nobody');
    const { rows } = await db.pool.query(
      "SELECT current_setting('enable_sort') AS sort, current_setting('jit') AS jit",
    );
    expect(rows[0]).toEqual({ sort: 'on', jit: 'on' });
  });

  it('a claim of 8 among 2,000 live runs, none analyzed, walks the live runs’ index and reads each run it took by key', async () => {
    await db.store.createRuns(
      Array.from({ length: 2_000 }, (_, i) =>
        sampleRun(`live-${String(i).padStart(4, '0')}`, {
          graph: 'g',
          graphHash: 'h',
          createdAt: i,
        }),
      ),
    );
    // History of older runs, so that a scan of the events would cost something.
    await db.pool.query(
      `INSERT INTO "${schema}".events (run_id, seq, at, event)
       SELECT 'old-' || i, s, 0, '{}' FROM generate_series(1, 2000) i, generate_series(1, 5) s`,
    );
    const { rows: analyzed } = await db.pool.query(
      `SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE schemaname = $1
         AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)`,
      [schema],
    );
    expect(analyzed[0].n).toBe(0);
    const client = await plannedAsTheStore();
    try {
      const statements = pgStatements(`"${schema}"`);
      for (const [name, { text }] of [['claim_and_load', statements.claimAndLoad]] as const) {
        const nodes = nodesOf(
          await analyzedPlan(client, name, text, `('{g}', '{h}', 8, 'w', NULL, NULL, 1000)`),
        );
        const scans = nodes.filter((n) => n.relation !== undefined && n.type.includes('Scan'));
        expect(scans.find((n) => n.relation === 'runs')?.type).toBe('Index Scan');
        expectIndexWalk(nodes);
      }
    } finally {
      await client.end();
    }
  });

  it('a claim of 8 among 2,000 queued tasks, none analyzed, walks the tasks in the order they are served', async () => {
    // Queued tasks of the claimed graph, older tasks that others are running (their leases
    // live), and a retry not yet due: what a claim must pass over without sorting them all.
    await db.pool.query(
      `INSERT INTO "${schema}".tasks (run_id, activation, attempt, node, graph, graph_hash, input,
         not_before, owner, epoch, expires_at, created_at)
       SELECT 'q-' || i, 'a', 1, 'work', 'g', 'h', '{}', NULL::bigint, NULL, 0, 0::bigint,
           1000 + i FROM generate_series(1, 2000) i
       UNION ALL
       SELECT 'busy-' || i, 'a', 1, 'work', 'g', 'h', '{}', NULL, 'other', 1, 9e15::bigint, i
         FROM generate_series(1, 50) i
       UNION ALL SELECT 'later', 'a', 2, 'work', 'g', 'h', '{}', 9e15::bigint, NULL, 0, 0, 0`,
    );
    const client = await plannedAsTheStore();
    try {
      const { claimTasks } = pgStatements(`"${schema}"`);
      const plan = await analyzedPlan(
        client,
        'claim_tasks',
        claimTasks.text,
        `('{g}', '{h}', 8, 'w', 1000)`,
      );
      const nodes = nodesOf(plan);
      expect(JSON.stringify(plan)).toContain('"Index Name":"tasks_due"');
      expectIndexWalk(nodes);
    } finally {
      await client.end();
    }
  });

  it('an admission among 2,000 of other resources, none analyzed, reads its resource’s window by index', async () => {
    // Every admission of a busy deployment's resources, and a minute of one: what an admission
    // and a window's count must not read through.
    await db.pool.query(
      `INSERT INTO "${schema}".rate_admissions (resource, id, at, tokens)
       SELECT 'other-' || (i % 20), 'a' || i, 1000000 - i, 10 FROM generate_series(1, 2000) i
       UNION ALL SELECT 'openai', 'b' || i, 1000000 - i * 1000, 10 FROM generate_series(1, 90) i`,
    );
    const client = await plannedAsTheStore();
    try {
      const statements = pgStatements(`"${schema}"`);
      for (const key of ['rateLook', 'rateWindow', 'rateSettle'] as const) {
        const args = key === 'rateSettle' ? `('openai', 'b1', 5)` : `('openai', 1000000)`;
        const plan = await analyzedPlan(
          client,
          `p_${key.toLowerCase()}`,
          statements[key].text,
          args,
        );
        const nodes = nodesOf(plan);
        const scans = nodes.filter(
          (n) => n.relation === 'rate_admissions' && n.type.includes('Scan'),
        );
        expect(scans.length).toBeGreaterThan(0);
        for (const scan of scans) expect(scan.type).toMatch(/^Index (Only )?Scan$/);
        expectIndexWalk(nodes);
      }
    } finally {
      await client.end();
    }
  });

  it('no statement of the store scans a table or sorts more than one run’s rows, whatever the statistics', async () => {
    // The sorts that stay have nowhere better to come from: one run's tasks, timers, effects
    // or waits in the order a caller reads them, and a batch given in one call, in its order.
    // The sweep of lapsed watchers reads the small table of live watches.
    // Of the time statements (issue 32): the due schedules and a key's queued runs in the order
    // they start; the oldest kept signal for an event wait, and the open waits of one
    // { graph, name, key } in the order they asked. Listing every schedule or every signal is an
    // operator's read of a small table (one row a schedule; kept signals expire in 7 days).
    const allowed: Record<string, string[]> = {
      dueSchedules: ['Sort'],
      finishTasks: ['Sort'],
      listQueued: ['Sort'],
      listSchedules: ['Sort', 'Seq Scan schedules'],
      listSignals: ['Sort', 'Seq Scan signals'],
      listTasks: ['Sort'],
      listTimers: ['Sort'],
      listEffects: ['Sort'],
      listWaits: ['Sort'],
      matchSignal: ['Incremental Sort'],
      redeliverSignal: ['Sort'],
      sendSignal: ['Sort'],
      watch: ['Seq Scan watched'],
    };
    const client = await plannedAsTheStore();
    try {
      const found: Record<string, string[]> = {};
      for (const [key, { text }] of Object.entries(pgStatements(`"${schema}"`))) {
        const name = `p_${key.toLowerCase()}`;
        await client.query(`PREPARE ${name} AS ${text}`);
        const { rows } = await client.query(
          'SELECT cardinality(parameter_types) AS n FROM pg_prepared_statements WHERE name = $1',
          [name],
        );
        const args = Array.from({ length: rows[0].n }, () => 'NULL').join(', ');
        const { rows: plan } = await client.query(
          `EXPLAIN (FORMAT JSON) EXECUTE ${name}${rows[0].n > 0 ? `(${args})` : ''}`,
        );
        const worrying = nodesOf(plan[0]['QUERY PLAN'])
          .filter((n) => /Seq Scan|Sort|Hash Join|Merge Join|Bitmap/.test(n.type))
          .map((n) => (n.relation === undefined ? n.type : `${n.type} ${n.relation}`));
        if (worrying.length > 0) found[key] = [...new Set(worrying)];
      }
      expect(found).toEqual(allowed);
    } finally {
      await client.end();
    }
  });
});
