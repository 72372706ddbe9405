// What every built-in controller gets: the in-process API, the clock, a logger and an event recorder;
// and the reconcile loop it runs on (services/kube/reconcile-loop.ts), set as the dev cluster needs
// it: reconciles read the store itself, so a 409 conflict runs again at once, and other errors retry
// with a per-key back-off from 100 ms doubling to 10 s, all on the injected clock.
import type { Clock } from "../../../services/kernel/clock.ts";
import type { Logger } from "../../../services/kernel/log.ts";
import type { EventRecorder } from "../../../services/kube/event-recorder.ts";
import { type Reconcile, ReconcileLoop } from "../../../services/kube/reconcile-loop.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { statusCodeOf } from "../apiserver/core/api-status.ts";

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

/** A started reconcile loop for a built-in controller. */
export function controllerLoop(
  name: string,
  reconcile: Reconcile,
  deps: { clock: Clock; log: Logger },
): ReconcileLoop {
  const loop = new ReconcileLoop(name, reconcile, {
    clock: deps.clock,
    log: deps.log,
    retry: { initialMs: 100, maxMs: 10_000 },
    conflicts: "at-once",
    isConflict: (err) => statusCodeOf(err) === 409,
  });
  loop.start();
  return loop;
}
