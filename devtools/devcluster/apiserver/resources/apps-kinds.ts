// Built-in workload kinds of the apps/v1 group.

import type { JsonObject, KubeObject } from "../../../../services/kube/kube-object.ts";
import { fieldError } from "../core/field-errors.ts";
import { jsonEqual } from "../core/json-object.ts";
import {
  fromStructuredSelector,
  matchesLabels,
  type StructuredLabelSelector,
} from "../selectors/label-selector.ts";
import { column, defineKind } from "./define-kind.ts";
import { ensureObject, listAt, numberAt, objectAt, setDefault, stringAt } from "./object-fields.ts";
import { defaultPodSpec, validatePodSpec } from "./pod-defaults.ts";
import { podTemplateInfo } from "./pod-type-info.ts";
import type { ResourceType } from "./resource-type.ts";
import { mapList } from "./type-info.ts";

const apps = { group: "apps", version: "v1" };
const scale = {
  specReplicasPath: ".spec.replicas",
  statusReplicasPath: ".status.replicas",
  labelSelectorPath: ".status.selector",
};
const workloadFields = {
  spec: { fields: { template: podTemplateInfo, selector: { atomic: true }, strategy: { retainKeys: true } } },
  status: { fields: { conditions: mapList(["type"]) } },
};

function defaultWorkload(o: KubeObject): void {
  const spec = ensureObject(o as JsonObject, "spec");
  setDefault(spec, "replicas", 1);
  setDefault(spec, "revisionHistoryLimit", 10);
  defaultPodSpec(ensureObject(spec, "template", "spec"));
}

function validateWorkload(o: KubeObject, old: KubeObject | undefined) {
  const errors = validatePodSpec(objectAt(o, "spec", "template", "spec"), "spec.template.spec");
  const selector = objectAt(o, "spec", "selector");
  if (!selector) return [...errors, fieldError.required("spec.selector")];
  const replicas = numberAt(o, "spec", "replicas");
  if (replicas !== undefined && replicas < 0)
    errors.push(fieldError.invalid("spec.replicas", replicas, "must be greater than or equal to 0"));
  const parsed = fromStructuredSelector(selector as StructuredLabelSelector);
  const labels = objectAt(o, "spec", "template", "metadata", "labels") as Record<string, string> | undefined;
  if (parsed.error || parsed.value.length === 0) {
    errors.push(fieldError.invalid("spec.selector", selector, "empty selector is invalid for deployment"));
  } else if (!matchesLabels(parsed.value, labels)) {
    errors.push(
      fieldError.invalid(
        "spec.template.metadata.labels",
        labels ?? {},
        "`selector` does not match template `labels`",
      ),
    );
  }
  if (old && !jsonEqual(objectAt(old, "spec", "selector"), selector)) {
    errors.push(fieldError.invalid("spec.selector", selector, "field is immutable"));
  }
  return errors;
}

const wide = (type: ResourceType["kind"]) => [
  column(
    "Containers",
    (o) =>
      listAt(o, "spec", "template", "spec", "containers")
        .map((c) => (c as JsonObject)["name"])
        .join(","),
    { priority: 1 },
  ),
  column(
    "Images",
    (o) =>
      listAt(o, "spec", "template", "spec", "containers")
        .map((c) => (c as JsonObject)["image"])
        .join(","),
    { priority: 1 },
  ),
  column(
    "Selector",
    (o) =>
      Object.entries(objectAt(o, "spec", "selector", "matchLabels") ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(",") || type,
    { priority: 1 },
  ),
];

const count = (o: KubeObject, ...path: string[]) => numberAt(o, ...path) ?? 0;

export const deploymentKind = defineKind({
  ...apps,
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
  shortNames: ["deploy"],
  categories: ["all"],
  status: true,
  scale,
  fields: workloadFields,
  columns: [
    column("Ready", (o) => `${count(o, "status", "readyReplicas")}/${count(o, "spec", "replicas")}`),
    column("Up-to-date", (o) => count(o, "status", "updatedReplicas"), { type: "integer" }),
    column("Available", (o) => count(o, "status", "availableReplicas"), { type: "integer" }),
  ],
  trailingColumns: wide("<none>"),
  defaults: (o) => {
    defaultWorkload(o);
    const spec = ensureObject(o as JsonObject, "spec");
    setDefault(spec, "progressDeadlineSeconds", 600);
    setDefault(spec, "strategy", { type: "RollingUpdate" });
    const strategy = ensureObject(spec, "strategy");
    if (stringAt(strategy, "type") === "RollingUpdate")
      setDefault(strategy, "rollingUpdate", { maxSurge: "25%", maxUnavailable: "25%" });
  },
  validate: validateWorkload,
});

export const replicaSetKind = defineKind({
  ...apps,
  kind: "ReplicaSet",
  plural: "replicasets",
  namespaced: true,
  shortNames: ["rs"],
  categories: ["all"],
  status: true,
  scale,
  fields: workloadFields,
  columns: [
    column("Desired", (o) => count(o, "spec", "replicas"), { type: "integer" }),
    column("Current", (o) => count(o, "status", "replicas"), { type: "integer" }),
    column("Ready", (o) => count(o, "status", "readyReplicas"), { type: "integer" }),
  ],
  trailingColumns: wide("<none>"),
  defaults: defaultWorkload,
  validate: validateWorkload,
});

export const statefulSetKind = defineKind({
  ...apps,
  kind: "StatefulSet",
  plural: "statefulsets",
  namespaced: true,
  shortNames: ["sts"],
  categories: ["all"],
  status: true,
  scale,
  fields: workloadFields,
  columns: [column("Ready", (o) => `${count(o, "status", "readyReplicas")}/${count(o, "spec", "replicas")}`)],
  trailingColumns: wide("<none>").slice(0, 2),
  defaults: (o) => {
    defaultWorkload(o);
    // As the real API server defaults them: `kubectl rollout status sts` needs the strategy type.
    const spec = ensureObject(o as JsonObject, "spec");
    setDefault(spec, "podManagementPolicy", "OrderedReady");
    setDefault(spec, "updateStrategy", { type: "RollingUpdate" });
    const strategy = ensureObject(spec, "updateStrategy");
    if (stringAt(strategy, "type") === "RollingUpdate")
      setDefault(strategy, "rollingUpdate", { partition: 0 });
  },
  validate: validateWorkload,
});

export const appsKinds = [deploymentKind, replicaSetKind, statefulSetKind];
