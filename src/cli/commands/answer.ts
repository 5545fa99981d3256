import type { Command } from 'commander';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { answer } from '../../runtime/answer.js';
import { resume } from '../../runtime/resume.js';
import type { SqliteStore } from '../../store/sqlite-store.js';
import type { WaitRecord } from '../../store/store.js';
import { exitCode } from '../exit.js';
import type { Io } from '../io.js';
import { withProgress } from '../progress.js';
import { explainResume, reportRun, waitView } from '../report.js';
import { graphOfRun, parseJson, withRunStore } from '../session.js';

interface AnswerFlags {
  readonly request?: string;
  readonly value?: string;
  readonly note?: string;
  readonly by: string;
  readonly resume: boolean;
  readonly graph?: string;
}

/** `answer`, and `approve` / `reject` for yes-no questions. */
export function answerCommands(program: Command, io: () => Io, done: (code: number) => void) {
  const common = (command: Command) =>
    command
      .argument('<run-id>')
      .option('--request <id>', 'which wait to answer (default: the run has exactly one open)')
      .option('--by <who>', 'who answers: recorded with the answer', defaultAnswerer())
      .option('--no-resume', 'record the answer only; continue later with `waymark resume`')
      .option('--graph <graph-file>', 'the graph file (default: the one the run was started with)');

  common(
    program
      .command('answer')
      .description('answer a run that waits for a person, then continue it')
      .requiredOption('--value <json>', "the answer, as JSON matching the wait's schema"),
  )
    .addHelpText(
      'after',
      `
The answer is checked against the wait's schema and recorded once; a second answer is refused.

Example:
  $ waymark answer 3f1c9a2e-... --value '{"approved":false,"note":"the pricing line is wrong"}'`,
    )
    .action(async (runId: string, flags: AnswerFlags) => {
      const value = parseJson(flags.value!, '--value');
      done(await answerAndContinue(io(), runId, flags, () => value));
    });

  for (const [name, approved] of [
    ['approve', true],
    ['reject', false],
  ] as const) {
    common(
      program
        .command(name)
        .description(`${name} a yes-no question a run waits on, then continue it`)
        .option('--note <text>', 'a note for the answer (where the schema has a `note` field)'),
    )
      .addHelpText(
        'after',
        `
Works for a wait whose answer is a boolean, or an object with an \`approved\` boolean (and an
optional \`note\`).

Example:
  $ waymark ${name} 3f1c9a2e-...${approved ? '' : ' --note "the second section misstates the pricing change"'}`,
      )
      .action(async (runId: string, flags: AnswerFlags) => {
        done(
          await answerAndContinue(io(), runId, flags, (wait) => yesNo(wait, approved, flags.note)),
        );
      });
  }
}

async function answerAndContinue(
  out: Io,
  runId: string,
  flags: AnswerFlags,
  valueFor: (wait: WaitRecord) => unknown,
): Promise<number> {
  return withRunStore(out, runId, async (store) => {
    const graph = await graphOfRun(store, runId, flags.graph);
    const wait = await pickWait(store, runId, flags.request);
    // answer() would record it, and the resume after it would then refuse: refuse first.
    if ((await store.getRun(runId))?.status === 'cancelled') {
      throw new WaymarkError(
        'RUN_NOT_RESUMABLE',
        `run "${runId}" was cancelled; its waits take no answers`,
        { retryable: false },
      );
    }
    const recorded = await answer(store, runId, wait.requestId, valueFor(wait), {
      by: flags.by,
      graph: graph as CompiledGraph<never, never>,
    });
    out.json({
      type: 'answered',
      runId,
      requestId: recorded.requestId,
      node: recorded.node,
      answer: JSON.parse(recorded.answer!),
      by: recorded.answeredBy,
    });
    out.line(
      `recorded the answer to ${recorded.node} (request ${recorded.requestId}) by ${recorded.answeredBy}`,
    );
    if (!flags.resume) {
      out.line(out.c.dim(`next: waymark resume ${runId}`));
      return exitCode.succeeded;
    }
    await explainResume(out, store, graph, runId);
    const result = await withProgress(out, (live) => resume(store, graph, runId, live));
    return reportRun(out, store, result);
  });
}

/** The wait named by --request, or the run's only open one. */
async function pickWait(store: SqliteStore, runId: string, request: string | undefined) {
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
  const schema = waitView(wait).schema as {
    type?: string;
    properties?: Record<string, unknown>;
  } | null;
  if (schema?.type === 'boolean') {
    if (note !== undefined) {
      throw new WaymarkError(
        'USAGE_INVALID',
        `the answer to "${wait.node}" is a plain yes or no: it has no place for --note`,
        { retryable: false },
      );
    }
    return approved;
  }
  if (schema?.type === 'object' && schema.properties?.approved !== undefined) {
    if (note !== undefined && schema.properties.note === undefined) {
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

function defaultAnswerer(): string {
  return process.env.USER ?? process.env.USERNAME ?? 'cli';
}
