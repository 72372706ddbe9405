// Defaults and validation of Pod specs, shared by Pods and workload templates.

import type { JsonObject } from "../../../../services/kube/kube-object.ts";
import { type FieldError, fieldError, joinField } from "../core/field-errors.ts";
import { isJsonObject } from "../core/json-object.ts";
import { setDefault } from "./object-fields.ts";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function defaultPodSpec(spec: JsonObject): void {
  setDefault(spec, "restartPolicy", "Always");
  setDefault(spec, "terminationGracePeriodSeconds", 30);
  setDefault(spec, "dnsPolicy", "ClusterFirst");
  setDefault(spec, "schedulerName", "default-scheduler");
  setDefault(spec, "securityContext", {});
  for (const list of ["containers", "initContainers"]) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    for (const container of containers) {
      if (!isJsonObject(container)) continue;
      setDefault(container, "terminationMessagePath", "/dev/termination-log");
      setDefault(container, "terminationMessagePolicy", "File");
      setDefault(
        container,
        "imagePullPolicy",
        typeof container["image"] === "string" && container["image"].endsWith(":latest")
          ? "Always"
          : "IfNotPresent",
      );
      setDefault(container, "resources", {});
      const ports = container["ports"];
      if (Array.isArray(ports))
        for (const port of ports) if (isJsonObject(port)) setDefault(port, "protocol", "TCP");
    }
  }
}

export function validatePodSpec(spec: unknown, path: string): FieldError[] {
  if (!isJsonObject(spec)) return [fieldError.required(path)];
  const errors: FieldError[] = [];
  const containers = spec["containers"];
  if (!Array.isArray(containers) || containers.length === 0) {
    errors.push(fieldError.required(joinField(path, "containers")));
    return errors;
  }
  const names = new Set<string>();
  containers.forEach((container, i) => {
    const at = joinField(joinField(path, "containers"), i);
    if (!isJsonObject(container)) return;
    const name = container["name"];
    if (typeof name !== "string" || name === "") errors.push(fieldError.required(joinField(at, "name")));
    else if (!DNS_LABEL.test(name))
      errors.push(
        fieldError.invalid(
          joinField(at, "name"),
          name,
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        ),
      );
    else if (names.has(name)) errors.push(fieldError.duplicate(joinField(at, "name"), name));
    if (typeof name === "string") names.add(name);
    if (typeof container["image"] !== "string" || container["image"] === "")
      errors.push(fieldError.required(joinField(at, "image")));
  });
  const restart = spec["restartPolicy"];
  if (restart !== undefined && !["Always", "OnFailure", "Never"].includes(String(restart))) {
    errors.push(
      fieldError.notSupported(joinField(path, "restartPolicy"), restart, ["Always", "OnFailure", "Never"]),
    );
  }
  return errors;
}
