import { z } from 'zod';
import { append, END, graph, person } from '../../src/index.js';

/** Bodies run, by flat node name: what a durability test counts. */
export type Calls = Record<string, number>;

const count = (calls: Calls, name: string) => {
  calls[name] = (calls[name] ?? 0) + 1;
};

/** The review child's state: its input is the draft, its output the verdict and score. */
export const ReviewState = z.object({
  draft: z.string(),
  words: z.number().default(0),
  notes: z.array(z.string()).default([]),
  verdict: z.string().default(''),
  secret: z.string().default('kept inside'),
});

/**
 * A 4-node child with a router: read -> score -> (accept | reject) -> END. Input `draft`,
 * output `verdict` and `notes`; `words` and `secret` are private to it.
 */
export function reviewGraph(calls: Calls = {}, options: { readonly fail?: Set<string> } = {}) {
  const body =
    <T>(name: string, fn: () => T) =>
    () => {
      count(calls, name);
      if (options.fail?.has(name)) throw new Error(`${name} failed`);
      return fn();
    };
  return graph('review', {
    state: ReviewState,
    reducers: { notes: append },
    input: ReviewState.pick({ draft: true }),
    output: ReviewState.pick({ verdict: true, notes: true }),
  })
    .node(
      'read',
      (s) => {
        count(calls, 'read');
        return { words: s.draft.split(' ').length, notes: ['read'] };
      },
      { reads: ['draft'], writes: ['words', 'notes'] },
    )
    .node(
      'score',
      body('score', () => ({ notes: ['scored'] })),
      {
        reads: ['words'],
        writes: ['notes'],
      },
    )
    .node(
      'accept',
      body('accept', () => ({ verdict: 'accept', notes: ['accepted'] })),
      {
        reads: ['words'],
        writes: ['verdict', 'notes'],
      },
    )
    .node(
      'reject',
      body('reject', () => ({ verdict: 'reject', notes: ['rejected'] })),
      {
        reads: ['words'],
        writes: ['verdict', 'notes'],
      },
    )
    .edge('read', 'score')
    .route('score', (s) => (s.words >= 3 ? 'accept' : 'reject'), ['accept', 'reject'])
    .edge('accept', END)
    .edge('reject', END)
    .entry('read')
    .compile();
}

export const PostState = z.object({
  text: z.string(),
  verdict: z.string().default(''),
  log: z.array(z.string()).default([]),
  published: z.boolean().default(false),
});

/** prep -> review (the child above) -> publish. */
export function postGraph(calls: Calls = {}, child = reviewGraph(calls)) {
  return graph('post', { state: PostState, reducers: { log: append } })
    .node(
      'prep',
      (s) => {
        count(calls, 'prep');
        return { text: s.text.trim() };
      },
      { reads: ['text'], writes: ['text'] },
    )
    .subgraph('review', child, {
      input: { draft: 'text' },
      output: (o) => ({ verdict: o.verdict, log: o.notes }),
      reads: ['text'],
      writes: ['verdict', 'log'],
    })
    .node(
      'publish',
      (s) => {
        count(calls, 'publish');
        return { published: s.verdict === 'accept' };
      },
      { reads: ['verdict'], writes: ['published'] },
    )
    .edge('prep', 'review')
    .edge('review', 'publish')
    .edge('publish', END)
    .entry('prep')
    .compile();
}

export const Approval = z.object({ approved: z.boolean() });

/** A child that asks a person between two nodes: draft -> approve (person) -> finish. */
export function approvalChild(calls: Calls = {}) {
  const State = z.object({
    draft: z.string(),
    drafted: z.string().default(''),
    approved: z.boolean().default(false),
    done: z.string().default(''),
  });
  return graph('approval', {
    state: State,
    input: State.pick({ draft: true }),
    output: State.pick({ done: true, approved: true }),
  })
    .node(
      'draft',
      (s) => {
        count(calls, 'draft');
        return { drafted: `${s.draft}!` };
      },
      { reads: ['draft'], writes: ['drafted'] },
    )
    .node('approve', person({ prompt: (s) => `Publish "${s.drafted}"?`, answer: Approval }), {
      reads: ['drafted'],
      writes: ['approved'],
    })
    .node(
      'finish',
      (s) => {
        count(calls, 'finish');
        return { done: s.approved ? `published ${s.drafted}` : 'dropped' };
      },
      { reads: ['drafted', 'approved'], writes: ['done'] },
    )
    .edge('draft', 'approve')
    .edge('approve', 'finish')
    .edge('finish', END)
    .entry('draft')
    .compile();
}

/** start -> ask (the approval child) -> end, counting its own bodies. */
export function askGraph(calls: Calls = {}) {
  const State = z.object({ text: z.string(), result: z.string().default('') });
  return graph('ask', { state: State })
    .node(
      'start',
      () => {
        count(calls, 'start');
        return undefined;
      },
      { reads: [], writes: [] },
    )
    .subgraph('ask', approvalChild(calls), {
      input: { draft: 'text' },
      output: { result: 'done' },
      reads: ['text'],
      writes: ['result'],
    })
    .edge('start', 'ask')
    .edge('ask', END)
    .entry('start')
    .compile();
}
