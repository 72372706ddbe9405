// Cleanup of a deleted InferenceModel, behind its finalizer: delete its pods, wait until they are
// gone, delete its keys from the KV transfer store. It can never wedge deletion: past
// cleanupTimeoutMs after the deletion request the finalizer is removed whatever is left (a Warning
// Event says what), and the garbage collector still removes the pods through their ownerReferences.
import { API_VERSION, CLEANUP_FINALIZER, INFERENCE_MODELS } from "../../services/api/group.ts";
import { inferenceModelSpecSchema } from "../../services/api/inference-model-spec.ts";
import type { InferenceModel } from "../../services/api/kinds.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import type { ReconcileOutcome } from "../../services/kube/reconcile-loop.ts";
import { PODS, SECRETS } from "../../services/kube/resources.ts";
import { kvKeyPrefix } from "../placement/shard-env.ts";
import type { KvStoreTarget } from "./kv-cleanup.ts";
import type { ReconcilerDeps } from "./reconciler-deps.ts";

/** How often to look again while pods terminate. */
const POLL_MS = 1_000;

export async function finalizeModel(
  model: InferenceModel,
  deps: ReconcilerDeps,
): Promise<ReconcileOutcome | undefined> {
  if (!model.metadata.finalizers?.includes(CLEANUP_FINALIZER)) return undefined;
  const { namespace = "", name = "" } = model.metadata;
  const deadline = Date.parse(model.metadata.deletionTimestamp ?? "") + deps.config.cleanupTimeoutMs;
  const now = deps.clock.now();
  let leftover: string | undefined;
  try {
    const pods = deps.cache.podsOfModel(namespace, name);
    await Promise.all(
      pods
        .filter((p) => !p.metadata.deletionTimestamp)
        .map((p) => deps.client.delete(PODS, namespace, p.metadata.name ?? "")),
    );
    if (pods.length > 0) {
      if (now < deadline) return { requeueAfterMs: Math.min(POLL_MS, deadline - now) };
      leftover = `${pods.length} pods still terminating`;
    } else {
      const deleted = await deleteKvKeys(model, deps);
      if (deleted !== undefined)
        deps.events.record(model, "Normal", "KvKeysDeleted", `deleted ${deleted} KV store keys`);
    }
  } catch (err) {
    if (now < deadline) throw err;
    leftover = String(err instanceof Error ? err.message : err);
  }
  if (leftover)
    deps.events.record(
      model,
      "Warning",
      "CleanupAbandoned",
      `cleanup timed out, removing the finalizer anyway: ${leftover}`,
    );
  await removeFinalizer(model, deps);
  return undefined;
}

async function deleteKvKeys(model: InferenceModel, deps: ReconcilerDeps): Promise<number | undefined> {
  const parsed = inferenceModelSpecSchema.safeParse(model.spec);
  const redis = parsed.success ? parsed.data.kvTransfer.redis : undefined;
  if (!redis) return undefined;
  const { namespace = "", name = "" } = model.metadata;
  const target: KvStoreTarget = { address: redis.address, db: redis.db };
  if (redis.passwordSecret) {
    const secret = await deps.client.get<KubeObject & { data?: Record<string, string> }>(
      SECRETS,
      namespace,
      redis.passwordSecret.name,
    );
    const encoded = secret?.data?.[redis.passwordSecret.key];
    if (encoded !== undefined) target.password = Buffer.from(encoded, "base64").toString("utf8");
  }
  return deps.kvCleaner.deleteKeys(target, kvKeyPrefix({ namespace, name }));
}

/** Server-side apply without the finalizer: drops the element this manager owns, nobody else's. */
export async function removeFinalizer(model: InferenceModel, deps: ReconcilerDeps): Promise<void> {
  await applyFinalizers(model, [], deps);
}

export async function addFinalizer(model: InferenceModel, deps: ReconcilerDeps): Promise<void> {
  await applyFinalizers(model, [CLEANUP_FINALIZER], deps);
}

async function applyFinalizers(
  model: InferenceModel,
  finalizers: string[],
  deps: ReconcilerDeps,
): Promise<void> {
  const { namespace = "", name = "" } = model.metadata;
  await deps.client.apply(INFERENCE_MODELS, namespace, {
    apiVersion: API_VERSION,
    kind: "InferenceModel",
    metadata: { name, namespace, uid: model.metadata.uid ?? "", finalizers },
  });
}
