import { useEffect, useState } from 'react';
import { get, query, runPath } from './api.js';

interface Cost {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
}

/** What `GET /runs/:id/plan` answers: what a resume or a rewind would run again and re-pay. */
interface Plan {
  readonly runAgain: readonly { readonly activation: string; readonly cost: Cost }[];
  readonly rePays: Cost;
  readonly waitsAt?: string;
}

/**
 * The price of a resume, or of a rewind to `to` with `note`, before the button is pressed
 * (`waymark resume --plan`): what runs again and what it re-pays, by recorded usage.
 */
export function PlanLine(props: {
  runId: string;
  kind: 'resume' | 'rewind';
  to?: string;
  note?: string;
  noteField?: string;
}) {
  const { runId, kind, to, note, noteField } = props;
  const [plan, setPlan] = useState<Plan | null>();
  useEffect(() => {
    let gone = false;
    const q =
      kind === 'resume'
        ? ''
        : query({ to, ...(note !== undefined && note !== '' && { note, noteField }) });
    // A rewind's note is typed a key at a time: its plan is asked for once typing pauses.
    const timer = setTimeout(
      () =>
        get<Plan>(`${runPath(runId)}/plan${q}`).then(
          (p) => {
            if (!gone) setPlan(p);
          },
          // A run with nothing to resume has no plan: the button's own refusal says why.
          () => {
            if (!gone) setPlan(null);
          },
        ),
      kind === 'resume' ? 0 : 300,
    );
    return () => {
      gone = true;
      clearTimeout(timer);
    };
  }, [runId, kind, to, note, noteField]);
  if (plan == null) return null;
  const again = plan.runAgain.map((s) => s.activation);
  return (
    <p className="plan muted" data-testid={`${kind}-plan`}>
      {again.length === 0
        ? `${kind === 'resume' ? 'resuming' : 'this rewind'} runs nothing again: every step is read back`
        : `${kind === 'resume' ? 'resuming' : 'this rewind'} runs again ${again.join(', ')} and re-pays ${costText(plan.rePays)}`}
      {plan.waitsAt !== undefined && `, then waits at ${plan.waitsAt}`}
    </p>
  );
}

function costText(c: Cost): string {
  const dollars = c.costUsd > 0 ? ` ($${c.costUsd.toFixed(4)})` : '';
  return `${c.inputTokens} in / ${c.outputTokens} out tokens${dollars}`;
}
