// Reads of the in-process API (cluster-api.ts): get, list with selectors and continue tokens, and
// watches that translate store events into what a filtered watch sees. Writes and deletion build on
// this class (cluster-api-writes.ts, cluster-api-delete.ts).

import type { Clock } from "../../../../services/kernel/clock.ts";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { apiErrors } from "../core/api-status.ts";
import type { ResourceRegistry } from "../resources/registry.ts";
import { groupResourceOf, type ResourceType } from "../resources/resource-type.ts";
import type { ObjectStore, StoreEvent } from "../store/object-store.ts";
import type {
  ListOptions,
  ObjectList,
  ResourceRef,
  WatchEvent,
  WatchHandle,
  WatchOptions,
} from "./api-types.ts";
import { compileFilter } from "./selection.ts";

export interface ClusterApiOptions {
  store: ObjectStore;
  registry: ResourceRegistry;
  clock: Clock;
  /**
   * Pods on a node are deleted in two steps as on real Kubernetes: the API sets deletionTimestamp
   * and the kubelet removes the pod (gracePeriodSeconds=0) once its processes stopped. Off by
   * default, so a cluster without a kubelet deletes pods at once.
   */
  gracefulPodDeletion?: boolean;
  /**
   * Pods get their service account's token volume on creation (service-account-admission.ts), as
   * kube-apiserver's admission does. Off by default, so a cluster without a kubelet stores pods as
   * written; the dev cluster, whose kubelet mounts the tokens, turns it on.
   */
  serviceAccountAdmission?: boolean;
}

function decodeContinue(token: string | undefined): string | undefined {
  if (!token) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as { start?: unknown };
    if (typeof parsed.start === "string") return parsed.start;
  } catch {}
  throw apiErrors.badRequest("continue key is not valid");
}

const sortKey = (o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;

export class ClusterReads {
  readonly store: ObjectStore;
  readonly registry: ResourceRegistry;
  readonly clock: Clock;
  readonly serviceAccountAdmission: boolean;

  constructor(options: ClusterApiOptions) {
    this.store = options.store;
    this.registry = options.registry;
    this.clock = options.clock;
    this.serviceAccountAdmission = options.serviceAccountAdmission ?? false;
  }

  /** The resource type a ref names; 404 when the server does not serve it. */
  resolve(ref: ResourceRef): ResourceType {
    const type = this.registry.byResource(ref.group, ref.version, ref.resource);
    if (!type) throw apiErrors.noResource();
    return type;
  }

  /** The object as the requested version presents it (custom resources convert with strategy None). */
  present(type: ResourceType, object: KubeObject): KubeObject {
    object.apiVersion = type.group === "" ? type.version : `${type.group}/${type.version}`;
    return object;
  }

  get resourceVersion(): string {
    return String(this.store.revision);
  }

  get(ref: ResourceRef, namespace: string, name: string): KubeObject {
    const type = this.resolve(ref);
    const found = this.store.get(groupResourceOf(type), type.namespaced ? namespace : "", name);
    if (!found) throw apiErrors.notFound({ group: type.group, resource: type.plural, name });
    return this.present(type, found);
  }

  list(ref: ResourceRef, options: ListOptions = {}): ObjectList {
    const type = this.resolve(ref);
    const filter = compileFilter({ ...options, ...(type.namespaced ? {} : { namespace: undefined }) });
    const start = decodeContinue(options.continue);
    let items = this.store
      .list(groupResourceOf(type), type.namespaced ? options.namespace : undefined)
      .filter(filter)
      .filter((o) => start === undefined || sortKey(o) > start);
    const resourceVersion = this.resourceVersion;
    const limit = options.limit ?? 0;
    if (limit > 0 && items.length > limit) {
      const remaining = items.length - limit;
      items = items.slice(0, limit);
      const token = Buffer.from(
        JSON.stringify({ rv: resourceVersion, start: sortKey(items[items.length - 1]!) }),
      ).toString("base64url");
      return {
        items: items.map((o) => this.present(type, o)),
        resourceVersion,
        continue: token,
        remainingItemCount: remaining,
      };
    }
    return { items: items.map((o) => this.present(type, o)), resourceVersion };
  }

  /**
   * Streams changes to listener until stopped. Throws 410 Expired when resourceVersion is older
   * than the retained history (the client must relist).
   */
  watch(ref: ResourceRef, options: WatchOptions, listener: (event: WatchEvent) => void): WatchHandle {
    const type = this.resolve(ref);
    const groupResource = groupResourceOf(type);
    const filter = compileFilter({ ...options, ...(type.namespaced ? {} : { namespace: undefined }) });
    const rv = options.resourceVersion ?? "";
    let from: number;
    if (rv === "" || rv === "0" || options.sendInitialEvents) {
      for (const object of this.store.list(groupResource, type.namespaced ? options.namespace : undefined)) {
        if (filter(object)) listener({ type: "ADDED", object: this.present(type, object) });
      }
      from = this.store.revision;
      if (options.sendInitialEvents) listener(this.bookmark(type, { "k8s.io/initial-events-end": "true" }));
    } else {
      from = Number(rv);
      if (!Number.isInteger(from)) throw apiErrors.badRequest(`invalid resource version "${rv}"`);
    }
    const stop = this.store.watch(from, (event) => {
      if (event.groupResource !== groupResource) return;
      const translated = translate(event, filter);
      if (translated)
        listener({ type: translated, object: this.present(type, structuredClone(event.object)) });
    });
    return { stop };
  }

  /** A BOOKMARK event carrying the current resourceVersion. */
  bookmark(type: ResourceType, annotations?: Record<string, string>): WatchEvent {
    return {
      type: "BOOKMARK",
      object: {
        apiVersion: type.group === "" ? type.version : `${type.group}/${type.version}`,
        kind: type.kind,
        metadata: { resourceVersion: this.resourceVersion, ...(annotations ? { annotations } : {}) },
      },
    };
  }
}

/** Maps a store event to what a filtered watch sees: objects entering or leaving the selection. */
function translate(event: StoreEvent, filter: (o: KubeObject) => boolean): WatchEvent["type"] | undefined {
  const now = filter(event.object);
  const before = event.previous ? filter(event.previous) : false;
  switch (event.type) {
    case "ADDED":
      return now ? "ADDED" : undefined;
    case "MODIFIED":
      if (now) return before ? "MODIFIED" : "ADDED";
      return before ? "DELETED" : undefined;
    case "DELETED":
      return before || now ? "DELETED" : undefined;
    default: {
      const never: never = event.type;
      return never;
    }
  }
}
