// The built-in controllers of the dev cluster, started together on the in-process API:
// Deployment -> ReplicaSet -> Pods, StatefulSet -> Pods, Service -> EndpointSlices and default
// ServiceAccounts, and the kube-root-ca.crt ConfigMap when given the CA. (Garbage collection and namespace deletion run inside the API server.)

import { type Clock, systemClock } from "../../../services/kernel/clock.ts";
import { createLogger, type Logger } from "../../../services/kernel/log.ts";
import type { EventRecorder } from "../../../services/kube/event-recorder.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { clusterEventRecorder } from "../objects/cluster-events.ts";
import type { Controller, ControllerDeps } from "./controller.ts";
import { DeploymentController } from "./deployment-controller.ts";
import { EndpointSliceController } from "./endpointslice-controller.ts";
import { ReplicaSetController } from "./replicaset-controller.ts";
import { RootCaPublisher } from "./root-ca-publisher.ts";
import { ServiceAccountController } from "./service-account-controller.ts";
import { StatefulSetController } from "./statefulset-controller.ts";

export interface ControllerManager {
  readonly controllers: readonly Controller[];
  /** Resolves once no controller has work queued (timers may still be pending). */
  idle(): Promise<void>;
  stop(): void;
}

export function startControllers(
  api: ClusterApi,
  options: { clock?: Clock; log?: Logger; events?: EventRecorder; rootCaCert?: string } = {},
): ControllerManager {
  const clock = options.clock ?? systemClock;
  const deps: ControllerDeps = {
    api,
    clock,
    log: options.log ?? createLogger("devcluster-controllers"),
    events: options.events ?? clusterEventRecorder(api, clock, "controller-manager"),
  };
  const controllers: Controller[] = [
    new DeploymentController(deps),
    new ReplicaSetController(deps),
    new StatefulSetController(deps),
    new EndpointSliceController(deps),
    new ServiceAccountController(deps),
    ...(options.rootCaCert ? [new RootCaPublisher(deps, options.rootCaCert)] : []),
  ];
  for (const controller of controllers) controller.start();
  return {
    controllers,
    idle: async () => {
      do {
        await Promise.all(controllers.map((c) => c.loop.idle()));
        await new Promise((resolve) => setImmediate(resolve));
      } while (controllers.some((c) => c.loop.busy));
    },
    stop: () => {
      for (const controller of controllers) controller.stop();
    },
  };
}
