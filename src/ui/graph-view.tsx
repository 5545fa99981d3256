import {
  applyNodeChanges,
  Background,
  Controls,
  type Edge,
  Handle,
  MarkerType,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
  type ReactFlowInstance,
} from '@xyflow/react';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useGraphCost, worstEdge } from './graph-cost.js';
import { layoutGraph, type PlacedEdge } from './graph-layout.js';
import { firstViewport } from './graph-viewport.js';
import { edgeKey, type PathOverlay } from './path-overlay.js';
import { expandSubgraphs } from './subgraphs.js';
import type { GraphDef } from './types.js';

interface StepData extends Record<string, unknown> {
  readonly label: string;
  readonly kind: string;
  readonly count: number;
  readonly failed: number;
  readonly retried: number;
  readonly copies: readonly number[];
  readonly stopped: boolean;
  readonly entry: boolean;
  readonly terminal: boolean;
  readonly selected: boolean;
  /** The node's worst case and expected spend, when the costs are shown. */
  readonly cost?: string;
}

/** One node of the declared graph, with what the run did there. */
function StepNode({ data }: NodeProps<Node<StepData>>) {
  const copies = data.copies;
  return (
    <div
      className={[
        'step',
        `kind-${data.kind}`,
        data.count > 0 ? 'visited' : 'unvisited',
        data.stopped ? 'stopped' : '',
        data.failed > 0 ? 'has-failed' : '',
        data.selected ? 'selected' : '',
      ].join(' ')}
      data-node={data.label}
      data-count={data.count}
    >
      <Handle type="target" position={Position.Top} />
      <div className="step-name">
        {data.entry && <span className="tag">start</span>}
        {data.label}
        {data.terminal && <span className="tag">end</span>}
      </div>
      <div className="step-meta">
        <span className="kind">{data.kind}</span>
        {data.count > 0 && <span className="count">×{data.count}</span>}
        {data.retried > 0 && <span className="retried">{data.retried} retried</span>}
        {data.failed > 0 && <span className="failed">{data.failed} failed</span>}
      </div>
      {data.cost !== undefined && (
        <div
          className="step-cost"
          title={`worst case (≤) and what earlier runs spent (~): ${data.cost}`}
        >
          {data.cost}
        </div>
      )}
      {copies.length > 0 && (
        <div className="copies" title="fan-out copies: branch or item index">
          {copies.length <= 6
            ? copies.map((i) => `[${i}]`).join(' ')
            : `[${copies[0]}] … [${copies.at(-1)}] (${copies.length} copies)`}
        </div>
      )}
      <Handle type="source" position={Position.Bottom} />
    </div>
  );
}

/** A group of nodes sharing a name prefix (a subgraph), labelled with it. */
function GroupNode({ data }: NodeProps<Node<{ label: string }>>) {
  return <div className="group-label">{data.label}/</div>;
}

const nodeTypes = { step: StepNode, prefix: GroupNode };

/**
 * The declared graph laid out by dagre and drawn by @xyflow/react, with the recorded path on top:
 * visited nodes and the edges taken are highlighted, with counts; nested groups for name
 * prefixes. Edges the run took that the declaration does not draw are added, dashed.
 */
