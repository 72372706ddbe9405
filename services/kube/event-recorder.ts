// Events (core/v1) about the objects the operator manages: `kubectl describe` shows them. A repeat
// of the same event (object, type, reason, message) bumps its count instead of adding one more.
// Recording never fails a reconcile: errors are logged.
import { randomBytes } from "node:crypto";
import type { Clock } from "../kernel/clock.ts";
import type { Logger } from "../kernel/log.ts";
import type { KubeClient } from "./kube-client.ts";
import type { KubeObject } from "./kube-object.ts";
import { formatTime } from "./kube-time.ts";
import { EVENTS } from "./resources.ts";

export type EventType = "Normal" | "Warning";

interface Recorded {
  name: string;
  namespace: string;
  count: number;
}

const MAX_REMEMBERED = 4_096;

export class EventRecorder {
  readonly #client: KubeClient;
  readonly #component: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #recent = new Map<string, Recorded>();
  #pending: Promise<unknown> = Promise.resolve();

  constructor(client: KubeClient, deps: { component: string; clock: Clock; log: Logger }) {
    this.#client = client;
    this.#component = deps.component;
    this.#clock = deps.clock;
    this.#log = deps.log;
  }

  record(object: KubeObject, type: EventType, reason: string, message: string): void {
    const write = this.#write(object, type, reason, message).catch((err: unknown) =>
      this.#log.warn({ err: String(err), reason }, "could not record an event"),
    );
    this.#pending = Promise.all([this.#pending, write]);
  }

  /** Resolves when the events recorded so far are written (tests, shutdown). */
  flush(): Promise<unknown> {
    return this.#pending;
  }

  async #write(object: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const { namespace = "default", name = "", uid = "" } = object.metadata;
    const key = `${uid}|${type}|${reason}|${message}`;
    const now = formatTime(this.#clock.now());
    const seen = this.#recent.get(key);
    if (seen) {
      seen.count++;
      await this.#client.mergePatch(EVENTS, seen.namespace, seen.name, {
        count: seen.count,
        lastTimestamp: now,
      });
      return;
    }
    const eventName = `${name}.${randomBytes(8).toString("hex")}`;
    this.#remember(key, { name: eventName, namespace, count: 1 });
    await this.#client.create(EVENTS, namespace, {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: eventName, namespace },
      involvedObject: {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name,
        namespace,
        uid,
        ...(object.metadata.resourceVersion ? { resourceVersion: object.metadata.resourceVersion } : {}),
      },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: this.#component },
      reportingComponent: this.#component,
      reportingInstance: this.#component,
    });
  }

  #remember(key: string, recorded: Recorded): void {
    if (this.#recent.size >= MAX_REMEMBERED) {
      const oldest = this.#recent.keys().next().value;
      if (oldest !== undefined) this.#recent.delete(oldest);
    }
    this.#recent.set(key, recorded);
  }
}
