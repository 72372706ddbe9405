// Built-in kinds of the core ("") group, v1.
import { createHash } from "node:crypto";
import type { JsonObject, KubeObject } from "../../../../services/kube/kube-object.ts";
import { fieldError } from "../core/field-errors.ts";
import { isJsonObject } from "../core/json-object.ts";
import { column, defineKind } from "./define-kind.ts";
import { ensureObject, listAt, numberAt, objectAt, setDefault, stringAt } from "./object-fields.ts";
import { podColumns, podWideColumns } from "./pod-columns.ts";
import { defaultPodSpec, validatePodSpec } from "./pod-defaults.ts";
import { podSpecInfo, podStatusInfo } from "./pod-type-info.ts";
import { humanDuration } from "./resource-type.ts";
import { atomicList, mapList, setList } from "./type-info.ts";

const core = { group: "", version: "v1" };

export const namespaceKind = defineKind({
  ...core,
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
  shortNames: ["ns"],
  status: true,
  nameRule: "label",
  fields: { spec: { fields: { finalizers: setList } } },
  columns: [column("Status", (o) => stringAt(o, "status", "phase") ?? "Active")],
  defaults: (o) => {
    setDefault(ensureObject(o as JsonObject, "spec"), "finalizers", ["kubernetes"]);
    setDefault(ensureObject(o as JsonObject, "status"), "phase", "Active");
    o.metadata.labels = { ...o.metadata.labels, "kubernetes.io/metadata.name": o.metadata.name ?? "" };
  },
});

export const podKind = defineKind({
  ...core,
  kind: "Pod",
  plural: "pods",
  namespaced: true,
  shortNames: ["po"],
  categories: ["all"],
  status: true,
  fields: { spec: podSpecInfo, status: podStatusInfo },
  columns: podColumns,
  trailingColumns: podWideColumns,
  defaults: (o) => {
    defaultPodSpec(ensureObject(o as JsonObject, "spec"));
    setDefault(ensureObject(o as JsonObject, "status"), "phase", "Pending");
  },
  validate: (o) => validatePodSpec(o["spec"], "spec"),
});

function serviceIp(o: KubeObject): string {
  const digest = createHash("sha256").update(`${o.metadata.namespace}/${o.metadata.name}`).digest();
  return `10.96.${digest[0]}.${(digest[1]! % 254) + 1}`;
}

function servicePorts(o: KubeObject): string {
  const ports = listAt(o, "spec", "ports").filter(isJsonObject);
  if (ports.length === 0) return "<none>";
  return ports
    .map((p) => `${p["port"]}${p["nodePort"] ? `:${p["nodePort"]}` : ""}/${p["protocol"] ?? "TCP"}`)
    .join(",");
}

