// How long the e2e fixtures let one kubectl or helm run before killing it: 90 s, or the client's own
// `--timeout` (kubectl wait, rollout status; helm --wait) and 30 s more, so a `kubectl wait
// --timeout=240s` really waits 240 s and ends with kubectl's own "timed out waiting for the condition"
// instead of being killed silently at 90 s.

const DEFAULT_MS = 90_000;
const MARGIN_MS = 30_000;
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };

/** A Go duration as kubectl and helm take it (`240s`, `5m0s`, `1h`), in ms; undefined if it is not one. */
export function goDurationMs(text: string): number | undefined {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) return undefined;
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * (UNIT_MS[unit ?? ""] ?? 0), 0);
}

export function clientLimitMs(args: readonly string[]): number {
  const at = args.findIndex((a) => a === "--timeout" || a.startsWith("--timeout="));
  const value = at < 0 ? undefined : (args[at]?.split("=")[1] ?? args[at + 1]);
  const own = value === undefined ? undefined : goDurationMs(value);
  return own === undefined ? DEFAULT_MS : Math.max(DEFAULT_MS, own + MARGIN_MS);
}
