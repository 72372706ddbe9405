// Names derived from a pod template: the pod-template-hash of a Deployment's ReplicaSets and the
// controller-revision-hash of a StatefulSet's pods. The hash covers the template as canonical
// JSON (keys sorted), so equal templates hash equally whatever their key order, and it is
// rendered in Kubernetes' "safe" alphabet (no vowels, no 0/1/3).
import { createHash } from "node:crypto";

const SAFE = "bcdfghjklmnpqrstvwxz2456789";

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** A short, stable, DNS-safe hash of a JSON value (what Kubernetes' pod-template-hash looks like). */
export function templateHash(template: unknown, collisionCount = 0): string {
  const digest = createHash("sha256").update(canonical(template)).update(String(collisionCount)).digest();
  const number = digest.readUInt32BE(0);
  return [...String(number)].map((c) => SAFE[c.charCodeAt(0) % SAFE.length]).join("");
}
