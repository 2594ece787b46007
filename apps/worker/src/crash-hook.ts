/**
 * Test-only crash points for the crash matrix (DESIGN §4). With STEPWISE_TEST_CRASH_AT set to
 * `<point>:<step>` (e.g. `after-intent:step-002`) the worker SIGKILLs itself when it reaches that
 * point — a real, unclean death, not an exception. Without the variable this returns undefined
 * and the runner calls nothing, so production pays nothing and cannot trigger it by accident.
 */
export function crashHookFromEnv(value: string | undefined): ((point: string, step: string) => void) | undefined {
  if (!value) return undefined;
  const [point, step] = value.split(':');
  return (at, name) => {
    if (at === point && name === step) process.kill(process.pid, 'SIGKILL');
  };
}