export const serviceKind = defineKind({
  ...core,
  kind: "Service",
  plural: "services",
  namespaced: true,
  shortNames: ["svc"],
  categories: ["all"],
  status: true,
  nameRule: "label",
  fields: {
    spec: {
      fields: {
        ports: mapList(["port", "protocol"], undefined, { protocol: "TCP" }),
        clusterIPs: atomicList,
        selector: { atomic: true },
      },
    },
    status: { fields: { conditions: mapList(["type"]) } },
  },
  columns: [
    column("Type", (o) => stringAt(o, "spec", "type") ?? "ClusterIP"),
    column("Cluster-IP", (o) => stringAt(o, "spec", "clusterIP") ?? "<none>"),
    column("External-IP", (o) => listAt(o, "spec", "externalIPs").join(",") || "<none>"),
    column("Port(s)", servicePorts),
  ],
  trailingColumns: [
    column(
      "Selector",
      (o) =>
        Object.entries(objectAt(o, "spec", "selector") ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(",") || "<none>",
      { priority: 1 },
    ),
  ],
  defaults: (o) => {
    const spec = ensureObject(o as JsonObject, "spec");
    setDefault(spec, "type", "ClusterIP");
    setDefault(spec, "sessionAffinity", "None");
    setDefault(spec, "clusterIP", serviceIp(o));
    setDefault(spec, "clusterIPs", [spec["clusterIP"] as string]);
    setDefault(spec, "ipFamilies", ["IPv4"]);
    setDefault(spec, "ipFamilyPolicy", "SingleStack");
    setDefault(spec, "internalTrafficPolicy", "Cluster");
    for (const port of listAt(o, "spec", "ports").filter(isJsonObject)) {
      setDefault(port, "protocol", "TCP");
      if (port["port"] !== undefined) setDefault(port, "targetPort", port["port"]);
    }
    setDefault(ensureObject(o as JsonObject, "status"), "loadBalancer", {});
  },
  validate: (o) =>
    listAt(o, "spec", "ports").flatMap((port, i) => {
      const value = isJsonObject(port) ? port["port"] : undefined;
      if (typeof value === "number" && value >= 1 && value <= 65535) return [];
      return [
        value === undefined
          ? fieldError.required(`spec.ports[${i}].port`)
          : fieldError.invalid(`spec.ports[${i}].port`, value, "must be between 1 and 65535, inclusive"),
      ];
    }),
});

const dataCount = (o: KubeObject) =>
  Object.keys(objectAt(o, "data") ?? {}).length + Object.keys(objectAt(o, "binaryData") ?? {}).length;

export const configMapKind = defineKind({
  ...core,
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
  shortNames: ["cm"],
  columns: [column("Data", (o) => dataCount(o), { type: "integer" })],
});

export const secretKind = defineKind({
  ...core,
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
  columns: [
    column("Type", (o) => stringAt(o, "type") ?? "Opaque"),
    column("Data", (o) => dataCount(o), { type: "integer" }),
  ],
  defaults: (o) => {
    setDefault(o as JsonObject, "type", "Opaque");
    const stringData = objectAt(o, "stringData");
    if (stringData) {
      const data = ensureObject(o as JsonObject, "data");
      for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v)).toString("base64");
      delete o["stringData"];
    }
  },
});

export const serviceAccountKind = defineKind({
  ...core,
  kind: "ServiceAccount",
  plural: "serviceaccounts",
  namespaced: true,
  shortNames: ["sa"],
  fields: { secrets: mapList(["name"]) },
  columns: [column("Secrets", (o) => listAt(o, "secrets").length, { type: "integer" })],
});

export const nodeKind = defineKind({
  ...core,
  kind: "Node",
  plural: "nodes",
  namespaced: false,
  shortNames: ["no"],
  status: true,
  fields: { status: { fields: { conditions: mapList(["type"]), addresses: mapList(["type"]) } } },
  columns: [
    column("Status", (o) => {
      const ready = listAt(o, "status", "conditions").find((c) => isJsonObject(c) && c["type"] === "Ready");
      return isJsonObject(ready) && ready["status"] === "True" ? "Ready" : "NotReady";
    }),
    column("Roles", () => "<none>"),
  ],
  trailingColumns: [column("Version", (o) => stringAt(o, "status", "nodeInfo", "kubeletVersion") ?? "")],
});

export const eventKind = defineKind({
  ...core,
  kind: "Event",
  plural: "events",
  namespaced: true,
  shortNames: ["ev"],
  noAge: true,
  columns: [
    column("Last Seen", (o, now) => {
      const last = stringAt(o, "lastTimestamp") ?? stringAt(o, "eventTime") ?? o.metadata.creationTimestamp;
      return last ? humanDuration(now - Date.parse(last)) : "<unknown>";
    }),
    column("Type", (o) => stringAt(o, "type") ?? ""),
    column("Reason", (o) => stringAt(o, "reason") ?? ""),
    column(
      "Object",
      (o) =>
        `${(stringAt(o, "involvedObject", "kind") ?? "").toLowerCase()}/${stringAt(o, "involvedObject", "name") ?? ""}`,
    ),
    column("Message", (o) => stringAt(o, "message") ?? ""),
  ],
  defaults: (o) => {
    if (numberAt(o, "count") === undefined) (o as JsonObject)["count"] = 1;
  },
});

export const coreKinds = [
  namespaceKind,
  podKind,
  serviceKind,
  configMapKind,
  secretKind,
  serviceAccountKind,
  nodeKind,
  eventKind,
];
