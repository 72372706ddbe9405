// Events (core/v1) for `kubectl describe` and `kubectl get events`, from the operator (CreatedPods,
// InsufficientCapacity...) and from the dev cluster's kubelet, scheduler and controllers (Scheduled,
// Started, Killing, Unhealthy, ScalingReplicaSet...). A repeat of the same event (object, type,
// reason, message) bumps the count of the Event written before instead of adding one, as the
// kubelet's aggregation does; when that Event is gone (expired, deleted), a new one is written.
// Where Events go is an EventSink: an API server through a KubeClient (kubeClientEvents), or the dev
// cluster's in-process API. Recording never fails the caller: an event that cannot be written is
// logged when a logger is given, and dropped.
import { randomBytes } from "node:crypto";
import type { Clock } from "../kernel/clock.ts";
import type { Logger } from "../kernel/log.ts";
import type { KubeClient } from "./kube-client.ts";
import type { KubeObject } from "./kube-object.ts";
import { formatTime } from "./kube-time.ts";
import { EVENTS } from "./resources.ts";

export type EventType = "Normal" | "Warning";

export interface EventRecorder {
  record(object: KubeObject, type: EventType, reason: string, message: string): void;
}

export const discardEvents: EventRecorder = { record: () => {} };

/** Writes Events; each call may return a promise, and throws or rejects when the write fails. */
export interface EventSink {
  create(namespace: string, event: KubeObject): unknown;
  /** Sets the count and lastTimestamp of an Event written before (fails when it is gone). */
  bump(namespace: string, name: string, change: { count: number; lastTimestamp: string }): unknown;
}

export function kubeClientEvents(client: KubeClient): EventSink {
  return {
    create: (namespace, event) => client.create(EVENTS, namespace, event),
    bump: (namespace, name, change) => client.mergePatch(EVENTS, namespace, name, change),
  };
}

export interface EventRecorderOptions {
  /** source.component and reportingComponent. */
  component: string;
  /** source.host and reportingInstance (the node, for the kubelet); the component when absent. */
  host?: string;
  clock: Clock;
  /** Where failed writes are reported (warn); without one they are dropped silently. */
  log?: Logger;
}

interface What {
  type: EventType;
  reason: string;
  message: string;
}

interface Recorded {
  name: string;
  namespace: string;
  count: number;
}

const MAX_REMEMBERED = 4_096;

export class ApiEventRecorder implements EventRecorder {
  readonly #sink: EventSink;
  readonly #options: EventRecorderOptions;
  readonly #recent = new Map<string, Recorded>();
  #pending: Promise<unknown> = Promise.resolve();

  constructor(sink: EventSink, options: EventRecorderOptions) {
    this.#sink = sink;
    this.#options = options;
  }

  /** Writes at once when the sink is synchronous (the in-process API); otherwise see flush(). */
  record(object: KubeObject, type: EventType, reason: string, message: string): void {
    const write = this.#write(object, { type, reason, message }).catch((err: unknown) =>
      this.#options.log?.warn({ err: String(err), reason }, "could not record an event"),
    );
    // Settles to undefined, so the chain keeps no array of every result before it.
    this.#pending = Promise.all([this.#pending, write]).then(() => undefined);
  }

  /** Resolves when the events recorded so far are written (tests, shutdown). */
  flush(): Promise<unknown> {
    return this.#pending;
  }

  async #write(object: KubeObject, what: What): Promise<void> {
    const meta = object.metadata;
    const key = `${meta.uid ?? ""}|${what.type}|${what.reason}|${what.message}`;
    const now = formatTime(this.#options.clock.now());
    const seen = this.#recent.get(key);
    if (seen) {
      seen.count++;
      try {
        await this.#sink.bump(seen.namespace, seen.name, { count: seen.count, lastTimestamp: now });
        return;
      } catch {
        this.#recent.delete(key);
      }
    }
    const recorded = {
      name: `${meta.name ?? ""}.${randomBytes(8).toString("hex")}`,
      namespace: meta.namespace ?? "default",
      count: 1,
    };
    this.#remember(key, recorded);
    try {
      await this.#sink.create(recorded.namespace, this.#event(object, recorded, what, now));
    } catch (err) {
      this.#recent.delete(key);
      throw err;
    }
  }

  #event(object: KubeObject, recorded: Recorded, what: What, now: string): KubeObject {
    const meta = object.metadata;
    const { component, host } = this.#options;
    return {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: recorded.name, namespace: recorded.namespace },
      involvedObject: {
        ...(object.apiVersion !== undefined ? { apiVersion: object.apiVersion } : {}),
        ...(object.kind !== undefined ? { kind: object.kind } : {}),
        name: meta.name ?? "",
        ...(meta.namespace !== undefined ? { namespace: meta.namespace } : {}),
        uid: meta.uid ?? "",
        ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
      },
      ...what,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component, ...(host ? { host } : {}) },
      reportingComponent: component,
      reportingInstance: host ?? component,
    };
  }

  #remember(key: string, recorded: Recorded): void {
    if (this.#recent.size >= MAX_REMEMBERED) {
      const oldest = this.#recent.keys().next().value;
      if (oldest !== undefined) this.#recent.delete(oldest);
    }
    this.#recent.set(key, recorded);
  }
}
