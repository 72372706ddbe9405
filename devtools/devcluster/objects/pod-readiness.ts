// Questions the controllers ask about pods: is it active, ready, available (ready for
// minReadySeconds)? Same definitions as Kubernetes' pod utilities.
import type { Pod, PodCondition } from "./pod-types.ts";

export function podCondition(pod: Pod, type: string): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

export function isPodReady(pod: Pod): boolean {
  return podCondition(pod, "Ready")?.status === "True";
}

export function isPodTerminating(pod: Pod): boolean {
  return pod.metadata.deletionTimestamp !== undefined;
}

/** Not being deleted and not finished: a pod that counts towards a workload's replicas. */
export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return !isPodTerminating(pod) && phase !== "Succeeded" && phase !== "Failed";
}

/** Ready, and for at least minReadySeconds at `now` (ms). */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  const ready = podCondition(pod, "Ready");
  if (ready?.status !== "True") return false;
  if (minReadySeconds <= 0) return true;
  const since = Date.parse(ready.lastTransitionTime ?? "");
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= now;
}

/** Milliseconds until a ready pod becomes available; undefined when it is not ready. */
export function msUntilAvailable(pod: Pod, minReadySeconds: number, now: number): number | undefined {
  const ready = podCondition(pod, "Ready");
  if (ready?.status !== "True") return undefined;
  const since = Date.parse(ready.lastTransitionTime ?? "");
  if (!Number.isFinite(since)) return 0;
  return Math.max(0, since + minReadySeconds * 1000 - now);
}
