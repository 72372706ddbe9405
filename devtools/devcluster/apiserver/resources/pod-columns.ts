// The columns `kubectl get pods` shows, computed the way the API server's pod printer does.
import type { JsonObject, KubeObject } from "../../../../services/kube/kube-object.ts";
import { isJsonObject } from "../core/json-object.ts";
import { column } from "./define-kind.ts";
import type { PrinterColumn } from "./resource-type.ts";

function asObjects(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isJsonObject) : [];
}

function spec(pod: KubeObject): JsonObject {
  return isJsonObject(pod["spec"]) ? pod["spec"] : {};
}

function status(pod: KubeObject): JsonObject {
  return isJsonObject(pod["status"]) ? pod["status"] : {};
}

export function podReady(pod: KubeObject): string {
  const total = asObjects(spec(pod)["containers"]).length;
  const ready = asObjects(status(pod)["containerStatuses"]).filter((c) => c["ready"] === true).length;
  return `${ready}/${total}`;
}

export function podStatusText(pod: KubeObject): string {
  const st = status(pod);
  let reason =
    typeof st["reason"] === "string"
      ? st["reason"]
      : typeof st["phase"] === "string"
        ? st["phase"]
        : "Pending";
  for (const container of asObjects(st["containerStatuses"])) {
    const state = isJsonObject(container["state"]) ? container["state"] : {};
    const waiting = isJsonObject(state["waiting"]) ? state["waiting"] : undefined;
    const terminated = isJsonObject(state["terminated"]) ? state["terminated"] : undefined;
    if (waiting && typeof waiting["reason"] === "string") reason = waiting["reason"];
    else if (terminated && typeof terminated["reason"] === "string") reason = terminated["reason"];
  }
  if (pod.metadata.deletionTimestamp) reason = "Terminating";
  return reason;
}

export function podRestarts(pod: KubeObject): number {
  return asObjects(status(pod)["containerStatuses"]).reduce(
    (sum, c) => sum + (typeof c["restartCount"] === "number" ? c["restartCount"] : 0),
    0,
  );
}

export const podColumns: PrinterColumn[] = [
  column("Ready", podReady, {
    description: "The aggregate readiness state of this pod for accepting traffic.",
  }),
  column("Status", podStatusText, { description: "The aggregate status of the containers in this pod." }),
  column("Restarts", (pod) => String(podRestarts(pod)), {
    description: "The number of times the containers in this pod have been restarted.",
  }),
];

export const podWideColumns: PrinterColumn[] = [
  column(
    "IP",
    (pod) => (typeof status(pod)["podIP"] === "string" ? (status(pod)["podIP"] as string) : "<none>"),
    {
      priority: 1,
    },
  ),
  column(
    "Node",
    (pod) => (typeof spec(pod)["nodeName"] === "string" ? (spec(pod)["nodeName"] as string) : "<none>"),
    {
      priority: 1,
    },
  ),
];
