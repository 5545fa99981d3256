import type { Adjacency } from './adjacency.js';

/**
 * Strongly connected components that contain a cycle, over the nodes `include` keeps.
 * Iterative Tarjan: a 10,000-node chain must not overflow the call stack, and the cost stays
 * linear in nodes + edges.
 */
export function cyclicComponents(succ: Adjacency, include: (node: number) => boolean): number[][] {
  const { start, next } = succ;
  const n = start.length - 1;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const result: number[][] = [];
  // Explicit DFS frames: the node and how far through its successor list we are.
  const frameNode: number[] = [];
  const frameEdge: number[] = [];
  let counter = 0;

  for (let root = 0; root < n; root++) {
    if (index[root] !== -1 || !include(root)) continue;
    frameNode.push(root);
    frameEdge.push(0);
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;

    while (frameNode.length > 0) {
      const top = frameNode.length - 1;
      const v = frameNode[top]!;
      const e = frameEdge[top]!;
      if (start[v]! + e < start[v + 1]!) {
        frameEdge[top] = e + 1;
        const w = next[start[v]! + e]!;
        if (!include(w)) continue;
        if (index[w] === -1) {
          index[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          frameNode.push(w);
          frameEdge.push(0);
        } else if (onStack[w]) {
          low[v] = Math.min(low[v]!, index[w]!);
        }
        continue;
      }
      frameNode.pop();
      frameEdge.pop();
      if (frameNode.length > 0) {
        const parent = frameNode[frameNode.length - 1]!;
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] !== index[v]) continue;
      const component: number[] = [];
      let w: number;
      do {
        w = stack.pop()!;
        onStack[w] = 0;
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || selfLoop(succ, v)) result.push(component.reverse());
    }
  }
  return result;
}

function selfLoop({ start, next }: Adjacency, v: number): boolean {
  for (let k = start[v]!; k < start[v + 1]!; k++) if (next[k] === v) return true;
  return false;
}
