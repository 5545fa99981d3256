import { useEffect, useState } from 'react';
import { get } from './api.js';

/** What `GET /graphs/:name/cost` answers: the notes under each node and the worst path. */
export interface GraphCost {
  readonly notes: Readonly<Record<string, string>>;
  readonly worst: readonly string[];
  readonly total: string;
  readonly runs: number;
}

/**
 * A graph's costs, read once they are asked for (`shown`): the answer reads earlier runs'
 * traces for the expected spend, so a page that never shows the costs never pays for it.
 *
 * @example
 * const cost = useGraphCost(def.name, shown);
 */
export function useGraphCost(name: string, shown: boolean): GraphCost | undefined {
  const [cost, setCost] = useState<GraphCost>();
  useEffect(() => {
    if (!shown || cost !== undefined) return;
    let live = true;
    void get<GraphCost>(`/graphs/${encodeURIComponent(name)}/cost`).then(
      (c) => live && setCost(c),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [name, shown, cost]);
  return shown ? cost : undefined;
}

/** The edges of the worst path: both ends on it; an error edge is never needed for a worst case. */
export function worstEdge(cost: GraphCost | undefined, from: string, to: string, kind: string) {
  if (cost === undefined || kind === 'error') return false;
  return cost.worst.includes(from) && cost.worst.includes(to);
}
