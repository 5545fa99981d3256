import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, person } from '../../src/index.js';
import { declare, problem } from './support.js';

// A person node with no `update` applies its answer object as the node's update: every field of
// the answer must then be a state field, or the answer could never be applied.

describe('a person node whose answer is its update', () => {
  it('an answer field that is not a state field is ANSWER_UNMAPPED, with the closest field', () => {
    const builder = declare()
      .node('review', person({ prompt: 'Done?', answer: z.object({ topik: z.string() }) }))
      .edge('review', END)
      .entry('review');

    const found = builder.validate();

    expect(found).toEqual([
      { ...problem('ANSWER_UNMAPPED', { node: 'review' }), details: { suggestion: 'topic' } },
    ]);
    expect(found[0]!.message).toBe(
      'person node "review" has no update, and its answer field "topik" is not a state field (did you mean "topic"?)',
    );
    expect(found[0]!.hint).toContain('update');
    expect(() => builder.compile()).toThrow(/ANSWER_UNMAPPED/);
  });

  it('answer fields that are state fields, or an update that maps the answer, are sound', () => {
    const named = declare()
      .node('review', person({ prompt: 'Done?', answer: z.object({ done: z.boolean() }) }))
      .edge('review', END)
      .entry('review');
    const mapped = declare()
      .node(
        'review',
        person({
          prompt: 'Done?',
          answer: z.object({ finished: z.boolean() }),
          update: (a) => ({ done: a.finished }),
        }),
      )
      .edge('review', END)
      .entry('review');

    expect(named.validate()).toEqual([]);
    expect(mapped.validate()).toEqual([]);
  });

  it('checking the answer fields leaves the graph hash as it was', () => {
    const build = (answer: z.ZodObject) =>
      declare()
        .node('review', person({ prompt: 'Done?', answer }))
        .edge('review', END)
        .entry('review')
        .compile().hash;

    expect(build(z.object({ done: z.boolean() }))).toBe(
      build(z.object({ done: z.boolean(), topic: z.string() })),
    );
  });
});
