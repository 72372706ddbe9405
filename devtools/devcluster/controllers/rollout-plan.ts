// The scaling decisions of a Deployment rollout as pure functions, following the Kubernetes
// deployment controller:
//
// RollingUpdate. maxSurge (rounded up) bounds how many pods may exist above `replicas`;
// maxUnavailable (rounded down; 1 when both are 0) bounds how many may be unavailable. Each sync
// does one thing: first scale the new ReplicaSet up as far as the surge allows
// (replicas + maxSurge - all pods), and only when it cannot grow, scale old ReplicaSets down:
// their unavailable pods first (within allPods - minAvailable - new unavailable), then
// available ones while the available total stays above minAvailable, oldest ReplicaSet first.
//
// Recreate. Scale every old ReplicaSet to 0, wait until their pods are gone, then scale the new
// one to `replicas`.
import type { IntOrString } from "../objects/workload-types.ts";

export interface RsScale {
  name: string;
  /** spec.replicas */
  replicas: number;
  /** status.replicas: active pods */
  current: number;
  /** status.availableReplicas */
  available: number;
}

export interface Scaling {
  name: string;
  from: number;
  to: number;
}

/** An int or a percentage of total ("25%"), rounded up or down as Kubernetes does. */
export function resolveIntOrPercent(
  value: IntOrString | undefined,
  total: number,
  roundUp: boolean,
  fallback: string,
): number {
  const v = value ?? fallback;
  if (typeof v === "number") return v;
  const match = /^(\d+)%$/.exec(v);
  if (!match) return Number.isFinite(Number(v)) ? Number(v) : 0;
  const exact = (Number(match[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

export function surgeAndUnavailable(
  replicas: number,
  rollingUpdate: { maxSurge?: IntOrString; maxUnavailable?: IntOrString } | undefined,
): { maxSurge: number; maxUnavailable: number } {
  const maxSurge = resolveIntOrPercent(rollingUpdate?.maxSurge, replicas, true, "25%");
  let maxUnavailable = resolveIntOrPercent(rollingUpdate?.maxUnavailable, replicas, false, "25%");
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable: Math.min(maxUnavailable, replicas) };
}

const sum = (list: readonly RsScale[], pick: (r: RsScale) => number) => list.reduce((a, r) => a + pick(r), 0);

/** One rolling-update step: the new ReplicaSet's scale-up, else the old ones' scale-down. */
export function planRollingUpdate(
  replicas: number,
  limits: { maxSurge: number; maxUnavailable: number },
  newRs: RsScale,
  oldRss: readonly RsScale[],
): Scaling[] {
  const all = [newRs, ...oldRss];
  if (newRs.replicas > replicas) return [{ name: newRs.name, from: newRs.replicas, to: replicas }];
  if (newRs.replicas < replicas) {
    const room = replicas + limits.maxSurge - sum(all, (r) => r.replicas);
    const grow = Math.min(Math.max(0, room), replicas - newRs.replicas);
    if (grow > 0) return [{ name: newRs.name, from: newRs.replicas, to: newRs.replicas + grow }];
  }
  if (sum(oldRss, (r) => r.replicas) === 0) return [];
  const minAvailable = replicas - limits.maxUnavailable;
  const newUnavailable = Math.max(0, newRs.replicas - newRs.available);
  let budget = sum(all, (r) => r.replicas) - minAvailable - newUnavailable;
  if (budget <= 0) return [];
  const target = new Map(oldRss.map((r) => [r.name, r.replicas]));
  for (const rs of oldRss) {
    const unhealthy = Math.max(0, rs.replicas - rs.available);
    const cut = Math.min(budget, unhealthy);
    if (cut <= 0) continue;
    target.set(rs.name, rs.replicas - cut);
    budget -= cut;
  }
  let removable = sum(all, (r) => r.available) - minAvailable;
  for (const rs of oldRss) {
    if (removable <= 0) break;
    const now = target.get(rs.name) ?? 0;
    const cut = Math.min(now, removable);
    if (cut <= 0) continue;
    target.set(rs.name, now - cut);
    removable -= cut;
  }
  return oldRss
    .filter((r) => target.get(r.name) !== r.replicas)
    .map((r) => ({ name: r.name, from: r.replicas, to: target.get(r.name) ?? 0 }));
}

/** One Recreate step: old ReplicaSets to 0, then (once their pods are gone) the new one up. */
export function planRecreate(replicas: number, newRs: RsScale, oldRss: readonly RsScale[]): Scaling[] {
  const scaleDown = oldRss
    .filter((r) => r.replicas > 0)
    .map((r) => ({ name: r.name, from: r.replicas, to: 0 }));
  if (scaleDown.length > 0) return scaleDown;
  if (oldRss.some((r) => r.current > 0)) return [];
  return newRs.replicas === replicas ? [] : [{ name: newRs.name, from: newRs.replicas, to: replicas }];
}