export function GraphView(props: {
  def: GraphDef;
  overlay: PathOverlay;
  selectedNode: string | undefined;
  onSelectNode: (node: string) => void;
}) {
  const { overlay, selectedNode } = props;
  const def = useMemo(() => expandSubgraphs(props.def), [props.def]);
  const [costShown, setCostShown] = useState(false);
  const cost = useGraphCost(props.def.name, costShown);
  const takenKeys = [...overlay.edges.keys()].sort().join('|');
  // biome-ignore lint/correctness/useExhaustiveDependencies: re-laid out only when the set of edges taken changes
  const layout = useMemo(() => {
    const extra: PlacedEdge[] = [...overlay.edges.keys()].map((id) => {
      const [from = '', to = ''] = id.split('->');
      return { id, from, to, kind: 'edge', label: 'taken' };
    });
    return layoutGraph(def, extra, { tall: cost !== undefined });
  }, [def, takenKeys, cost]);

  const declared = useMemo(
    () =>
      new Set(
        [...def.edges.map((e) => edgeKey(e.from, e.to))].concat(
          def.routes.flatMap((r) => r.targets.map((t) => edgeKey(r.from, t))),
        ),
      ),
    [def],
  );

  const built: Node[] = layout.nodes.map((n) =>
    n.group
      ? {
          id: n.id,
          type: 'prefix',
          position: { x: n.x, y: n.y },
          style: { width: n.width, height: n.height },
          data: { label: n.label },
          className: 'group-node',
          ...(n.parent !== undefined && { parentId: n.parent, extent: 'parent' as const }),
          selectable: false,
        }
      : {
          id: n.id,
          type: 'step',
          position: { x: n.x, y: n.y },
          style: { width: n.width, height: n.height },
          ...(n.parent !== undefined && { parentId: n.parent, extent: 'parent' as const }),
          data: {
            label: n.id,
            kind: n.kind,
            count: overlay.counts.get(n.id) ?? 0,
            failed: overlay.failed.get(n.id) ?? 0,
            retried: overlay.retried.get(n.id) ?? 0,
            copies: overlay.copies.get(n.id) ?? [],
            stopped: overlay.stoppedAt.has(n.id),
            entry: def.entry === n.id,
            terminal: def.nodes.find((d) => d.name === n.id)?.terminal === true,
            selected: selectedNode === n.id,
            ...(cost?.notes[n.id] !== undefined && { cost: cost.notes[n.id] }),
          } satisfies StepData,
        },
  );
  const edges: Edge[] = layout.edges.map((e) => {
    const taken = overlay.edges.get(e.id) ?? 0;
    const undeclared = e.label === 'taken' && !declared.has(e.id);
    const label =
      taken > 0 ? `${e.label && e.label !== 'taken' ? `${e.label} ` : ''}×${taken}` : e.label;
    const worst = taken === 0 && worstEdge(cost, e.from, e.to, e.kind);
    return {
      id: e.id,
      source: e.from,
      target: e.to,
      className: [
        taken > 0 ? 'visited' : 'unvisited',
        `edge-${e.kind}`,
        undeclared ? 'undeclared' : '',
        worst ? 'worst' : '',
      ].join(' '),
      ...(label !== undefined && { label }),
      animated: false,
      markerEnd: {
        type: MarkerType.ArrowClosed,
        width: 16,
        height: 16,
        color: taken > 0 ? '#1f9d6b' : worst ? '#c2410c' : '#c4cad4',
      },
      ...(e.kind !== 'edge' || undeclared ? { style: { strokeDasharray: '5 4' } } : {}),
    };
  });

  // The drawing keeps what it measured of each node (its handles, which edges attach to) across
  // updates: a node object made afresh without it would wait for a resize that never comes.
  const [nodes, setNodes] = useState<Node[]>([]);
  const builtKey = JSON.stringify(built);
  // biome-ignore lint/correctness/useExhaustiveDependencies: builtKey stands for built's content
  useEffect(() => {
    setNodes((before) => {
      const old = new Map(before.map((n) => [n.id, n]));
      return built.map((n) => {
        const measured = old.get(n.id)?.measured;
        return measured === undefined ? n : { ...n, measured };
      });
    });
  }, [builtKey]);

  // The first view: the whole graph if it fits at a legible zoom, else its top at that zoom.
  // Set once per graph, so a run that moves on does not undo the reader's panning.
  const box = useRef<HTMLDivElement>(null);
  const [flow, setFlow] = useState<ReactFlowInstance>();
  // biome-ignore lint/correctness/useExhaustiveDependencies: once per graph, not per step of the run
  useEffect(() => {
    const el = box.current;
    if (flow === undefined || el === null) return;
    void flow.setViewport(firstViewport(layout.nodes, el.clientWidth, el.clientHeight));
  }, [flow, def]);

  return (
    <div className="graph" data-testid="graph" ref={box}>
      <button
        type="button"
        className="cost-toggle"
        aria-pressed={costShown}
        title={cost === undefined ? undefined : `the most one run can spend: ${cost.total}`}
        onClick={() => setCostShown((shown) => !shown)}
      >
        {costShown ? 'hide cost' : 'show cost'}
      </button>
      <ReactFlow
        nodes={nodes}
        onNodesChange={(changes) => setNodes((ns) => applyNodeChanges(changes, ns))}
        edges={edges}
        nodeTypes={nodeTypes}
        onInit={setFlow}
        minZoom={0.2}
        nodesDraggable={false}
        nodesConnectable={false}
        onNodeClick={(_, node) => node.type === 'step' && props.onSelectNode(node.id)}
      >
        <Background gap={20} size={1} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
