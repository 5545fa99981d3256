// A subgraph keeps its child's state in a private slot of the parent's state (`@review`) and
// leaves through an exit node (`review/__end__`). Neither is the user's: the stream gives a child
// node's update as the node returned it and names the subgraph node as a parent, `show` prints
// the state without the slot, and a state field may not take a slot's name (issue 30, point 8).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { graph, run, validate } from '../../src/index.js';
import type { StreamEvent } from '../../src/runtime/watch/stream.js';
import { expectExit, jsonOf, root, sandbox, testTimeoutMs } from '../cli/support.js';
import { postGraph } from './fixtures.js';

describe('a subgraph private slot and exit node', () => {
  it('stay out of the stream: updates as the child node returned them, the subgraph node as parent', async () => {
    const events: StreamEvent[] = [];
    const result = await run(postGraph(), { text: ' a post ' }, { watch: (e) => events.push(e) });
    expect(result.status).toBe('succeeded');
    const text = JSON.stringify(events);
    expect(text).not.toMatch(/"@review"/);
    expect(text).not.toMatch(/__end__/);
    const scheduled = events.filter((e) => e.type === 'activation.scheduled');
    expect(scheduled.find((e) => e.node === 'publish')).toMatchObject({ parent: 'review:1' });
    const child = events.find(
      (e) => e.type === 'activation.completed' && e.node.startsWith('review/'),
    );
    expect(child).toBeDefined();
    expect(Object.keys((child as { update: object }).update).every((k) => !k.startsWith('@'))).toBe(
      true,
    );
  });

  it('a state field named like a slot is refused by the validator', () => {
    const bad = graph('bad', { state: z.object({ '@draft': z.string().default('') }) })
      .node('a', () => ({}), { terminal: true })
      .entry('a');
    expect(validate(bad.toDef()).map((d) => d.code)).toContain('NAME_RESERVED');
  });

  it('show prints the state without the slot', { timeout: testTimeoutMs }, async () => {
    const box = sandbox();
    const file = join(root, 'test/subgraph/cli-graph.ts');
    expectExit(
      await box.waymark(['run', file, '--input', '{"text":"a post"}', '--run-id', 'p']),
      0,
    );
    const shown = jsonOf(await box.waymark(['--json', 'show', 'p']), 'run') as unknown as {
      state: Record<string, unknown>;
    };
    expect(Object.keys(shown.state)).not.toContain('@review');
    expect(shown.state).toMatchObject({ text: 'a post' });
    const text = await box.waymark(['show', 'p']);
    expect(text.stdout).not.toMatch(/@review/);
  });
});
