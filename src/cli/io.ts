import pc from 'picocolors';

/** The global flags every command takes. */
export interface GlobalFlags {
  readonly db: string;
  readonly json: boolean;
  readonly quiet: boolean;
  readonly verbose: boolean;
}

/**
 * Where a command writes, and how: human lines (coloured on a terminal), or one JSON value per
 * line with `--json`. Commands never touch `process.stdout` themselves, so tests and pipes see
 * exactly what a person would.
 */
export class Io {
  readonly flags: GlobalFlags;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  /** Colours only for a person at a terminal: never in JSON, pipes, or with NO_COLOR set. */
  readonly c: ReturnType<typeof pc.createColors>;

  constructor(flags: GlobalFlags, streams = { stdout: process.stdout, stderr: process.stderr }) {
    this.flags = flags;
    this.stdout = streams.stdout;
    this.stderr = streams.stderr;
    const colour = !flags.json && this.stdout.isTTY === true && process.env.NO_COLOR === undefined;
    this.c = pc.createColors(colour);
  }

  get tty(): boolean {
    return this.stdout.isTTY === true && !this.flags.json;
  }

  /** A line for a person; nothing with `--json` or `--quiet`. */
  line(text = ''): void {
    if (!this.flags.json && !this.flags.quiet) this.stdout.write(`${text}\n`);
  }

  /** A line a script may want even with `--quiet` (a run id); nothing with `--json`. */
  essential(text: string): void {
    if (!this.flags.json) this.stdout.write(`${text}\n`);
  }

  /** One JSON value on one line; only with `--json`. */
  json(value: unknown): void {
    if (this.flags.json) this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  error(text: string): void {
    this.stderr.write(`${text}\n`);
  }
}
