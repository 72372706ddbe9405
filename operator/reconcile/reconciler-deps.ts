// What the reconcilers work with: the API, the informer caches, Events, the clock and settings.
import type { Logger } from "../../services/common/log.ts";
import type { Clock } from "../controller/clock.ts";
import type { EventRecorder } from "../controller/event-recorder.ts";
import type { KubeClient } from "../kube/kube-client.ts";
import type { ClusterCache } from "./cluster-cache.ts";
import type { KvStoreCleaner } from "./kv-cleanup.ts";

export interface ReconcilerConfig {
  /** How long deletion may wait for cleanup before the finalizer is removed anyway. */
  cleanupTimeoutMs: number;
}

export interface ReconcilerDeps {
  client: KubeClient;
  cache: ClusterCache;
  events: EventRecorder;
  kvCleaner: KvStoreCleaner;
  clock: Clock;
  log: Logger;
  config: ReconcilerConfig;
}
