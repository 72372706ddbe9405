// Events of the dev cluster's kubelet, scheduler and controllers, written straight into the
// in-process API: the shared recorder (services/kube/event-recorder.ts) over a sink that creates
// and merge-patches Events as the component's field manager. The API is synchronous, so an event
// is in the store when record() returns. Events are best effort (the namespace may be terminating,
// the object gone): one that cannot be written is dropped without a word.
import type { Clock } from "../../../services/kernel/clock.ts";
import { ApiEventRecorder, type EventSink } from "../../../services/kube/event-recorder.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { EVENTS } from "./refs.ts";

export function clusterEventSink(api: ClusterApi, component: string): EventSink {
  return {
    create: (namespace, event) => api.create(EVENTS, namespace, event, { fieldManager: component }),
    bump: (namespace, name, change) =>
      api.patch(EVENTS, namespace, name, "merge", change, { fieldManager: component }),
  };
}

/** The recorder of one dev cluster component (host: its node, for the kubelet). */
export function clusterEventRecorder(
  api: ClusterApi,
  clock: Clock,
  component: string,
  host?: string,
): ApiEventRecorder {
  return new ApiEventRecorder(clusterEventSink(api, component), {
    component,
    clock,
    ...(host ? { host } : {}),
  });
}
