import type { Cost } from '../../runtime/ops/expected.js';
import type { Plan, PlanStep } from '../../runtime/ops/plan.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';

/**
 * `--plan` of `resume` and `rewind`: what the command would read back, run again and re-pay,
 * said before anything runs (nothing is recorded, nothing runs).
 */
export function printPlan(out: Io, plan: Plan): number {
  out.json({
    type: 'plan',
    runId: plan.runId,
    kind: plan.kind,
    readBack: plan.readBack.map((s) => ({ node: s.node, activation: s.activation })),
    runAgain: plan.runAgain,
    rePays: plan.rePays,
    ...(plan.waitsAt !== undefined && { waitsAt: plan.waitsAt }),
  });
  const { c } = out;
  out.line(`plan     ${plan.kind} of ${c.bold(plan.runId)}: nothing runs (--plan)`);
  const back = plan.readBack.map((s) => s.activation);
  out.line(`read back ${back.length === 0 ? 'nothing' : `${back.length}: ${back.join(', ')}`}`);
  if (plan.runAgain.length === 0) out.line('runs again nothing');
  for (const s of plan.runAgain)
    out.line(`runs again ${s.activation}  ${costText(s.cost)}${basisText(s)}`);
  out.line(`re-pays  ${costText(plan.rePays)}`);
  if (plan.waitsAt !== undefined)
    out.line(`then     waits at ${plan.waitsAt}: what follows depends on the answer`);
  return exitCode.succeeded;
}

function costText(cost: Cost): string {
  const dollars = cost.costUsd > 0 ? `, $${cost.costUsd.toFixed(4)}` : '';
  return `${cost.inputTokens} in / ${cost.outputTokens} out tokens${dollars}`;
}

function basisText(s: PlanStep): string {
  if (s.basis === 'expected') return ' (the median of its recorded runs)';
  if (s.basis === 'recorded') return ' (what it spent when it ran)';
  return ' (nothing recorded)';
}
