// Redis keys of KV blocks: `${prefix}${modelId}@${revision}:${start}-${end}:${hash}`, so that one
// model's blocks (every revision and layer range) share the prefix `${prefix}${modelId}@`.
import type { KvBlockFormat } from "./kv-block.ts";

export function blockKeyPrefix(keyPrefix: string, format: KvBlockFormat): string {
  const { modelId, revision, layerRange } = format;
  return `${keyPrefix}${modelId}@${revision}:${layerRange.start}-${layerRange.end}:`;
}

/** A SCAN MATCH pattern for every key of one model, with glob characters of the ids escaped. */
export function modelKeyPattern(keyPrefix: string, modelId: string): string {
  return `${escapeGlob(keyPrefix)}${escapeGlob(modelId)}@*`;
}

function escapeGlob(s: string): string {
  return s.replace(/[*?[\]\\]/g, "\\$&");
}

/** Model ids may not contain "@", which ends the model id in a key (and in a deletion pattern). */
export function checkModelId(modelId: string): string | undefined {
  return modelId.includes("@") ? `model id ${JSON.stringify(modelId)} contains "@"` : undefined;
}
