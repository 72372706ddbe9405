// Events for `kubectl describe` and `kubectl get events`: Scheduled, Started, Killing, Unhealthy,
// ScalingReplicaSet... A repeat of the same reason and message on the same object bumps the
// count of the existing Event instead of adding one (as the kubelet's aggregation does).
// Recording never fails the caller: an event that cannot be written is dropped.
import { randomBytes } from "node:crypto";
import type { Clock } from "../../../services/kernel/clock.ts";
import type { KubeObject } from "../../../services/kube/kube-object.ts";
import { formatTime } from "../../../services/kube/kube-time.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import { EVENTS } from "./refs.ts";

export type EventType = "Normal" | "Warning";

export interface EventRecorder {
  record(object: KubeObject, type: EventType, reason: string, message: string): void;
}

export const discardEvents: EventRecorder = { record: () => {} };

const MAX_REMEMBERED = 2_000;

export class ApiEventRecorder implements EventRecorder {
  readonly #api: ClusterApi;
  readonly #clock: Clock;
  readonly #component: string;
  readonly #host: string;
  readonly #names = new Map<string, { namespace: string; name: string }>();

  constructor(api: ClusterApi, clock: Clock, component: string, host = "") {
    this.#api = api;
    this.#clock = clock;
    this.#component = component;
    this.#host = host;
  }

  record(object: KubeObject, type: EventType, reason: string, message: string): void {
    const meta = object.metadata;
    const namespace = meta.namespace ?? "default";
    const key = `${meta.uid}/${type}/${reason}/${message}`;
    const now = formatTime(this.#clock.now());
    try {
      const known = this.#names.get(key);
      if (known && this.#bump(known.namespace, known.name, now)) return;
      const event = this.#api.create(
        EVENTS,
        namespace,
        {
          apiVersion: "v1",
          kind: "Event",
          metadata: { name: `${meta.name}.${randomBytes(8).toString("hex")}`, namespace },
          involvedObject: {
            apiVersion: object.apiVersion,
            kind: object.kind,
            name: meta.name,
            namespace: meta.namespace,
            uid: meta.uid,
            resourceVersion: meta.resourceVersion,
          },
          type,
          reason,
          message,
          source: { component: this.#component, ...(this.#host ? { host: this.#host } : {}) },
          reportingComponent: this.#component,
          reportingInstance: this.#host,
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
        { fieldManager: this.#component },
      );
      if (this.#names.size >= MAX_REMEMBERED) this.#names.clear();
      this.#names.set(key, { namespace, name: event.metadata.name ?? "" });
    } catch {
      // Events are best effort (the namespace may be terminating, the object gone).
    }
  }

  #bump(namespace: string, name: string, now: string): boolean {
    try {
      const event = this.#api.get(EVENTS, namespace, name);
      event["count"] = (typeof event["count"] === "number" ? event["count"] : 1) + 1;
      event["lastTimestamp"] = now;
      this.#api.update(EVENTS, namespace, name, event, { fieldManager: this.#component });
      return true;
    } catch {
      return false;
    }
  }
}
