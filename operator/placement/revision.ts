// A revision is the hash of everything that shapes a role's pods (model source, parallelism,
// engine settings, KV transfer, resources, the pool's image and placement) and nothing that does
// not (replica counts, routing). Pods carry it in their name and labels; a new revision means the
// pods are replaced, one replica at a time.
import { createHash } from "node:crypto";

/** Canonical JSON: object keys sorted, so equal values hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** 8 hex characters of SHA-256. */
export function shortHash(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, 8);
}
