// Request bodies: JSON, YAML (apply patches and `kubectl create --raw`) and Kubernetes protobuf.
import type { IncomingMessage } from "node:http";
import { parse as parseYaml } from "yaml";
import type { JsonValue } from "../../../../services/kube/kube-object.ts";
import type { PatchType } from "../cluster/api-types.ts";
import { apiErrors } from "../core/api-status.ts";
import { decodeProtobuf, PROTOBUF_CONTENT_TYPE } from "./protobuf-codec.ts";

const MAX_BODY = 16 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw apiErrors.badRequest("request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function mediaType(contentType: string | undefined): string {
  return (contentType ?? "application/json").split(";")[0]!.trim().toLowerCase();
}

/** Decodes a body by its Content-Type; an empty body is undefined. */
export function decodeBody(body: Buffer, contentType: string | undefined): JsonValue | undefined {
  if (body.length === 0) return undefined;
  const type = mediaType(contentType);
  if (type === PROTOBUF_CONTENT_TYPE) return decodeProtobuf(body);
  const text = body.toString("utf8");
  try {
    if (type === "application/yaml" || type === "application/apply-patch+yaml")
      return parseYaml(text) as JsonValue;
    if (type.endsWith("json") || type === "*/*" || type === "") return JSON.parse(text) as JsonValue;
  } catch (err) {
    throw apiErrors.badRequest(
      `the body of the request could not be decoded: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  throw apiErrors.unsupportedMediaType(type);
}

const PATCH_TYPES: Record<string, PatchType> = {
  "application/json-patch+json": "json",
  "application/merge-patch+json": "merge",
  "application/strategic-merge-patch+json": "strategic",
  "application/apply-patch+yaml": "apply",
};

export function patchTypeOf(contentType: string | undefined): PatchType {
  const type = PATCH_TYPES[mediaType(contentType)];
  if (!type) throw apiErrors.unsupportedMediaType(mediaType(contentType));
  return type;
}
