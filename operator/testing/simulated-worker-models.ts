// The answer a worker pod would give to ListModels, for specs whose pods are simulated (no process
// runs, so there is no gRPC server to ask): by default the name the operator told the pod
// (TESSERA_MODEL_NAME, as `tessera serve` does), or what a spec says its workers serve (a worker that
// serves another name), and an error for a pod it cannot find.
import type { ApiServer } from "../../devtools/devcluster/apiserver/api-server.ts";
import { PODS } from "../../services/kube/resources.ts";
import type { WorkerModels, WorkerPodRef } from "../reconcile/worker-models.ts";

interface PodSpec {
  containers?: { env?: { name: string; value?: string }[] }[];
}

export class SimulatedWorkerModels implements WorkerModels {
  readonly #api: ApiServer["api"];
  /** What every worker serves instead of its TESSERA_MODEL_NAME, when set. */
  serving: string[] | undefined;
  /** Every pod asked, in order. */
  readonly asked: string[] = [];

  constructor(api: ApiServer["api"]) {
    this.#api = api;
  }

  async servedNames(pod: WorkerPodRef): Promise<string[]> {
    this.asked.push(pod.name);
    if (this.serving) return this.serving;
    const object = this.#api.get(PODS, pod.namespace, pod.name);
    const env = ((object["spec"] ?? {}) as PodSpec).containers?.[0]?.env ?? [];
    const name = env.find((e) => e.name === "TESSERA_MODEL_NAME")?.value;
    if (name === undefined) throw new Error(`${pod.name} has no TESSERA_MODEL_NAME`);
    return [name];
  }
}
