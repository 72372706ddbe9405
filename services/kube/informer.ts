// An informer: a local cache of one resource kind kept current by list + watch. It lists, then
// watches from the list's resourceVersion (bookmarks advance it); a watch the server ends is
// resumed from the last version; 410 Gone (the version is too old) relists at once; other errors
// retry after a backoff of 1 s doubling to 30 s. Handlers see every change, including those a
// relist finds (objects that vanished while no watch was open are reported deleted).

import { Backoff, type BackoffConfig, WATCH_BACKOFF } from "../kernel/backoff.ts";
import { type Clock, sleep } from "../kernel/clock.ts";
import type { Logger } from "../kernel/log.ts";
import { isGone } from "./api-error.ts";
import type { KubeClient, WatchHandle } from "./kube-client.ts";
import { type KubeObject, objectKey } from "./kube-object.ts";
import type { ResourceRef } from "./resources.ts";

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";
export type ChangeHandler<T> = (type: ChangeType, object: T) => void;

export interface InformerOptions {
  /** "" = all namespaces. */
  namespace: string;
  labelSelector?: string;
  clock: Clock;
  log: Logger;
  backoff?: BackoffConfig;
  watchTimeoutSeconds?: number;
}

export class Informer<T extends KubeObject> {
  readonly #client: KubeClient;
  readonly #ref: ResourceRef;
  readonly #options: InformerOptions;
  readonly #backoff: Backoff;
  readonly #cache = new Map<string, T>();
  readonly #handlers: ChangeHandler<T>[] = [];
  readonly #abort = new AbortController();
  #watch: WatchHandle | undefined;
  #synced = false;
  #syncWaiters: (() => void)[] = [];
  #loop: Promise<void> | undefined;
  /** Lists made after the first (410 Gone or errors): for tests and metrics. */
  relists = 0;

  constructor(client: KubeClient, ref: ResourceRef, options: InformerOptions) {
    this.#client = client;
    this.#ref = ref;
    this.#options = options;
    this.#backoff = new Backoff(options.backoff ?? WATCH_BACKOFF);
  }

  onChange(handler: ChangeHandler<T>): void {
    this.#handlers.push(handler);
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    this.#watch?.stop();
    await this.#loop;
  }

  get hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves after the first list was loaded into the cache. */
  synced(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  get(namespace: string, name: string): T | undefined {
    return this.#cache.get(namespace ? `${namespace}/${name}` : name);
  }

  list(): T[] {
    return [...this.#cache.values()];
  }

  async #run(): Promise<void> {
    const { signal } = this.#abort;
    let first = true;
    while (!signal.aborted) {
      try {
        if (!first) this.relists++;
        first = false;
        let version = await this.#relist();
        while (!signal.aborted) version = await this.#watchFrom(version);
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          this.#options.log.debug({ resource: this.#ref.resource }, "watch too old (410 Gone): relisting");
          continue;
        }
        const delay = this.#backoff.next();
        this.#options.log.warn(
          { resource: this.#ref.resource, err: String(err), retryInMs: delay },
          "list/watch failed",
        );
        await sleep(this.#options.clock, delay, signal);
      }
    }
  }

  async #relist(): Promise<string> {
    const { namespace, labelSelector } = this.#options;
    const list = await this.#client.list<T>(this.#ref, {
      namespace,
      ...(labelSelector ? { labelSelector } : {}),
    });
    const seen = new Set<string>();
    for (const item of list.items) {
      seen.add(objectKey(item));
      this.#apply("ADDED", item);
    }
    for (const [key, object] of [...this.#cache]) if (!seen.has(key)) this.#apply("DELETED", object);
    this.#backoff.reset();
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncWaiters.splice(0)) resolve();
    }
    return list.resourceVersion;
  }

  async #watchFrom(resourceVersion: string): Promise<string> {
    let version = resourceVersion;
    const { namespace, labelSelector, watchTimeoutSeconds } = this.#options;
    this.#watch = this.#client.watch<T>(
      this.#ref,
      {
        namespace,
        resourceVersion,
        ...(labelSelector ? { labelSelector } : {}),
        ...(watchTimeoutSeconds ? { timeoutSeconds: watchTimeoutSeconds } : {}),
      },
      (event) => {
        version = event.object.metadata.resourceVersion ?? version;
        if (event.type !== "BOOKMARK") this.#apply(event.type, event.object);
      },
    );
    if (this.#abort.signal.aborted) this.#watch.stop();
    await this.#watch.done;
    return version;
  }

  #apply(type: ChangeType, object: T): void {
    const key = objectKey(object);
    const before = this.#cache.get(key);
    if (type === "DELETED") {
      if (!this.#cache.delete(key)) return;
    } else {
      if (before && before.metadata.resourceVersion === object.metadata.resourceVersion) return;
      this.#cache.set(key, object);
    }
    const change = type === "DELETED" ? "DELETED" : before ? "MODIFIED" : "ADDED";
    for (const handler of this.#handlers) handler(change, object);
  }
}
