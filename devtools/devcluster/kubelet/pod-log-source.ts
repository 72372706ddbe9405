// `kubectl logs` for the pods of this node: the API server's log endpoint calls this source,
// which picks the container (the only one, or the default-container annotation), the current or
// previous instance, and reads or follows its log.

import type { Clock } from "../../../services/kernel/clock.ts";
import { apiErrors } from "../apiserver/core/api-status.ts";
import type { PodLogRequest, PodLogSource } from "../apiserver/http/pod-logs.ts";
import type { Pod } from "../objects/pod-types.ts";
import type { ContainerLog, LogReadOptions } from "./container-log.ts";
import type { ContainerRunner } from "./container-runner.ts";

export interface PodLogLookup {
  /** The pod as stored (throws 404 when it does not exist). */
  pod(namespace: string, name: string): Pod;
  /** The runner of a container of that pod instance on this node. */
  runner(pod: Pod, container: string): ContainerRunner | undefined;
}

async function* once(text: string): AsyncGenerator<string> {
  if (text !== "") yield text;
}

function pickContainer(pod: Pod, requested: string | undefined): string {
  const names = pod.spec.containers.map((c) => c.name);
  const all = [...names, ...(pod.spec.initContainers ?? []).map((c) => c.name)];
  const name = pod.metadata.name ?? "";
  if (requested !== undefined) {
    if (!all.includes(requested))
      throw apiErrors.badRequest(`container ${requested} is not valid for pod ${name}`);
    return requested;
  }
  const annotated = pod.metadata.annotations?.["kubectl.kubernetes.io/default-container"];
  if (annotated && names.includes(annotated)) return annotated;
  if (names.length === 1 && names[0]) return names[0];
  throw apiErrors.badRequest(
    `a container name must be specified for pod ${name}, choose one of: [${names.join(" ")}]`,
  );
}

export function podLogSource(lookup: PodLogLookup, clock: Clock): PodLogSource {
  return (request: PodLogRequest) => {
    const pod = lookup.pod(request.namespace, request.name);
    const container = pickContainer(pod, request.container);
    const runner = lookup.runner(pod, container);
    const log: ContainerLog | undefined = request.previous ? runner?.logs.previous : runner?.logs.current;
    if (!log) {
      if (request.previous)
        throw apiErrors.badRequest(
          `previous terminated container "${container}" in pod "${request.name}" not found`,
        );
      throw apiErrors.badRequest(
        `container "${container}" in pod "${request.name}" is waiting to start: ContainerCreating`,
      );
    }
    const options: LogReadOptions = {
      timestamps: request.timestamps,
      ...(request.tailLines !== undefined ? { tailLines: request.tailLines } : {}),
      ...(request.sinceSeconds !== undefined ? { sinceTime: clock.now() - request.sinceSeconds * 1000 } : {}),
      ...(request.limitBytes !== undefined ? { limitBytes: request.limitBytes } : {}),
    };
    if (request.follow && !log.closed) return log.follow(options, request.signal);
    return once(log.read(options));
  };
}
