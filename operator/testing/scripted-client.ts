// A KubeClient for informer specs: lists answer from a script, watches are driven by the test.
import { KubeApiError } from "../../services/kube/api-error.ts";
import type { KubeClient, ObjectList, WatchEvent, WatchHandle } from "../../services/kube/kube-client.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";

export class ScriptedWatch {
  readonly resourceVersion: string;
  readonly #onEvent: (event: WatchEvent) => void;
  #resolve: () => void = () => {};
  #reject: (err: unknown) => void = () => {};
  readonly handle: WatchHandle;
  stopped = false;

  constructor(resourceVersion: string, onEvent: (event: WatchEvent) => void) {
    this.resourceVersion = resourceVersion;
    this.#onEvent = onEvent;
    const done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.handle = {
      done,
      stop: () => {
        this.stopped = true;
        this.#resolve();
      },
    };
  }

  send(type: WatchEvent["type"], object: KubeObject): void {
    this.#onEvent({ type, object });
  }

  end(): void {
    this.#resolve();
  }

  gone(): void {
    this.#reject(new KubeApiError(410, "Expired", "too old resource version"));
  }
}

export class ScriptedClient {
  readonly lists: (ObjectList | Error)[] = [];
  readonly watches: ScriptedWatch[] = [];
  listCalls = 0;

  asClient(): KubeClient {
    const list = async () => {
      this.listCalls++;
      const next = this.lists.shift();
      if (!next) throw new Error("no scripted list left");
      if (next instanceof Error) throw next;
      return next;
    };
    const watch = (_ref: unknown, options: { resourceVersion: string }, onEvent: (e: WatchEvent) => void) => {
      const w = new ScriptedWatch(options.resourceVersion, onEvent);
      this.watches.push(w);
      return w.handle;
    };
    return new Proxy({ list, watch } as unknown as KubeClient, {
      get: (target, prop) => {
        if (prop in target) return target[prop as keyof KubeClient];
        return () => {
          throw new Error(`ScriptedClient: ${String(prop)} not scripted`);
        };
      },
    });
  }

  get lastWatch(): ScriptedWatch | undefined {
    return this.watches.at(-1);
  }
}

export const obj = (
  name: string,
  resourceVersion: string,
  extra: Record<string, unknown> = {},
): KubeObject => ({
  metadata: { name, namespace: "ns", resourceVersion },
  ...extra,
});
