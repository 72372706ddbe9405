// The /scale subresource: an autoscaling/v1 Scale view of a workload's replica count.

import type { JsonObject, JsonValue, KubeObject } from "../../../../services/kube/kube-object.ts";
import { apiErrors } from "../core/api-status.ts";
import { setPath } from "../core/json-object.ts";
import { jsonPathValue } from "../resources/json-path.ts";
import type { ResourceType } from "../resources/resource-type.ts";

function scaleSpec(type: ResourceType) {
  const scale = type.subresources.scale;
  if (!scale) throw apiErrors.notFound({ group: type.group, resource: `${type.plural}/scale`, name: "" });
  return scale;
}

export function toScale(type: ResourceType, object: KubeObject): KubeObject {
  const scale = scaleSpec(type);
  const root = object as unknown as JsonValue;
  const replicas = jsonPathValue(root, scale.specReplicasPath);
  const statusReplicas = jsonPathValue(root, scale.statusReplicasPath);
  const selector = scale.labelSelectorPath ? jsonPathValue(root, scale.labelSelectorPath) : undefined;
  return {
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: {
      name: object.metadata.name ?? "",
      ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
      uid: object.metadata.uid ?? "",
      resourceVersion: object.metadata.resourceVersion ?? "",
      creationTimestamp: object.metadata.creationTimestamp ?? "",
    },
    spec: { replicas: typeof replicas === "number" ? replicas : 0 },
    status: {
      replicas: typeof statusReplicas === "number" ? statusReplicas : 0,
      ...(typeof selector === "string" ? { selector } : {}),
    },
  };
}

/** Writes a Scale's spec.replicas back into the workload. */
export function fromScale(type: ResourceType, object: KubeObject, scale: KubeObject): KubeObject {
  const spec = scaleSpec(type);
  const replicas = (scale["spec"] as JsonObject | undefined)?.["replicas"];
  if (typeof replicas !== "number" || replicas < 0) {
    throw apiErrors.invalid("Scale", "autoscaling", object.metadata.name ?? "", [
      {
        type: "Invalid",
        field: "spec.replicas",
        value: replicas ?? null,
        detail: "must be greater than or equal to 0",
      },
    ]);
  }
  const path = spec.specReplicasPath.replace(/^\./, "").split(".");
  setPath(object as unknown as JsonObject, path, replicas);
  if (scale.metadata.resourceVersion) object.metadata.resourceVersion = scale.metadata.resourceVersion;
  return object;
}
