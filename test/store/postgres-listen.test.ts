import net from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { PostgresStore } from '../../src/postgres.js';
import { describePg, dropSchema, pgUrl, schemaName, testPool } from './fixtures/postgres.js';

// A store whose server could not be reached when it first set up LISTEN listens once the server
// is back: the failed setup is dropped, not kept. It used to be kept, and every later wait for
// work failed with it, so an idle worker never heard of new work again.

const schema = schemaName();
const target = new URL(pgUrl);

/** A TCP door in front of the test server: while shut, every connection is closed at once. */
async function door(): Promise<{ port: number; open: boolean; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const state = { open: false };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    if (!state.open) {
      socket.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    get open() {
      return state.open;
    },
    set open(value: boolean) {
      state.open = value;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

afterAll(async () => {
  const pool = testPool();
  await dropSchema(pool, schema);
  await pool.end();
});

describePg('LISTEN on PostgreSQL', () => {
  it('a LISTEN setup that failed is tried again, and the store listens once the server answers', async () => {
    const gate = await door();
    const url = new URL(pgUrl);
    url.hostname = '127.0.0.1';
    url.port = String(gate.port);
    const store = new PostgresStore({ connectionString: url.toString(), schema });
    const signal = new AbortController().signal;
    try {
      await expect(store.waitForWork(50, signal)).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
      });
      expect(store.listening).toBe(false);

      gate.open = true;
      await store.waitForWork(50, signal);

      expect(store.listening).toBe(true);
    } finally {
      await store.close();
      await gate.close();
    }
  });
});
