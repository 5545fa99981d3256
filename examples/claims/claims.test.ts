import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/index.js';
import { recordModel, replayModel } from '../../src/model/index.js';
import type { FakeOpenAI } from '../../test/model/fake-openai.js';
import { scriptedOpenAI } from '../../test/support/scripted-openai.js';
import claims, { claims as build } from './graph.js';
import { respond, scriptedResearcher } from './scripted.js';

const claim = 'Tea reached Europe before coffee was first recorded in Yemen';
const scriptedLine =
  '(plan and write: scripted:claims, the scripted model; --model names a real one)';

describe('the claims example', () => {
  it('loops back to plan once for the paraphrased statement, then publishes only verified citations', async () => {
    const result = await run(claims, { claim });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path).toEqual([
      ...['plan', 'search', 'rank', 'write', 'verify'],
      ...['plan', 'search', 'rank', 'write', 'verify'],
      'publish',
    ]);
    expect(result.state.unverified).toEqual([]);
    expect(result.state.report).toContain('[tea-history]');
    expect(result.state.report).toContain('(all citations verified)');
    // plan and write are model nodes; with no run model they call the scripted one, and say so.
    expect(result.state.report.split('\n').at(-1)).toBe(scriptedLine);
    const calls = result.trace.entries.filter((e) => e.node === 'plan' || e.node === 'write');
    expect(calls).toHaveLength(4);
    for (const e of calls) expect(e.usage?.model).toBe('scripted:claims');
    expect(result.quarantine).toEqual([]);
    // The flaky first search is retried, not failed.
    const search = result.trace.entries.filter((e) => e.activation === 'search:1');
    expect(search.map((e) => e.status)).toEqual(['failed', 'succeeded']);
  });

  it('routes an error to publish: a claim no source mentions leaves verify nothing to check', async () => {
    const result = await run(claims, { claim: 'Zebras invented jazz' });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path).toEqual(['plan', 'search', 'rank', 'write', 'verify', 'publish']);
    expect(result.errors).toMatchObject([
      {
        node: 'verify',
        code: 'NODE_FAILED',
        class: 'permanent',
        message: 'nothing to verify: the search found no source for the claim',
      },
    ]);
    expect(result.state.report).toBe(
      `Claim: Zebras invented jazz\n(published with 1 error(s) recorded)\n${scriptedLine}`,
    );
  });

  it('sends every node that can fail to publish: search, plan past its visit cap, verify', () => {
    const onError = claims.def.nodes.flatMap((n) =>
      n.onError ? [`${n.name} -> ${n.onError}`] : [],
    );
    expect(onError).toEqual(['plan -> publish', 'search -> publish', 'verify -> publish']);
  });

  it('compiles to a plain-data graph whose every node is on the path from plan to END', () => {
    expect(claims.def.entry).toBe('plan');
    expect(claims.def.nodes.map((n) => n.name)).toEqual([
      'plan',
      'search',
      'rank',
      'write',
      'verify',
      'publish',
    ]);
    expect(claims.def.routes).toEqual([{ from: 'verify', targets: ['plan', 'publish'] }]);
    expect(claims.def.nodes.filter((n) => n.kind === 'model').map((n) => n.name)).toEqual([
      'plan',
      'write',
    ]);
  });
});

describe('plan and write over the OpenAI-compatible provider, offline', () => {
  let server: FakeOpenAI | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    vi.unstubAllEnvs();
    await server?.close();
    server = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('records a run against a local endpoint, then replays it from the cassette to the same state', async () => {
    server = await scriptedOpenAI(respond);
    vi.stubEnv('WAYMARK_OPENAI_BASE_URL', server.baseUrl);
    dir = mkdtempSync(join(tmpdir(), 'claims-cassette-'));
    const cassette = join(dir, 'cassette.json');

    const recorded = await run(
      build({ model: recordModel('openai-compatible:researcher', cassette) }),
      { claim },
    );

    expect(recorded.status).toBe('succeeded');
    expect(recorded.trace.path).toEqual([
      ...['plan', 'search', 'rank', 'write', 'verify'],
      ...['plan', 'search', 'rank', 'write', 'verify'],
      'publish',
    ]);
    expect(recorded.state.unverified).toEqual([]);
    expect(recorded.state.report).toContain('(all citations verified)');
    expect(recorded.state.report).toContain('(plan and write: openai-compatible:researcher)');
    // Each model call went over HTTP as structured output, and its tokens are in the trace.
    expect(server.requests).toHaveLength(4);
    for (const body of server.requests) {
      expect(body).toMatchObject({ model: 'researcher', response_format: { type: 'json_schema' } });
    }
    const calls = recorded.trace.entries.filter((e) => e.node === 'plan' || e.node === 'write');
    expect(calls).toHaveLength(4);
    for (const e of calls) {
      expect(e.usage).toMatchObject({ model: 'openai-compatible:researcher' });
      expect(e.usage?.inputTokens).toBeGreaterThan(0);
      expect(e.usage?.outputTokens).toBeGreaterThan(0);
    }
    const file = JSON.parse(readFileSync(cassette, 'utf8')) as { entries: object };
    expect(Object.keys(file.entries)).toHaveLength(4);

    await server.close();
    server = undefined;
    const replayed = await run(build({ model: replayModel(cassette) }), { claim });

    expect(replayed.status).toBe('succeeded');
    expect(replayed.trace.path).toEqual(recorded.trace.path);
    expect(replayed.state).toEqual(recorded.state);
    expect(replayed.trace.entries.map((e) => e.usage)).toEqual(
      recorded.trace.entries.map((e) => e.usage),
    );
  });

  it('the run model (--model) overrides the graph own model, and the report names it', async () => {
    server = await scriptedOpenAI(respond);
    vi.stubEnv('WAYMARK_OPENAI_BASE_URL', server.baseUrl);
    const own = scriptedResearcher();

    const result = await run(build({ model: own }), { claim }, { model: 'local:researcher' });

    expect(result.status).toBe('succeeded');
    expect(own.requests).toHaveLength(0);
    expect(server.requests).toHaveLength(4);
    expect(result.state.report.split('\n').at(-1)).toBe('(plan and write: local:researcher)');
  });
});
