/** The styles the command prints with. */
export interface Colours {
  readonly bold: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly red: (text: string) => string;
  readonly green: (text: string) => string;
  readonly yellow: (text: string) => string;
  readonly blue: (text: string) => string;
  readonly cyan: (text: string) => string;
}

// ANSI SGR codes: [on, off]. The few the command uses, written out rather than loaded from a
// package on every start.
const styles = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  cyan: [36, 39],
} as const;

/**
 * The styles, as ANSI escapes when `enabled`, else as the text unchanged.
 *
 * @example
 * colours(true).red('failed'); // '\u001b[31mfailed\u001b[39m'
 */
export function colours(enabled: boolean): Colours {
  const style = ([on, off]: readonly [number, number]) =>
    enabled ? (text: string) => `\u001b[${on}m${text}\u001b[${off}m` : (text: string) => text;
  return {
    bold: style(styles.bold),
    dim: style(styles.dim),
    red: style(styles.red),
    green: style(styles.green),
    yellow: style(styles.yellow),
    blue: style(styles.blue),
    cyan: style(styles.cyan),
  };
}
