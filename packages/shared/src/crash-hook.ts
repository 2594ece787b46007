/** Called at named points of the step protocol and of start_job; see crashHookFromEnv. */
export type CrashHook = (point: string, step: string) => void;

/**
 * Test-only crash points for the crash matrix (DESIGN §4). With STEPWISE_TEST_CRASH_AT set to
 * `<point>:<name>` (e.g. `after-intent:step-002`, or `after-commit:start_job` in the server) the
 * process SIGKILLs itself when it reaches that
 * point — a real, unclean death, not an exception. Without the variable this returns undefined
 * and the runner calls nothing, so production pays nothing and cannot trigger it by accident.
 */
export function crashHookFromEnv(value: string | undefined): CrashHook | undefined {
  if (!value) return undefined;
  const [point, step] = value.split(':');
  return (at, name) => {
    if (at === point && name === step) process.kill(process.pid, 'SIGKILL');
  };
}
