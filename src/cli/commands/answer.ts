import { storedJson } from '../../error/store-corrupt.js';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { answer as recordAnswer } from '../../runtime/ops/answer.js';
import { loadTrace } from '../../runtime/ops/history.js';
import type { WaitRecord } from '../../store/store.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { commandLine, whatWorks } from '../next.js';
import { waitView, yesNoShape } from '../report.js';
import type { CliStore } from '../session.js';
import { graphOfRun, parseJson, withRunStore } from '../session.js';
import { readStoredRun } from '../stored-run.js';
import { iso } from '../time.js';
import { resumeRun } from './run.js';

interface AnswerFlags {
  readonly request?: string;
  readonly value?: string;
  readonly note?: string;
  readonly by: string;
  readonly resume: boolean;
  readonly graph?: string;
}

/** `waymark answer <run-id> --value <json>`: records the answer, then continues the run. */
export async function answer(out: Io, runId: string, flags: AnswerFlags): Promise<number> {
  const value = parseJson(flags.value!, '--value');
  return answerAndContinue(out, runId, flags, () => value);
}

/** `waymark approve <run-id>`: yes to a yes-no question. */
export async function approve(out: Io, runId: string, flags: AnswerFlags): Promise<number> {
  return answerAndContinue(out, runId, flags, (wait) => yesNo(wait, true, flags.note));
}

/** `waymark reject <run-id>`: no to a yes-no question, with an optional note. */
export async function reject(out: Io, runId: string, flags: AnswerFlags): Promise<number> {
  return answerAndContinue(out, runId, flags, (wait) => yesNo(wait, false, flags.note));
}

async function answerAndContinue(
  out: Io,
  runId: string,
  flags: AnswerFlags,
  valueFor: (wait: WaitRecord) => unknown,
): Promise<number> {
  return withRunStore(out, runId, async (store) => {
    const graph = await graphOfRun(out, store, runId, flags.graph);
    const wait = await pickWait(store, runId, flags.request);
    // answer() would record it, and the resume after it would then refuse: refuse first.
    if ((await store.getRun(runId))?.status === 'cancelled') {
      await noteWhatWorks(out, store, runId);
      throw new WaymarkError(
        'RUN_NOT_RESUMABLE',
        `run "${runId}" was cancelled; its waits take no answers`,
        { retryable: false },
      );
    }
    const recorded = await recordAnswer(store, runId, wait.requestId, valueFor(wait), {
      by: flags.by,
      graph: graph as CompiledGraph<never, never>,
    });
    out.json({
      type: 'answered',
      runId,
      requestId: recorded.requestId,
      node: recorded.node,
      answer: storedJson(recorded.answer!, runId, `the answer to wait "${recorded.requestId}"`),
      by: recorded.answeredBy,
      answeredAt: iso(recorded.answeredAt!),
    });
    out.line(
      `recorded the answer to ${recorded.node} (request ${recorded.requestId}) by ${recorded.answeredBy}`,
    );
    if (!flags.resume) {
      out.line(out.c.dim(`next: ${commandLine(out, ['resume', runId])}`));
      return exitCode.succeeded;
    }
    return resumeRun(out, store, graph, runId);
  });
}

/** For a run that cannot go on: the commands that work instead, for the hint. */
async function noteWhatWorks(out: Io, store: CliStore, runId: string): Promise<void> {
  const { snapshot } = await readStoredRun(store, runId);
  if (snapshot === undefined) return;
  out.about.next = whatWorks(out, runId, snapshot, (await loadTrace(store, runId)).entries);
}

/** The wait named by --request, or the run's only open one. */
async function pickWait(store: CliStore, runId: string, request: string | undefined) {
  const waits = await store.listWaits(runId);
  if (request !== undefined) {
    const named = waits.find((w) => w.requestId === request);
    if (named === undefined) {
      throw new WaymarkError('WAIT_NOT_FOUND', `run "${runId}" has no wait "${request}"`, {
        retryable: false,
      });
    }
    return named; // answered already: answer() refuses it with WAIT_ALREADY_ANSWERED
  }
  const open = waits.filter((w) => w.answer === null);
  if (open.length === 1) return open[0]!;
  if (open.length === 0) {
    const last = waits.at(-1);
    if (last !== undefined && (await store.getRun(runId))?.status !== 'waiting') {
      throw new WaymarkError(
        'WAIT_ALREADY_ANSWERED',
        `run "${runId}" has no open wait: "${last.requestId}" was answered by ${last.answeredBy} already`,
        { retryable: false },
      );
    }
    throw new WaymarkError('WAIT_NOT_FOUND', `run "${runId}" is not waiting for an answer`, {
      retryable: false,
    });
  }
  throw new WaymarkError(
    'USAGE_INVALID',
    `run "${runId}" waits on ${open.length} requests; name one with --request: ${open.map((w) => w.requestId).join(', ')}`,
    { retryable: false },
  );
}

/** The answer to a yes-no wait, shaped by its stored JSON Schema. */
function yesNo(wait: WaitRecord, approved: boolean, note: string | undefined): unknown {
  const shape = yesNoShape(waitView(wait).schema);
  if (shape?.shape === 'boolean') {
    if (note !== undefined) {
      throw new WaymarkError(
        'USAGE_INVALID',
        `the answer to "${wait.node}" is a plain yes or no: it has no place for --note`,
        { retryable: false },
      );
    }
    return approved;
  }
  if (shape?.shape === 'object') {
    if (note !== undefined && !shape.note) {
      throw new WaymarkError(
        'USAGE_INVALID',
        `the answer to "${wait.node}" has no \`note\` field for --note`,
        { retryable: false },
      );
    }
    return { approved, ...(note !== undefined && { note }) };
  }
  throw new WaymarkError(
    'USAGE_INVALID',
    `"${wait.node}" does not ask a yes-no question (its answer is not a boolean or an object with \`approved\`); use \`waymark answer --value <json>\``,
    { retryable: false },
  );
}
