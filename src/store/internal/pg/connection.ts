import pg from 'pg';
import type { WaymarkError } from '../../../error/waymark-error.js';
import { closedStore, quoteSchema, unavailable } from '../pg-errors.js';
import { type PostgresStoreOptions, postgresOptions } from '../pg-params.js';
import { tunedConnections } from '../pg-planner.js';
import { deadlineConfig, pgDeadlines } from '../pg-pool.js';
import { pgTypes } from '../pg-rows.js';
import { migratePg } from '../pg-schema.js';
import { type PgStatements, pgStatements, type Statement } from '../pg-sql.js';
import type { Row } from '../rows.js';

/** The schema a store without a `schema` option keeps its tables in. */
export const defaultPostgresSchema = 'waymark';

/**
 * What every part of the PostgreSQL store shares: the pool, the schema and its statements, and
 * the migration that runs before the first statement. Each concern (run log, ownership, work
 * queue, records, signals) is a module of functions over one of these.
 */
export class PgConnection {
  /** The PostgreSQL schema that holds the store's tables. */
  readonly schema: string;
  readonly quoted: string;
  readonly sql: PgStatements;
  readonly pool: pg.Pool;
  readonly ownsPool: boolean;
  /** Whether workers and watchers are told of news by LISTEN/NOTIFY (false: they poll). */
  readonly notify: boolean;
  /** Behind a pooler in transaction mode: unnamed statements, nothing set per session. */
  readonly transactionPooling: boolean;
  /** What the listening connection adds to the pool's own settings. */
  readonly listenConfig: pg.ClientConfig;
  readonly #create: boolean;
  #setup: Promise<void> | undefined;
  #migrated = false;
  #closed = false;

  constructor(connectionOrOptions: string | PostgresStoreOptions) {
    const options = postgresOptions(connectionOrOptions);
    this.schema = options.schema ?? defaultPostgresSchema;
    this.quoted = quoteSchema(this.schema);
    this.sql = pgStatements(this.quoted);
    this.ownsPool = options.pool === undefined;
    this.transactionPooling = options.transactionPooling ?? false;
    this.notify = options.notify ?? !this.transactionPooling;
    this.#create = options.create ?? true;
    this.listenConfig = {
      application_name: 'waymark-listen',
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    };
    this.pool =
      options.pool ??
      new pg.Pool({
        ...(options.connectionString !== undefined && {
          connectionString: options.connectionString,
        }),
        max: options.poolSize ?? 10,
        connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
        // Named in pg_stat_activity (a connection string's own application_name wins).
        application_name: 'waymark',
        // A process that forgets close() still exits once its connections are idle.
        allowExitOnIdle: true,
        // Every statement bounded (pg-pool.ts): a hung one fails rather than holds the work.
        // Behind a transaction pooler only the client's own deadlines: the server's are session
        // settings (PgBouncer refuses them as startup parameters), for the role or the pooler.
        ...clientSide(
          deadlineConfig(pgDeadlines(options, !this.transactionPooling)),
          this.transactionPooling,
        ),
        // Plans by index whatever the statistics (pg-planner.ts). Not for a given pool: its
        // connections serve other code too; nor behind a transaction pooler, where a SET stays
        // on whichever server connection ran it.
        ...(!this.transactionPooling && tunedConnections),
      });
    // An idle connection whose server went away: the pool drops it and opens another on the
    // next call, which reports STORE_UNAVAILABLE if the server is still gone.
    if (this.ownsPool) this.pool.on('error', () => {});
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Creates or migrates the schema once; a failure is not kept, so the next call tries again. */
  async ready(): Promise<void> {
    if (this.#closed) throw closedStore(this.schema);
    this.#setup ??= migratePg(this.pool, this.schema, this.quoted, this.#create).then(
      () => {
        this.#migrated = true;
      },
      (error: unknown) => {
        this.#setup = undefined;
        throw unavailable(this.schema, error);
      },
    );
    await this.#setup;
  }

  /**
   * Runs one statement. A driver failure becomes STORE_UNAVAILABLE, unless `refusal` names it
   * otherwise (a constraint a damaged row broke).
   */
  async query(
    statement: Statement,
    values: readonly unknown[],
    refusal?: (error: unknown) => WaymarkError | undefined,
  ): Promise<pg.QueryResult<Row>> {
    if (!this.#migrated || this.#closed) await this.ready();
    try {
      return await this.pool.query<Row>({
        // A named statement is prepared on one server connection; a transaction pooler may
        // send the next transaction to another, where the name is unknown.
        ...(!this.transactionPooling && { name: statement.name }),
        text: statement.text,
        values: values as unknown[],
        types: pgTypes,
      });
    } catch (error) {
      throw refusal?.(error) ?? unavailable(this.schema, error);
    }
  }

  /** Refuses every later statement (STORE_UNAVAILABLE: the store is closed). */
  shut(): void {
    this.#closed = true;
  }

  /** Ends the pool the store created (a pool it was given is left to its owner). */
  async end(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}

/** `config` without the settings the server keeps per session, when `only` says so. */
function clientSide(config: pg.PoolConfig, only: boolean): pg.PoolConfig {
  if (!only) return config;
  const {
    statement_timeout: _statement,
    idle_in_transaction_session_timeout: _idle,
    ...client
  } = config;
  return client;
}
