import type { z } from 'zod';
import { WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from './compiled.js';
import { Spelling } from './spelling.js';

/**
 * The state a run of `graph` starts from: the caller's input checked against the graph's
 * `input` schema when it has one (a field outside it is `INPUT_NOT_ALLOWED`: the graph keeps it
 * private), then parsed by the state schema, which fills in the defaults of every other field.
 * A run and a subgraph's entry both start this way, so a child is entered as it is run.
 * A field that is not a state field is `INPUT_INVALID` too, with the closest field's name,
 * unless the graph declares `unknownInput: 'strip'`.
 * @throws WaymarkError `INPUT_NOT_ALLOWED`, `INPUT_INVALID`.
 *
 * @example
 * const state = startState(g, { claim: 'water boils at 100 C' });
 */
export function startState(
  graph: CompiledGraph,
  input: unknown,
  who = `"${graph.name}"`,
): Record<string, unknown> {
  let given = input;
  const allowed = graph.input;
  if (allowed !== undefined) {
    allowedInput(graph, input, who);
    // An input schema picked from the state schema (`State.pick(...)`) shares its fields'
    // schemas: the state schema's parse below checks them, so it is not parsed twice.
    if (!sharesFields(allowed, graph.schema)) {
      const checked = allowed.safeParse(input);
      if (!checked.success)
        throw mismatch(`the input of ${who} does not match its input schema`, checked.error);
      given = checked.data;
    }
  }
  if (allowed === undefined && graph.stripsUnknownInput !== true) knownFields(graph, input, who);
  const parsed = graph.schema.safeParse(given);
  if (!parsed.success) throw mismatch(`input does not match the state of ${who}`, parsed.error);
  return parsed.data as Record<string, unknown>;
}

/**
 * Refuses an input that sets a field outside the graph's `input` schema (`INPUT_NOT_ALLOWED`);
 * any input passes a graph that declares none. A thread's next input is checked with it too.
 * @throws WaymarkError `INPUT_NOT_ALLOWED`.
 *
 * @example
 * allowedInput(g, { claim: 'x', scratch: [] }); // throws: "scratch" is private to the graph
 */
export function allowedInput(
  graph: Pick<CompiledGraph, 'input' | 'name'>,
  input: unknown,
  who = `"${graph.name}"`,
): void {
  const allowed = graph.input;
  if (allowed === undefined || typeof input !== 'object' || input === null || Array.isArray(input))
    return;
  const shape = allowed.shape;
  // Checked before anything is allocated: a subgraph's entry checks its child's input each time.
  let fits = true;
  for (const key in input)
    if (Object.hasOwn(input, key) && !Object.hasOwn(shape, key)) fits = false;
  if (fits) return;
  const inputs = Object.keys(shape);
  const extra = Object.keys(input).filter((key) => !Object.hasOwn(shape, key));
  throw new WaymarkError(
    'INPUT_NOT_ALLOWED',
    `the input of ${who} sets ${extra.map((f) => `"${f}"`).join(', ')}, which ${extra.length === 1 ? 'is' : 'are'} not among its inputs [${inputs.join(', ')}]`,
    { retryable: false, details: { fields: extra, inputs } },
  );
}

/**
 * What a finished run hands back: the fields of the graph's `output` schema, or the state itself
 * when the graph declares none.
 *
 * @example
 * outputOf(g, result.state); // { verdict: 'true' }
 */
export function outputOf(
  graph: Pick<CompiledGraph, 'output'>,
  state: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> {
  const output = graph.output;
  if (output === undefined) return state;
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(output.shape))
    if (Object.hasOwn(state, key)) picked[key] = state[key];
  return Object.freeze(picked);
}

/**
 * The state as a caller sees it: without the private fields the graph's subgraphs keep their
 * state in while they run (`@review`), which are the runtime's, not the graph's.
 *
 * @example
 * publicState(g, snapshot.state); // { text: 'x', verdict: 'accept' }, no '@review'
 */
export function publicState(
  graph: Pick<CompiledGraph, 'def'>,
  state: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> {
  const subgraphs = graph.def.subgraphs;
  if (subgraphs === undefined || !subgraphs.some((s) => Object.hasOwn(state, s.slot))) return state;
  const slots = new Set(subgraphs.map((s) => s.slot));
  const seen: Record<string, unknown> = {};
  for (const key of Object.keys(state)) if (!slots.has(key)) seen[key] = state[key];
  return Object.freeze(seen);
}

/** Refuses an input field the state schema does not have: a zod object would drop it unseen. */
function knownFields(graph: CompiledGraph, input: unknown, who: string): void {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return;
  const shape = graph.schema.shape;
  let fits = true;
  for (const key in input)
    if (Object.hasOwn(input, key) && !Object.hasOwn(shape, key)) fits = false;
  if (fits) return;
  const spelling = new Spelling(Object.keys(shape));
  const extra = Object.keys(input)
    .filter((key) => !Object.hasOwn(shape, key))
    .map((key) => {
      const meant = spelling.suggest(key);
      return { key, guess: meant === undefined ? '' : ` (did you mean "${meant}"?)` };
    });
  const named = extra.map(({ key, guess }) => `"${key}"${guess}`).join(', ');
  const which = extra.length === 1 ? 'which is not a state field' : 'which are not state fields';
  throw new WaymarkError(
    'INPUT_INVALID',
    `the input of ${who} sets ${named}, ${which}; a graph that takes other fields on purpose declares unknownInput: 'strip'`,
    {
      retryable: false,
      details: extra.map(({ key, guess }) => ({
        path: [key],
        message: `not a state field${guess}`,
      })),
    },
  );
}

const shared = new WeakMap<z.ZodObject, boolean>();

function sharesFields(input: z.ZodObject, state: z.ZodObject): boolean {
  let known = shared.get(input);
  if (known === undefined) {
    const fields = state.shape as Record<string, unknown>;
    known = Object.entries(input.shape).every(([key, schema]) => fields[key] === schema);
    shared.set(input, known);
  }
  return known;
}

function mismatch(what: string, error: z.ZodError): WaymarkError {
  const issues = error.issues.map((i) => ({ path: i.path.map(String), message: i.message }));
  const first = issues[0];
  return new WaymarkError(
    'INPUT_INVALID',
    `${what}: ${first?.path.join('.') || '(root)'}: ${first?.message}`,
    {
      retryable: false,
      details: issues,
    },
  );
}
