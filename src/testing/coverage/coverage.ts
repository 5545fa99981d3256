import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store } from '../../store/store.js';
import { listAll } from '../history/recorded.js';
import { type CoverageSkip, exercisedBy } from './exercised.js';
import { type CoverageItem, type CoverageKind, coverageItems, coverageKinds } from './items.js';

/** How much of one kind of item the recorded runs exercised. */
export interface KindCoverage {
  readonly covered: number;
  readonly total: number;
  /** 100 when the graph declares none of this kind: nothing was missed. */
  readonly percent: number;
}

/**
 * Which declared items of a graph the recorded runs exercised: per kind, the items with how
 * many runs exercised each, and the ones missed; the runs read, and those skipped with why.
 *
 * @example
 * expect(report.kinds.route.percent).toBe(100);
 */
export interface CoverageReport {
  readonly graph: string;
  readonly kinds: Readonly<Record<CoverageKind, KindCoverage>>;
  readonly items: readonly (CoverageItem & { readonly runs: number })[];
  readonly missed: readonly CoverageItem[];
  readonly runs: number;
  readonly skipped: readonly { readonly runId: string; readonly reason: CoverageSkip }[];
}

/** A coverage collector of one graph: record runs into it, then ask for the report. */
export interface GraphCoverage {
  /**
   * Marks what the stored runs exercised: `runId`, or every run of this graph the store holds.
   * Reads the store through its public interface only, so it works on any store.
   */
  record(store: Store, runId?: string): Promise<void>;
  report(): CoverageReport;
}

/**
 * A coverage collector for `graph`: the declared routes, error edges, join outcomes, waits and
 * caps, and which of them the runs recorded into it took.
 *
 * @example
 * const coverage = graphCoverage(triage);
 * await coverage.record(store); // after the suite's runs
 * expect(coverage.report().missed.filter((i) => i.kind === 'route')).toEqual([]);
 */
export function graphCoverage<S, I, O>(graph: CompiledGraph<S, I, O>): GraphCoverage {
  const g = graph as unknown as CompiledGraph;
  const items = coverageItems(g);
  const counts = new Map<string, number>(items.map((i) => [i.id, 0]));
  const read = new Set<string>();
  const skipped: { runId: string; reason: CoverageSkip }[] = [];
  const recordOne = async (store: Store, runId: string) => {
    const exercised = await exercisedBy(store, g, runId);
    if ('skipped' in exercised) {
      // Every run of a store is offered; one of another graph is not worth a line.
      if (exercised.skipped !== 'other-graph') skipped.push({ runId, reason: exercised.skipped });
      return;
    }
    read.add(runId);
    for (const id of exercised.items) counts.set(id, (counts.get(id) ?? 0) + 1);
  };
  return {
    async record(store, runId) {
      for (const id of runId === undefined ? await listAll(store) : [runId])
        await recordOne(store, id);
    },
    report() {
      const withRuns = items.map((i) => ({ ...i, runs: counts.get(i.id) ?? 0 }));
      const kinds = Object.fromEntries(
        coverageKinds.map((kind) => {
          const of = withRuns.filter((i) => i.kind === kind);
          const covered = of.filter((i) => i.runs > 0).length;
          const percent = of.length === 0 ? 100 : Math.floor((covered / of.length) * 1000) / 10;
          return [kind, { covered, total: of.length, percent }];
        }),
      ) as Record<CoverageKind, KindCoverage>;
      return {
        graph: g.name,
        kinds,
        items: withRuns,
        missed: withRuns.filter((i) => i.runs === 0).map(({ runs: _runs, ...i }) => i),
        runs: read.size,
        skipped: [...skipped],
      };
    },
  };
}

/**
 * A coverage report as text: one line per kind with its percentage, then each item missed.
 *
 * @example
 * console.log(formatCoverage(coverage.report()));
 */
export function formatCoverage(report: CoverageReport): string {
  const lines = [`coverage of ${report.graph} over ${report.runs} run(s)`];
  for (const kind of coverageKinds) {
    const { covered, total, percent } = report.kinds[kind];
    lines.push(`  ${`${kind}s`.padEnd(7)} ${String(percent).padStart(5)}%  ${covered}/${total}`);
  }
  if (report.missed.length > 0) lines.push('missed:', ...report.missed.map((i) => `  ${i.id}`));
  for (const { runId, reason } of report.skipped) lines.push(`skipped run ${runId}: ${reason}`);
  return lines.join('\n');
}
