import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ActivationDetail } from './activation-detail.js';
import { ApiError, get, runPath } from './api.js';
import { duration, msOf, when } from './format.js';
import { GraphView } from './graph-view.js';
import { overlayOf } from './path-overlay.js';
import { RunActions } from './run-actions.js';
import { applyEvent, applyTrace, emptyModel, type RunModel } from './run-model.js';
import { statusLabel, useWatchedRuns } from './runs-watch.js';
import { follow } from './sse.js';
import { expandSubgraphs } from './subgraphs.js';
import { Timeline } from './timeline.js';
import type { GraphDef, QuarantineEntry, RunDetail, StreamEvent, Trace, Wait } from './types.js';
import { WaitForm } from './wait-form.js';

/** How often, at most, the page draws what the stream told: many events, one render. */
const frameMs = 60;
const finalStatuses = new Set(['succeeded', 'failed', 'cancelled', 'timed_out']);

/**
 * One run: the declared graph with the recorded path, the waterfall of its activations, the one
 * chosen in detail, its open waits with their forms, and cancel, resume and rewind. Its events so
 * far come in one answer (`GET /runs/:id/recorded`), then its stream (`GET /runs/:id/events`) is
 * followed after them: the page moves with the run.
 */
export function RunView({ runId, graph }: { runId: string; graph?: string | undefined }) {
  const model = useRef<RunModel>(emptyModel());
  // The latest trace: read alongside the events, applied to the activations they make.
  const trace = useRef<Trace['entries']>([]);
  const [version, setVersion] = useState(0);
  const [detail, setDetail] = useState<RunDetail>();
  // Subgraphs opened up: their nodes by path, as the run's activations name them.
  const [def, setDef] = useState<GraphDef>();
  const [waits, setWaits] = useState<readonly Wait[]>([]);
  const [quarantine, setQuarantine] = useState<readonly QuarantineEntry[]>([]);
  const [error, setError] = useState<string>();
  const [selected, setSelected] = useState<string>();
  const [ended, setEnded] = useState(false);

  /** Reads the run's status, trace and open waits again; resolves to the status, if it could. */
  const refresh = useCallback(
    async (withTrace = true): Promise<RunDetail | undefined> => {
      try {
        const [d, t, w] = await Promise.all([
          get<RunDetail>(runPath(runId)),
          withTrace ? get<Trace>(`${runPath(runId)}/trace`) : undefined,
          get<{ waits: Wait[] }>(`${runPath(runId)}/waits?open=true`),
        ]);
        if (t !== undefined) {
          trace.current = t.entries;
          applyTrace(model.current, t.entries);
        }
        setDetail(d);
        setWaits(w.waits);
        setVersion((v) => v + 1);
        return d;
      } catch (e) {
        setError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
        return undefined;
      }
    },
    [runId],
  );

  // What the run's checks set aside: read when an activation is first looked at, not at open.
  const [wantQuarantine, setWantQuarantine] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: read again once the run has ended
  useEffect(() => {
    if (!wantQuarantine) return;
    void get<{ quarantine: QuarantineEntry[] }>(`${runPath(runId)}/quarantine`).then(
      (q) => setQuarantine(q.quarantine),
      () => {},
    );
  }, [runId, wantQuarantine, ended]);

  useEffect(() => {
    const stop = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let refreshing: ReturnType<typeof setTimeout> | undefined;
    const draw = () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        setVersion((v) => v + 1);
      }, frameMs);
    };
    // The trace (timings, tokens, stacks) and the waits are read again after the stream tells
    // of a change, at most a few times a second.
    const later = (ms: number) => {
      refreshing ??= setTimeout(() => {
        refreshing = undefined;
        void refresh();
      }, ms);
    };
    void (async () => {
      // A run of 10,000 steps opens with one answer of its events so far, read with its trace;
      // only what comes after is followed as Server-Sent Events.
      const failed = (e: unknown) =>
        setError(e instanceof ApiError ? `${e.code}: ${e.message}` : String(e));
      // The graph's name comes with the link when the page knows it: its layout need not wait
      // for the run's status, which is then read after the drawing (the server answers one
      // request at a time, and the events and the trace are what the drawing needs).
      const layout = (name: string) =>
        get<{ def: GraphDef }>(`/graphs/${encodeURIComponent(name)}`).then(
          (g) => setDef(expandSubgraphs(g.def)),
          failed,
        );
      if (graph !== undefined) void layout(graph);
      const early = graph === undefined ? refresh(false) : undefined;
      if (early !== undefined)
        void early.then((d) => {
          if (d !== undefined) void layout(d.run.graph);
        });
      const recorded = get<{ events: StreamEvent[]; last: string | null }>(
        `${runPath(runId)}/recorded`,
      );
      const traced = get<Trace>(`${runPath(runId)}/trace`);
      try {
        // Drawn as soon as the events and the trace are in; the status and waits follow.
        const [{ events, last }, t] = await Promise.all([recorded, traced]);
        for (const event of events) applyEvent(model.current, event);
        trace.current = t.entries;
        applyTrace(model.current, t.entries);
        setVersion((v) => v + 1);
        const d = await (early ?? refresh(false));
        if (d === undefined) return;
        if (finalStatuses.has(model.current.status ?? d.status)) {
          setEnded(true);
          return;
        }
        // Followed across its waits (`until=end`): an answer given anywhere moves the page on.
        await follow(
          `${runPath(runId)}/events?until=end${last === null ? '' : `&after=${encodeURIComponent(last)}`}`,
          (m) => {
            const event = JSON.parse(m.data) as StreamEvent;
            applyEvent(model.current, event);
            draw();
            if (event.type === 'run' || event.type.startsWith('wait.')) later(0);
            else if (event.type === 'activation.completed') later(1000);
          },
          stop.signal,
        );
      } catch (e) {
        failed(e);
        return;
      }
      if (!stop.signal.aborted) {
        setEnded(true);
        void refresh();
      }
    })();
    return () => {
      stop.abort();
      clearTimeout(timer);
      clearTimeout(refreshing);
    };
  }, [runId, graph, refresh]);

  const status = model.current.status ?? detail?.status;
  // Whether a process drives a running run: only watched while it runs.
  const watched = useWatchedRuns(status === 'running');
  const label = statusLabel(status ?? '', watched.live.get(runId));
  // biome-ignore lint/correctness/useExhaustiveDependencies: the model changes in place; version says when
  const overlay = useMemo(() => overlayOf(model.current, status), [version, status]);
  const activations = model.current.activations;
  const chosen = selected === undefined ? undefined : model.current.byId.get(selected);
  if (chosen !== undefined && !wantQuarantine) setWantQuarantine(true);
  const selectNode = (node: string) => {
    const last = [...activations].reverse().find((a) => a.node === node);
    if (last !== undefined) setSelected(last.id);
  };
  const started = activations[0]?.attempts[0]?.startedAt;

  return (
    <section className="run" data-status={status}>
      <div className="run-head">
        <div>
          <h1>
            {detail?.run.graph ?? 'run'}{' '}
            <span className={`status ${label}`} data-testid="run-status">
              {status === undefined ? '…' : label}
            </span>
            {!ended && label !== 'interrupted' && ['running', 'waiting'].includes(label) && (
              <span className="live-dot">live</span>
            )}
          </h1>
          <p className="muted">
            {runId}
            {detail !== undefined && ` · started ${when(detail.run.createdAt)}`}
            {started !== undefined &&
              detail !== undefined &&
              ` · ${duration(msOf(detail.run.updatedAt) - started)}`}
            {` · ${activations.length} activations`}
          </p>
        </div>
        <RunActions
          runId={runId}
          status={status as RunDetail['status']}
          def={def}
          node={chosen?.node}
        />
      </div>
      {error !== undefined && <p className="error">{error}</p>}
      {detail?.queued !== undefined && (
        <p className="sleeping" data-testid="run-queued">
          queued for key <strong>{detail.queued.key}</strong>: at most {detail.queued.concurrency}{' '}
          at once, number {detail.queued.position} in line since {when(detail.queued.since)}; it
          starts when a run of its key stops running
        </p>
      )}
      {detail?.error !== undefined && (
        <p className="error">
          stopped: <strong>{detail.error.code}</strong> {detail.error.message}
        </p>
      )}
      {waits.map((w) => (
        <WaitForm key={w.requestId} runId={runId} wait={w} onAnswered={() => void refresh()} />
      ))}
      <div className="run-body">
        {def === undefined ? (
          <div className="graph placeholder">
            {error === undefined ? 'laying out the graph…' : ''}
          </div>
        ) : (
          <GraphView
            def={def}
            overlay={overlay}
            selectedNode={chosen?.node}
            onSelectNode={selectNode}
          />
        )}
        <aside className="side">
          {chosen === undefined ? (
            <div className="detail muted">
              <p>
                Choose an activation in the timeline, or a node of the graph, to see its input, its
                update, the state it left and its errors.
              </p>
              <Legend />
            </div>
          ) : (
            <ActivationDetail
              runId={runId}
              activation={chosen}
              node={def?.nodes.find((n) => n.name === chosen.node)}
              mapOver={mapOverOf(def, chosen.node)}
              quarantine={quarantine}
            />
          )}
        </aside>
      </div>
      <Timeline
        activations={activations}
        selected={selected}
        onSelect={setSelected}
        version={version}
      />
    </section>
  );
}

/** The state field a map fan-out takes its items from, for the node its branches start at. */
function mapOverOf(def: GraphDef | undefined, node: string): string | undefined {
  for (const f of def?.fanOuts ?? []) if (f.kind === 'map' && f.branch === node) return f.over;
  return undefined;
}

function Legend() {
  return (
    <ul className="legend">
      <li>
        <span className="swatch visited" /> visited, with its count of activations
      </li>
      <li>
        <span className="swatch stopped" /> where the run stands (waiting, pending, failed)
      </li>
      <li>
        <span className="swatch failed" /> failed or retried activations
      </li>
      <li>
        <span className="swatch unvisited" /> declared, not reached
      </li>
      <li>dashed edges: routes, fan-outs, error routes; [i]: a fan-out copy's branch or item</li>
    </ul>
  );
}
