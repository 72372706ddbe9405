// JSON patch (RFC 6902), applied with fast-json-patch; failures become 422 like the API server's.
import fastJsonPatch from "fast-json-patch";
import type { JsonValue } from "../../../../services/kube/kube-object.ts";
import { apiErrors } from "../core/api-status.ts";
import { cloneObject } from "../core/json-object.ts";

type Operation = Parameters<typeof fastJsonPatch.applyPatch>[1][number];

export function applyJsonPatch(target: JsonValue, patch: JsonValue): JsonValue {
  if (!Array.isArray(patch)) throw apiErrors.badRequest("json patch must be a list of operations");
  try {
    return fastJsonPatch.applyPatch(cloneObject(target), patch as unknown as Operation[], true, false)
      .newDocument;
  } catch (err) {
    const message = err instanceof Error ? err.message.split("\n")[0] : String(err);
    throw apiErrors.badRequest(`the server rejected our request due to an error in our request: ${message}`);
  }
}
