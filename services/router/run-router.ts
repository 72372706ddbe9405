// The router process (`tessera router --config FILE`): start, serve until SIGTERM or SIGINT, then
// drain (health NOT_SERVING, new requests refused, those in flight finish) and exit.

import { systemClock } from "../kernel/clock.ts";
import type { Logger } from "../kernel/log.ts";
import type { RouterConfig } from "./config/router-config.ts";
import { startRouter } from "./start-router.ts";

const STOP_SIGNALS: NodeJS.Signals[] = ["SIGTERM", "SIGINT"];

export async function runRouter(config: RouterConfig, log: Logger): Promise<void> {
  const running = await startRouter(config, log, systemClock, process.env);
  const signal = await nextSignal();
  log.info({ signal, drainTimeoutMs: config.drainTimeoutMs }, "stop signal received: draining");
  const result = await running.stop();
  log.info(result, "stopped");
}

/** The first stop signal; its handlers are then removed, so a second signal kills at once. */
function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals) => {
      for (const s of STOP_SIGNALS) process.off(s, handler);
      resolve(signal);
    };
    for (const s of STOP_SIGNALS) process.on(s, handler);
  });
}
