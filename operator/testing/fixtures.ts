// Small builders for specs: a parsed (defaulted) spec from the fields a test cares about.
import { API_VERSION } from "../../services/api/group.ts";
import {
  type InferenceModelSpecInput,
  inferenceModelSpecSchema,
} from "../../services/api/inference-model-spec.ts";
import type { InferenceModelSpec, WorkerPoolSpec } from "../../services/api/kinds.ts";
import { workerPoolSpecSchema } from "../../services/api/worker-pool.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import type { PoolView } from "../placement/planner.ts";

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

export function modelSpec(overrides: DeepPartial<InferenceModelSpecInput> = {}): InferenceModelSpec {
  const model = { path: "/models/tiny", ...(overrides.model ?? {}) };
  return inferenceModelSpecSchema.parse({ ...overrides, model });
}

export function poolSpec(overrides: Partial<WorkerPoolSpec> = {}): WorkerPoolSpec {
  return workerPoolSpecSchema.parse(overrides);
}

export function pools(entries: Record<string, Partial<WorkerPoolSpec> & { usedByOthers?: number }>) {
  const map = new Map<string, PoolView>();
  for (const [name, { usedByOthers, ...spec }] of Object.entries(entries))
    map.set(name, { spec: poolSpec(spec), podsUsedByOthers: usedByOthers ?? 0 });
  return map;
}

export const MODEL_REF = { namespace: "ml", name: "tiny", uid: "uid-1" };

/** An InferenceModel manifest (what a user applies). */
export function inferenceModel(name: string, spec: DeepPartial<InferenceModelSpecInput> = {}): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: "InferenceModel",
    metadata: { name },
    spec: { ...spec, model: { path: "/models/tiny", ...(spec.model ?? {}) } },
  };
}

export function workerPool(name: string, spec: Partial<WorkerPoolSpec> = {}): KubeObject {
  return { apiVersion: API_VERSION, kind: "WorkerPool", metadata: { name }, spec };
}
