// What ends a command that serves until it is told to stop (`waymark serve`, `waymark ui`).
//
// npm does not pass a signal on to the command it started: `npx waymark serve`, then
// `kill <pid of npx>`, ends npm and the `sh -c` it ran the command in, and leaves the server
// listening under PID 1. So a command npm started also stops when its parent process is gone:
// its `process.ppid` changes (it was handed to init, or to a subreaper). That costs one system
// call a second. It is only watched under npm (npm sets `npm_command` for what it runs): a
// server started from a shell with `nohup ... &` is meant to outlive that shell, and one under
// systemd or docker has a parent that stays.

/** Why a serving command stops. */
export type StopCause = 'SIGTERM' | 'SIGINT' | 'parent-gone';

/** How often the parent is looked at, in ms. */
const parentPollMs = 1000;

/**
 * Resolves with the cause once the command should stop: SIGTERM, Ctrl-C (SIGINT), or, when npm
 * started it, the end of the process that started it. Stops listening once it has resolved.
 *
 * @example
 * const cause = await untilStopped(); // then close the server and the store
 */
export function untilStopped(
  env: NodeJS.ProcessEnv = process.env,
  pollMs = parentPollMs,
): Promise<StopCause> {
  return new Promise((resolve) => {
    const parent = process.ppid;
    let timer: ReturnType<typeof setInterval> | undefined;
    const stop = (cause: StopCause) => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      clearInterval(timer);
      resolve(cause);
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.once('SIGTERM', onTerm);
    process.once('SIGINT', onInt);
    // A parent already gone (ppid 1 from the start) has nothing to watch.
    if (startedByNpm(env) && parent > 1) {
      timer = setInterval(() => {
        if (process.ppid !== parent) stop('parent-gone');
      }, pollMs);
    }
  });
}

/**
 * Whether npm (npx, `npm exec`, `npm run`, `npm start`) started this process.
 *
 * @example
 * startedByNpm({ npm_command: 'exec' }); // true
 */
export function startedByNpm(env: NodeJS.ProcessEnv): boolean {
  return env.npm_command !== undefined && env.npm_command !== '';
}
