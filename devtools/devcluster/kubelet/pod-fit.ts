// Scheduling predicates as pure functions: what a pod requests, whether it fits a node given the
// pods already there, and the message Kubernetes prints when no node fits.

import type { Container, Pod, PodSpec } from "../objects/pod-types.ts";
import { parseQuantity } from "../objects/quantity.ts";

export interface NodeView {
  name: string;
  labels: Record<string, string>;
  allocatable: Record<string, number>;
  ready: boolean;
  unschedulable: boolean;
}

export type ResourceAmounts = Record<string, number>;

function containerRequests(container: Container): ResourceAmounts {
  const amounts: ResourceAmounts = {};
  const { requests = {}, limits = {} } = container.resources ?? {};
  for (const name of new Set([...Object.keys(limits), ...Object.keys(requests)])) {
    const value = parseQuantity(requests[name] ?? limits[name]);
    if (value !== undefined) amounts[name] = value;
  }
  return amounts;
}

/** Sum of the containers' requests (limits where no request), at least each init container's, plus one pod. */
export function podRequests(spec: PodSpec): ResourceAmounts {
  const total: ResourceAmounts = {};
  for (const container of spec.containers ?? [])
    for (const [name, value] of Object.entries(containerRequests(container)))
      total[name] = (total[name] ?? 0) + value;
  for (const container of spec.initContainers ?? [])
    for (const [name, value] of Object.entries(containerRequests(container)))
      total[name] = Math.max(total[name] ?? 0, value);
  total["pods"] = 1;
  return total;
}

export function addAmounts(pods: readonly Pod[]): ResourceAmounts {
  const total: ResourceAmounts = {};
  for (const pod of pods)
    for (const [name, value] of Object.entries(podRequests(pod.spec)))
      total[name] = (total[name] ?? 0) + value;
  return total;
}

/** Why the pod does not fit the node (empty when it fits). `used` is what the node's pods request. */
export function unfitReasons(pod: Pod, node: NodeView, used: ResourceAmounts): string[] {
  if (!node.ready) return ["node(s) were not ready"];
  if (node.unschedulable) return ["node(s) were unschedulable"];
  const selector = pod.spec.nodeSelector ?? {};
  if (Object.entries(selector).some(([k, v]) => node.labels[k] !== v))
    return ["node(s) didn't match Pod's node affinity/selector"];
  const reasons: string[] = [];
  const epsilon = 1e-9;
  for (const [name, value] of Object.entries(podRequests(pod.spec))) {
    if (value <= 0) continue;
    const free = (node.allocatable[name] ?? 0) - (used[name] ?? 0);
    if (value > free + epsilon) reasons.push(name === "pods" ? "Too many pods" : `Insufficient ${name}`);
  }
  return reasons;
}

/** "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient nvidia.com/gpu." */
export function unschedulableMessage(nodeCount: number, reasonsPerNode: readonly string[][]): string {
  const counts = new Map<string, number>();
  for (const reasons of reasonsPerNode) for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const parts = [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([r, n]) => `${n} ${r}`);
  return `0/${nodeCount} nodes are available: ${parts.length > 0 ? parts.join(", ") : "no nodes registered"}.`;
}

/** The least loaded node that fits (most free cpu share), or undefined with the reasons per node. */
export function pickNode(
  pod: Pod,
  nodes: readonly NodeView[],
  usedByNode: (name: string) => ResourceAmounts,
): { node: NodeView } | { reasons: string[][] } {
  const fitting: { node: NodeView; score: number }[] = [];
  const reasons: string[][] = [];
  for (const node of nodes) {
    const used = usedByNode(node.name);
    const unfit = unfitReasons(pod, node, used);
    if (unfit.length > 0) reasons.push(unfit);
    else {
      const cpu = node.allocatable["cpu"] ?? 0;
      fitting.push({ node, score: cpu > 0 ? (cpu - (used["cpu"] ?? 0)) / cpu : 0 });
    }
  }
  const best = fitting.sort((a, b) => b.score - a.score || a.node.name.localeCompare(b.node.name))[0];
  return best ? { node: best.node } : { reasons };
}
