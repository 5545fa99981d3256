import type { PlacedNode } from './graph-layout.js';

// Where the graph is first shown. Fitting a tall graph (a dozen steps and a subgraph) into the
// panel shrinks its node names to 6-7 px, unreadable. So the first view fits the graph only
// down to a zoom at which a node's name stays legible; a graph still too big for the panel is
// shown from its top (where the run starts), centred across, and the rest is a drag or a
// scroll away. The fit-view button still shows the whole of it.

/** The least zoom the first view uses: a node's 13 px name drawn at 11 px or more (0.85 x 13). */
export const legibleZoom = 0.85;
const maxZoom = 1.25;
const padding = 16;

export interface Viewport {
  readonly x: number;
  readonly y: number;
  readonly zoom: number;
}

/**
 * The first viewport of a laid-out graph in a panel of `width` x `height` px: the whole graph
 * when it fits at a legible zoom, else its top at the legible zoom.
 *
 * @example
 * const { x, y, zoom } = firstViewport(layout.nodes, 900, 600);
 */
export function firstViewport(
  nodes: readonly PlacedNode[],
  width: number,
  height: number,
): Viewport {
  // Nodes inside a group are placed relative to it; the outermost ones bound the drawing.
  const outer = nodes.filter((n) => n.parent === undefined);
  if (outer.length === 0 || width <= 0 || height <= 0) return { x: 0, y: 0, zoom: 1 };
  const left = Math.min(...outer.map((n) => n.x));
  const top = Math.min(...outer.map((n) => n.y));
  const right = Math.max(...outer.map((n) => n.x + n.width));
  const bottom = Math.max(...outer.map((n) => n.y + n.height));
  const w = right - left;
  const h = bottom - top;
  const fit = Math.min((width - 2 * padding) / w, (height - 2 * padding) / h, maxZoom);
  const zoom = Math.max(fit, legibleZoom);
  // Centred along an axis where it fits. Where it does not: from its top edge, and across
  // centred on its first row (where the run starts).
  const first = outer.filter((n) => n.y === top);
  const firstMiddle =
    (Math.min(...first.map((n) => n.x)) + Math.max(...first.map((n) => n.x + n.width))) / 2;
  const x =
    w * zoom <= width ? (width - w * zoom) / 2 - left * zoom : width / 2 - firstMiddle * zoom;
  const y = h * zoom <= height ? (height - h * zoom) / 2 - top * zoom : padding - top * zoom;
  return { x, y, zoom };
}
