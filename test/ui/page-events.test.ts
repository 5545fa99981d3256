import { expect, it, vi } from 'vitest';
import { z } from 'zod';
import { END, event, graph, run } from '../../src/index.js';
import { describeBrowser, screenshot } from './fixtures/browser.js';
import { servedPage } from './fixtures/served-page.js';

// The page shows an event wait with the event's name and its key, as it shows a sleep with
// until when it sleeps: what a signal must name to reach the run.

const State = z.object({ orderId: z.string(), paidCents: z.number().default(0) });
const orders = graph('page-orders', { state: State })
  .node(
    'paid',
    event({
      name: 'payment',
      schema: z.object({ paidCents: z.number().int() }),
      key: (s: z.infer<typeof State>) => s.orderId,
    }),
  )
  .node('ship', () => ({}))
  .edge('paid', 'ship')
  .edge('ship', END)
  .entry('paid')
  .compile();

vi.setConfig({ testTimeout: 30_000 });

describeBrowser('the web page and event waits', () => {
  const { open } = servedPage('events', [orders], (store) =>
    run(orders, { orderId: 'o-7' }, { store, runId: 'order-waiting' }),
  );

  it('shows an event wait with the name of its event and its key', async () => {
    const page = await open('#/runs/order-waiting');
    await page.getByTestId('run-status').filter({ hasText: 'waiting' }).waitFor();
    const waits = page.getByTestId('event-wait').first();
    await waits.waitFor();
    expect(await waits.textContent()).toContain('waits for event payment with key o-7');
    await screenshot(page, 'run-event-waiting');
    await page.close();
  });
});
