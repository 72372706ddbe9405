// An operator running against a dev cluster over HTTPS, with a simulated kubelet, for specs of the
// whole control loop. Each spec gets its own namespace.

import { INFERENCE_MODELS, WORKER_POOLS } from "../../services/api/group.ts";
import type { InferenceModel } from "../../services/api/kinds.ts";
import { createLogger } from "../../services/kernel/log.ts";
import type { HttpsKubeClient } from "../../services/kube/https-client.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import { PODS } from "../../services/kube/resources.ts";
import { Operator, type OperatorOptions } from "../operator.ts";
import type { KvStoreCleaner } from "../reconcile/kv-cleanup.ts";
import { type DevCluster, startDevCluster } from "./dev-cluster.ts";
import { PermissionCheckingClient } from "./permission-checking-client.ts";
import { PodSimulator, waitFor } from "./pod-simulator.ts";
import { SimulatedWorkerModels } from "./simulated-worker-models.ts";

const NAMESPACES = { group: "", version: "v1", resource: "namespaces" };

export class OperatorFixture {
  readonly cluster: DevCluster;
  readonly client: HttpsKubeClient;
  readonly kubelet: PodSimulator;
  operator: Operator | undefined;
  /** Every call of every operator started here, checked against the RBAC rules. */
  readonly permissions = new PermissionCheckingClient();
  /** What the simulated worker pods answer when the operator asks which model they serve. */
  readonly workerModels: SimulatedWorkerModels;
  #namespaces = 0;

  private constructor(cluster: DevCluster) {
    this.cluster = cluster;
    this.client = cluster.client("spec-user");
    this.kubelet = new PodSimulator(cluster.server.api);
    this.workerModels = new SimulatedWorkerModels(cluster.server.api);
    this.kubelet.start();
  }

  static async start(): Promise<OperatorFixture> {
    return new OperatorFixture(await startDevCluster());
  }

  startOperator(options: Partial<OperatorOptions> & { kvCleaner?: KvStoreCleaner } = {}): Operator {
    const operator = new Operator({
      client: this.permissions.wrap(this.cluster.client()),
      namespace: "",
      log: createLogger("operator", process.env["TESSERA_LOG_LEVEL"] ?? "silent"),
      cleanupTimeoutMs: 5_000,
      workerModels: this.workerModels,
      ...options,
    });
    operator.start();
    this.operator = operator;
    return operator;
  }

  async stopOperator(): Promise<void> {
    await this.operator?.stop();
    this.operator = undefined;
  }

  namespace(): string {
    const name = `spec-${++this.#namespaces}`;
    this.cluster.server.api.create(NAMESPACES, "", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name },
    });
    return name;
  }

  apply(namespace: string, object: KubeObject): Promise<KubeObject> {
    const ref = object.kind === "WorkerPool" ? WORKER_POOLS : INFERENCE_MODELS;
    return this.client.apply(
      ref,
      namespace,
      { ...object, metadata: { ...object.metadata, namespace } },
      { force: true },
    );
  }

  model(namespace: string, name: string): Promise<InferenceModel | undefined> {
    return this.client.get<InferenceModel>(INFERENCE_MODELS, namespace, name);
  }

  async pods(namespace: string): Promise<KubeObject[]> {
    return (await this.client.list(PODS, { namespace })).items;
  }

  /** Waits until the model's status satisfies check (and returns the model). */
  waitForModel(
    namespace: string,
    name: string,
    what: string,
    check: (m: InferenceModel) => boolean,
    timeoutMs?: number,
  ) {
    return waitFor(
      what,
      async () => {
        const model = await this.model(namespace, name);
        return model && check(model) ? model : undefined;
      },
      timeoutMs,
    );
  }

  /** Waits until the operator has nothing queued for a moment. */
  async settled(): Promise<void> {
    await waitFor("operator idle", () => this.operator?.idle === true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await waitFor("operator idle", () => this.operator?.idle === true);
  }

  async close(): Promise<void> {
    await this.stopOperator();
    this.kubelet.stop();
    await this.cluster.close();
  }
}

export const condition = (m: InferenceModel, type: string) =>
  m.status?.conditions?.find((c) => c.type === type);
