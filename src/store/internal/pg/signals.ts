// News on PostgreSQL, by LISTEN/NOTIFY on a connection of the store's own outside the pool: new
// work for idle workers (WorkSignals in store.ts) and commits for watchers (RunCommits).

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { CommitFollower } from '../../store.js';
import type { WorkKind } from '../../work-queue.js';
import { CommitFollowers } from '../commit-followers.js';
import { LocalSignals } from '../local-signals.js';
import { workChannel } from '../pg-queue-sql.js';
import { watchChannel } from '../pg-watch-sql.js';
import type { PgConnection } from './connection.js';

/** How long a watcher's row lives without renewal (it is renewed every third of it). */
const watchLeaseMs = 30_000;

/** The store's listening connection, and who waits on what it is told. */
export class PgSignals {
  readonly #db: PgConnection;
  #listener: Promise<pg.Client | undefined> | undefined;
  /** Who waits for work, and for which kind: told what the LISTEN connection hears. */
  readonly #work = new LocalSignals();
  #listening = false;
  readonly #followers = new CommitFollowers();
  readonly #watcher = randomUUID();
  #renewing: ReturnType<typeof setInterval> | undefined;

  constructor(db: PgConnection) {
    this.#db = db;
  }

  get listening(): boolean {
    return this.#listening;
  }

  notifiedOf(kind: WorkKind): number {
    return this.#work.notifiedOf(kind);
  }

  /**
   * Waits for a notification on this store's work channel, or `ms`, or `signal`.
   * Notifications are coalesced: every waiter wakes on the next one. With `notify: false`
   * (PgBouncer in transaction mode keeps no LISTEN), or while the listening connection is down,
   * it is a plain poll.
   */
  async waitForWork(
    ms: number,
    signal: AbortSignal,
    since?: number,
    kind?: WorkKind,
  ): Promise<void> {
    if (signal.aborted) return;
    if (this.#db.notify && !this.#db.closed) await this.#listen();
    // Aborted while the listening connection opened: its abort event has fired already.
    await this.#work.wait(ms, signal, since, kind);
  }

  /**
   * Follows a run's commits by LISTEN/NOTIFY: the run is marked watched (a row, renewed while
   * followed), and its commits then notify this store's listening connection. With
   * `notify: false`, or while that connection is down, the follower is not live and `watch()`
   * polls; with `notify: false` it writes nothing.
   */
  async followCommits(runId: string): Promise<CommitFollower> {
    const db = this.#db;
    if (db.notify && !db.closed) await this.#listen();
    const { follower, first } = this.#followers.follow(
      runId,
      () => this.#listening,
      async (last) => {
        if (!last) return;
        if ([...this.#followers.runs].length === 0) {
          clearInterval(this.#renewing);
          this.#renewing = undefined;
        }
        if (!db.closed && db.notify) {
          await db.query(db.sql.unwatch, [runId, this.#watcher]).catch(() => {});
        }
      },
    );
    // Polling, nothing is written: no row to mark the run watched, none to renew or remove, so
    // a store on a read-only replica follows runs too.
    if (!db.notify) return follower;
    if (first) {
      try {
        await db.query(db.sql.watch, [runId, this.#watcher, watchLeaseMs]);
      } catch (error) {
        await follower.close();
        throw error;
      }
    }
    this.#renewing ??= setInterval(() => {
      db.query(db.sql.renewWatch, [this.#watcher, watchLeaseMs]).catch(() => {});
    }, watchLeaseMs / 3);
    this.#renewing.unref?.();
    return follower;
  }

  /** Stops renewing, wakes every waiter, and ends the listening connection. */
  async close(): Promise<void> {
    clearInterval(this.#renewing);
    this.#work.wakeAll();
    const listener = await this.#listener?.catch(() => undefined);
    await listener?.end().catch(() => {});
  }

  /**
   * The listening connection, opened once; a broken one, or a setup that failed (the server was
   * down when the store first waited), is dropped and opened again on the next wait.
   */
  #listen(): Promise<pg.Client | undefined> {
    if (this.#listener !== undefined) return this.#listener;
    const listener = this.#open();
    this.#listener = listener;
    listener.catch(() => {
      if (this.#listener === listener) this.#listener = undefined;
    });
    return listener;
  }

  async #open(): Promise<pg.Client | undefined> {
    const db = this.#db;
    await db.ready();
    // The pool's own settings (its connection string, or what it was given), not one of its
    // connections: LISTEN must outlive every query.
    const client = new pg.Client({
      ...(db.pool as unknown as { options: pg.ClientConfig }).options,
      ...db.listenConfig,
    });
    const drop = () => {
      this.#listener = undefined;
      this.#listening = false;
      client.end().catch(() => {});
    };
    client.on('error', drop);
    client.on('end', () => {
      this.#listener = undefined;
      this.#listening = false;
    });
    const watching = watchChannel(db.quoted);
    client.on('notification', (message) => {
      if (message.channel === watching) {
        this.#followers.committed(message.payload ?? '');
        return;
      }
      // Payloads are 'tasks' (a task to claim) or 'runs' (an inbox item to fold).
      this.#work.tell(message.payload === 'tasks' ? 'tasks' : 'runs');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${workChannel(db.quoted)}; LISTEN ${watching}`);
      this.#listening = true;
      // Commits made while no connection listened were told to nobody: read again.
      this.#followers.all();
      return client;
    } catch {
      drop();
      return undefined;
    }
  }
}
