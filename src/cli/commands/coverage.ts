import { WaymarkError } from '../../error/waymark-error.js';
import {
  type CoverageReport,
  formatCoverage,
  graphCoverage,
} from '../../testing/coverage/coverage.js';
import { type CoverageKind, coverageKinds } from '../../testing/coverage/items.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { loadGraph } from '../load-graph.js';
import { noDatabase, withExistingStore } from '../session.js';

/** `waymark coverage <graph-file>`: what the database's runs of the graph exercised. */
export async function coverage(
  out: Io,
  file: string,
  flags: { readonly min?: string; readonly kinds: string },
): Promise<number> {
  const min = flags.min === undefined ? undefined : Number(flags.min);
  if (min !== undefined && !(Number.isFinite(min) && min >= 0 && min <= 100))
    throw usage(`--min ${flags.min} must be a percentage from 0 to 100`);
  const kinds = flags.kinds.split(',').map((k) => k.trim());
  const unknown = kinds.find((k) => !coverageKinds.includes(k as CoverageKind));
  if (unknown !== undefined)
    throw usage(`--kinds: ${unknown} is not a kind; use ${coverageKinds.join(', ')}`);
  out.about.graphFile = file;
  const { graph } = await loadGraph(file);
  const collector = graphCoverage(graph);
  const found = await withExistingStore(out, (store) => collector.record(store));
  // No database is no runs: every item missed, which is what a suite that wrote none reached.
  if (found === undefined) out.error(`${noDatabase(out)}: no runs read`);
  const report = collector.report();
  const below =
    min === undefined ? [] : kinds.filter((k) => report.kinds[k as CoverageKind].percent < min);
  out.json({ type: 'coverage', ...jsonOf(report), ...(min !== undefined && { min, below }) });
  out.essential(formatCoverage(report));
  if (below.length === 0) return exitCode.succeeded;
  out.error(`coverage of ${below.join(', ')} is below --min ${min}`);
  return exitCode.failed;
}

function jsonOf(report: CoverageReport) {
  return {
    graph: report.graph,
    runs: report.runs,
    kinds: report.kinds,
    missed: report.missed.map((i) => i.id),
    skipped: report.skipped,
  };
}

function usage(message: string): WaymarkError {
  return new WaymarkError('USAGE_INVALID', message, { retryable: false });
}
