// `waymark signal` and `waymark signals`: a signal from the command line to a run that waits for
// an external event (fixtures/orders.ts waits for `payment`, keyed by the order id).
import { describe, expect, it } from 'vitest';
import { expectError, expectExit, fixture, jsonOf, sandbox, testTimeoutMs } from './support.js';

const orders = fixture('orders.ts');

describe.concurrent('waymark signal', { timeout: testTimeoutMs }, () => {
  it('checks the payload, delivers the signal once and continues the run', async () => {
    const box = sandbox();
    expectExit(
      await box.waymark(['run', orders, '--input', '{"orderId":"o-7"}', '--run-id', 'a']),
      3,
    );

    const invalid = await box.waymark(['signal', 'a', 'payment', '{"paidCents":-1}']);
    expectError(invalid, 'SIGNAL_INVALID', { lines: 'any' });
    expectError(await box.waymark(['signal', 'a', 'refund', '{}']), 'SIGNAL_UNKNOWN', {
      lines: 'any',
    });

    const out = await box.waymark([
      '--json',
      'signal',
      'a',
      'payment',
      '{"paidCents":1200}',
      '--id',
      'evt_1',
    ]);
    expectExit(out, 0);
    expect(jsonOf(out, 'signal')).toMatchObject({
      outcome: 'delivered',
      signal: { id: 'evt_1', consumedRun: 'a', payload: { paidCents: 1200 } },
    });
    expect(jsonOf(out, 'result')).toMatchObject({ status: 'succeeded' });

    const again = await box.waymark([
      '--json',
      'signal',
      'a',
      'payment',
      '{"paidCents":1200}',
      '--id',
      'evt_1',
    ]);
    expectExit(again, 0);
    expect(jsonOf(again, 'signal')).toMatchObject({ outcome: 'duplicate' });
  });

  it('keeps a { graph, key } signal sent before its run, lists it, and the run takes it', async () => {
    const box = sandbox();
    const kept = await box.waymark([
      '--json',
      'signal',
      '--graph',
      orders,
      '--key',
      'o-9',
      'payment',
      '{"paidCents":300}',
    ]);
    expectExit(kept, 0);
    expect(jsonOf(kept, 'signal')).toMatchObject({ outcome: 'kept', signal: { key: 'o-9' } });
    const listed = await box.waymark(['--json', 'signals']);
    expect(jsonOf(listed, 'signals')).toMatchObject({
      signals: [{ key: 'o-9', consumedRun: null }],
    });

    const ran = await box.waymark(['--json', 'run', orders, '--input', '{"orderId":"o-9"}']);
    expectExit(ran, 0);
    expect(jsonOf(ran, 'result')).toMatchObject({ status: 'succeeded' });
    expect(jsonOf(await box.waymark(['--json', 'signals']), 'signals')).toMatchObject({
      signals: [],
    });
  });
});
