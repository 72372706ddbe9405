// What every built-in controller gets: the in-process API, the clock, a logger and an event recorder.

import type { Clock } from "../../../services/kernel/clock.ts";
import type { Logger } from "../../../services/kernel/log.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import type { EventRecorder } from "../objects/event-recorder.ts";

export interface ControllerDeps {
  api: ClusterApi;
  clock: Clock;
  log: Logger;
  events: EventRecorder;
}

export interface Controller {
  readonly loop: { idle(): Promise<void>; readonly busy: boolean };
  start(): void;
  stop(): void;
}
