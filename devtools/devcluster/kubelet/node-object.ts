// The Node a kubelet registers: capacity (= allocatable), labels, Ready condition, addresses and
// node info; and the scheduler's view of any Node object.
import os from "node:os";
import type { KubeObject } from "../../../services/kube/kube-object.ts";
import { formatTime } from "../../../services/kube/kube-time.ts";
import { listAt, objectAt } from "../apiserver/resources/object-fields.ts";
import { formatMemory, parseQuantity } from "../objects/quantity.ts";
import type { KubeletConfig } from "./kubelet-config.ts";
import type { NodeView } from "./pod-fit.ts";

export const KUBELET_VERSION = "v1.31.0-tessera";
export const NODE_IP = "127.0.0.1";

export function nodeCapacity(config: KubeletConfig): Record<string, string> {
  const capacity: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.capacity))
    if (value !== undefined) capacity[name] = String(value);
  capacity["cpu"] ??= String(os.cpus().length);
  capacity["memory"] ??= formatMemory(os.totalmem());
  return capacity;
}

const condition = (type: string, status: string, reason: string, message: string, now: string) => ({
  type,
  status,
  reason,
  message,
  lastHeartbeatTime: now,
  lastTransitionTime: now,
});

export function nodeObject(config: KubeletConfig, now: number): KubeObject {
  const time = formatTime(now);
  const capacity = nodeCapacity(config);
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: config.nodeName,
      labels: {
        "kubernetes.io/hostname": config.nodeName,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": process.arch === "x64" ? "amd64" : process.arch,
        "node.kubernetes.io/instance-type": "tessera-process",
        ...config.labels,
      },
    },
    spec: { podCIDR: config.podCidr, podCIDRs: [config.podCidr] },
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        condition(
          "MemoryPressure",
          "False",
          "KubeletHasSufficientMemory",
          "kubelet has sufficient memory available",
          time,
        ),
        condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", time),
        condition(
          "PIDPressure",
          "False",
          "KubeletHasSufficientPID",
          "kubelet has sufficient PID available",
          time,
        ),
        condition("Ready", "True", "KubeletReady", "process kubelet is posting ready status", time),
      ],
      addresses: [
        { type: "InternalIP", address: NODE_IP },
        { type: "Hostname", address: config.nodeName },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
      nodeInfo: {
        machineID: "",
        systemUUID: "",
        bootID: "",
        kernelVersion: os.release(),
        osImage: `${os.type()} ${os.release()}`,
        containerRuntimeVersion: "process://tessera",
        kubeletVersion: KUBELET_VERSION,
        kubeProxyVersion: "",
        operatingSystem: "linux",
        architecture: process.arch === "x64" ? "amd64" : process.arch,
      },
    },
  };
}

export function nodeView(node: KubeObject): NodeView {
  const allocatable: Record<string, number> = {};
  const declared = objectAt(node, "status", "allocatable") ?? objectAt(node, "status", "capacity") ?? {};
  for (const [name, value] of Object.entries(declared)) {
    const amount = parseQuantity(typeof value === "number" || typeof value === "string" ? value : undefined);
    if (amount !== undefined) allocatable[name] = amount;
  }
  const ready = listAt(node, "status", "conditions").some(
    (c) =>
      typeof c === "object" &&
      c !== null &&
      !Array.isArray(c) &&
      c["type"] === "Ready" &&
      c["status"] === "True",
  );
  return {
    name: node.metadata.name ?? "",
    labels: node.metadata.labels ?? {},
    allocatable,
    ready,
    unschedulable: objectAt(node, "spec")?.["unschedulable"] === true,
  };
}
