import { type Colours, colours } from './colours.js';

/** The global flags every command takes. */
export interface GlobalFlags {
  /** Where runs live: a SQLite path, or a postgres:// URL (from --store or WAYMARK_STORE). */
  readonly db: string;
  readonly store?: string;
  readonly json: boolean;
  readonly quiet: boolean;
  readonly verbose: boolean;
}

/**
 * What the command has learnt about what it acts on, as it goes: the hints and the next
 * commands it prints are made of these, so they name the real run, file and database.
 */
export interface About {
  /** The subcommand (`run`, `show`, ...). */
  command?: string;
  runId?: string;
  /** The graph file of the run: given with --graph, or the one the run recorded. */
  graphFile?: string;
  /** Whether --graph named it (a next command must name it too). */
  graphGiven?: boolean;
  /** What works instead, when `resume` cannot continue the run (next.ts, `whatWorks`). */
  next?: string[];
}

/**
 * Where a command writes, and how: human lines (coloured on a terminal), or one JSON value per
 * line with `--json`. Commands never touch `process.stdout` themselves, so tests and pipes see
 * exactly what a person would.
 */
export class Io {
  readonly flags: GlobalFlags;
  readonly about: About;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  /** Colours only for a person at a terminal: never in JSON, pipes, or with NO_COLOR set. */
  readonly c: Colours;
  readonly #dbGiven: () => boolean;
  #closed = false;

  constructor(
    flags: GlobalFlags,
    options: { readonly about?: About; readonly dbGiven?: () => boolean } = {},
    streams: { readonly stdout: NodeJS.WriteStream; readonly stderr: NodeJS.WriteStream } = {
      stdout: process.stdout,
      stderr: process.stderr,
    },
  ) {
    this.flags = flags;
    this.about = options.about ?? {};
    this.#dbGiven = options.dbGiven ?? (() => false);
    this.stdout = streams.stdout;
    this.stderr = streams.stderr;
    const colour = !flags.json && this.stdout.isTTY === true && process.env.NO_COLOR === undefined;
    this.c = colours(colour);
    // `waymark run ... | head -4`: once the reader is gone, writing stops, not the run. Without
    // a listener the EPIPE would be thrown from the event loop and kill the run mid-step.
    for (const stream of [this.stdout, this.stderr]) {
      stream.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EPIPE') throw error;
        if (stream === this.stdout) this.#closed = true;
      });
    }
  }

  /** Whether --db was given (a next command must then name it too). */
  get dbGiven(): boolean {
    return this.#dbGiven();
  }

  get tty(): boolean {
    return this.stdout.isTTY === true && !this.flags.json;
  }

  /** A line for a person; nothing with `--json` or `--quiet`. */
  line(text = ''): void {
    if (!this.flags.json && !this.flags.quiet) this.#write(`${text}\n`);
  }

  /** A line a script may want even with `--quiet` (a run id); nothing with `--json`. */
  essential(text: string): void {
    if (!this.flags.json) this.#write(`${text}\n`);
  }

  /** One JSON value on one line; only with `--json`. */
  json(value: unknown): void {
    if (this.flags.json) this.#write(`${JSON.stringify(value)}\n`);
  }

  error(text: string): void {
    this.stderr.write(`${text}\n`);
  }

  #write(text: string): void {
    if (!this.#closed) this.stdout.write(text);
  }
}
