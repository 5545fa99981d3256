// Summarizes several `npm run bench -- --json <file>` results into the numbers docs/performance.md
// publishes: for every row, the median of the runs' medians with the lowest and highest run median
// in brackets, the same for the paired ratio, and how many runs met the target. Rows that are
// text (growth, bytes) are listed run by run.
//
//   node --import tsx bench/summarize.ts run1.json run2.json run3.json

import { readFileSync } from 'node:fs';
import type { Stat } from './lib/measure.js';
import type { Row, ScenarioReport } from './lib/report.js';

interface Result {
  readonly env: Readonly<Record<string, unknown>>;
  readonly loadBefore: number;
  readonly seconds: number;
  readonly reports: readonly ScenarioReport[];
  readonly failures: readonly string[];
}

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write('usage: node --import tsx bench/summarize.ts <result.json>...\n');
  process.exit(2);
}
const records = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Result);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
function num(n: number): string {
  if (n >= 100) return Math.round(n).toLocaleString('en-US');
  if (n >= 10) return n.toFixed(1);
  return n.toFixed(2);
}
function across(values: readonly number[], unit = ''): string {
  const u = unit === '' ? '' : ` ${unit}`;
  return `${num(median(values))}${u} [${num(Math.min(...values))}-${num(Math.max(...values))}]`;
}

const out: string[] = [];
out.push(
  `${records.length} runs; waymark ${records[0]?.reports[0]?.waymarkOrigin}; load before ${records.map((r) => r.loadBefore.toFixed(2)).join(', ')}; took ${records.map((r) => r.seconds.toFixed(0)).join(', ')} s`,
);
const failed = records.flatMap((r) => r.failures);
if (failed.length > 0) out.push(`FAILURES: ${failed.join('; ')}`);

// Rows are matched by scenario and measure, in the first run's order.
const first = records[0]!;
for (const report of first.reports) {
  out.push('', `## ${report.scenario}: ${report.title}`);
  for (const row of report.rows) {
    const same = records
      .map((r) =>
        r.reports
          .find((p) => p.scenario === report.scenario && p.title === report.title)
          ?.rows.find((x) => x.measure === row.measure),
      )
      .filter((x): x is Row => x !== undefined);
    const stat = (pick: (r: Row) => Stat | undefined) =>
      same.map(pick).filter((s): s is Stat => s !== undefined);
    const cells: string[] = [row.measure.trim()];
    const wm = stat((r) => r.waymark);
    const peer = stat((r) => r.peer);
    if (row.text !== undefined) cells.push(`waymark: ${same.map((r) => r.text).join(' | ')}`);
    if (wm.length > 0)
      cells.push(
        `waymark ${across(
          wm.map((s) => s.median),
          row.unit,
        )}`,
      );
    if (row.peerText !== undefined) cells.push(`peer: ${same.map((r) => r.peerText).join(' | ')}`);
    else if (peer.length > 0)
      cells.push(
        `peer ${across(
          peer.map((s) => s.median),
          row.unit,
        )}`,
      );
    const ratios = same.map((r) => r.ratio).filter((r): r is number => r !== undefined);
    if (ratios.length > 0) cells.push(`ratio ${across(ratios)}x`);
    const met = same.filter((r) => r.met !== undefined);
    if (met.length > 0) cells.push(`met in ${met.filter((r) => r.met).length}/${met.length}`);
    out.push(`- ${cells.join('; ')}`);
  }
  const parts = report.details.waymark as { parts?: Readonly<Record<string, Stat>> } | undefined;
  for (const part of Object.keys(parts?.parts ?? {})) {
    const side = (name: 'waymark' | 'langgraph') =>
      records
        .map(
          (r) =>
            (
              r.reports.find((p) => p.scenario === report.scenario)?.details[name] as
                | { parts?: Readonly<Record<string, Stat>> }
                | undefined
            )?.parts?.[part]?.median,
        )
        .filter((v): v is number => v !== undefined);
    out.push(
      `- part ${part}: waymark ${across(side('waymark'))}; peer ${across(side('langgraph'))}`,
    );
  }
  if (report.scenario === 'validate') {
    const named = (name: string) =>
      records.map(
        (r) =>
          (
            r.reports.find((p) => p.scenario === 'validate')!.details.results as {
              name: string;
              perUnit: Stat;
            }[]
          ).find((c) => c.name === name)!.perUnit.median,
      );
    for (const shape of ['chain', 'looped'])
      for (const size of [10_000, 20_000, 40_000])
        out.push(
          `- ${shape} ${size}: validate ${across(named(`validate ${shape} ${size}`), 'ms')}; floor ${across(named(`floor ${shape} ${size}`), 'ms')}`,
        );
    const growth = (shape: string, side: 'validate' | 'floor', i: number) =>
      records.map(
        (r) =>
          (
            r.reports.find((p) => p.scenario === 'validate')!.details.growth as Record<
              string,
              Record<string, number[]>
            >
          )[shape]![side]![i]!,
      );
    for (const shape of ['chain', 'looped'])
      for (const i of [0, 1])
        out.push(
          `- ${shape} doubling ${i + 1}: validate x${across(growth(shape, 'validate', i))}; floor x${across(growth(shape, 'floor', i))}`,
        );
  }
}
process.stdout.write(`${out.join('\n')}\n`);
