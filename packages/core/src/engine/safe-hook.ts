/** Runs a lifecycle callback; a throw is swallowed: telemetry never breaks a request. */
export function safe(hook: () => void): void {
  try {
    hook();
  } catch {
    // ignored on purpose
  }
}
