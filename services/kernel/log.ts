import { type Logger, pino } from "pino";

export type { Logger };

/** Structured JSON logs on stderr (stdout stays free for CLI output). */
export function createLogger(component: string, level = process.env["TESSERA_LOG_LEVEL"] ?? "info"): Logger {
  return pino({ level, base: { component } }, pino.destination(2));
}
