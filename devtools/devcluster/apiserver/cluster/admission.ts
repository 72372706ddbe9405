// What the server does to an object before it is stored: system metadata (uid, timestamps,
// generation, generated names), status subresource rules, defaults, validation and managed fields.
import { randomBytes, randomUUID } from "node:crypto";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { formatTime } from "../../../../services/kube/kube-time.ts";
import { recordUpdate } from "../apply/managed-fields.ts";
import { apiErrors } from "../core/api-status.ts";
import { type FieldError, fieldError } from "../core/field-errors.ts";
import { cloneObject, jsonEqual } from "../core/json-object.ts";
import { apiVersionOf, type ResourceType } from "../resources/resource-type.ts";
import { type FieldValidation, pruneAndDefault, validateCustomObject } from "./custom-object-validation.ts";
import { validateMetadata } from "./validate-metadata.ts";

export interface AdmissionContext {
  now: number;
  fieldManager: string;
  fieldValidation: FieldValidation;
  /** "status" or "scale" when writing a subresource. */
  subresource?: string;
  /** Set by server-side apply, which records managed fields itself. */
  skipManagedFields?: boolean;
  warnings: string[];
}

const NAME_SUFFIX = "bcdfghjklmnpqrstvwxz2456789";

export function generateName(prefix: string): string {
  const bytes = randomBytes(5);
  return `${prefix.slice(0, 58)}${[...bytes].map((b) => NAME_SUFFIX[b % NAME_SUFFIX.length]).join("")}`;
}

/** Everything but metadata and status: what bumps metadata.generation when it changes. */
function specOf(object: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = object;
  return rest;
}

function validate(type: ResourceType, object: KubeObject, old: KubeObject | undefined): void {
  const errors: FieldError[] = [...validateMetadata(object, type.nameRule)];
  errors.push(...(type.validate?.(object, old) ?? []));
  errors.push(...validateCustomObject(type, object, old));
  if (errors.length > 0) throw apiErrors.invalid(type.kind, type.group, object.metadata.name ?? "", errors);
}

export function admitCreate(
  type: ResourceType,
  input: KubeObject,
  namespace: string,
  ctx: AdmissionContext,
): KubeObject {
  const object = cloneObject(input);
  const meta = object.metadata;
  if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
  if (type.namespaced) meta.namespace = namespace;
  else delete meta.namespace;
  meta.uid = randomUUID();
  meta.creationTimestamp = formatTime(ctx.now);
  meta.generation = 1;
  delete meta.resourceVersion;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete meta.managedFields;
  delete meta["selfLink"];
  object.apiVersion = apiVersionOf({ group: type.group, version: type.storageVersion });
  object.kind = type.kind;
  if (type.subresources.status && type.crdName !== undefined) delete object["status"];
  ctx.warnings.push(...pruneAndDefault(type, object, ctx.fieldValidation));
  type.defaults?.(object);
  validate(type, object, undefined);
  if (!ctx.skipManagedFields) {
    recordUpdate(undefined, object, {
      manager: ctx.fieldManager,
      apiVersion: apiVersionOf(type),
      now: ctx.now,
      info: type.typeInfo,
    });
  }
  return object;
}

/** Builds the object to store from the old one and the requested new state. */
export function admitUpdate(
  type: ResourceType,
  old: KubeObject,
  input: KubeObject,
  ctx: AdmissionContext,
): KubeObject {
  let object = cloneObject(input);
  if (ctx.subresource === "status") {
    const status = object["status"];
    object = cloneObject(old);
    if (status === undefined) delete object["status"];
    else object["status"] = status;
    object.metadata.resourceVersion = input.metadata.resourceVersion ?? "";
  } else if (type.subresources.status) {
    if (old["status"] === undefined) delete object["status"];
    else object["status"] = cloneObject(old["status"]);
  }
  const meta = object.metadata;
  if (input.metadata.name && input.metadata.name !== old.metadata.name) {
    throw apiErrors.badRequest(
      `the name of the object (${input.metadata.name}) does not match the name on the URL (${old.metadata.name})`,
    );
  }
  meta.name = old.metadata.name ?? "";
  if (old.metadata.namespace !== undefined) meta.namespace = old.metadata.namespace;
  meta.uid = old.metadata.uid ?? "";
  meta.creationTimestamp = old.metadata.creationTimestamp ?? "";
  meta.generation = old.metadata.generation ?? 1;
  if (old.metadata.deletionTimestamp) meta.deletionTimestamp = old.metadata.deletionTimestamp;
  else delete meta.deletionTimestamp;
  if (old.metadata.deletionGracePeriodSeconds !== undefined)
    meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
  if (!ctx.skipManagedFields) {
    if (old.metadata.managedFields) meta.managedFields = old.metadata.managedFields;
    else delete meta.managedFields;
  }
  if (old.apiVersion !== undefined) object.apiVersion = old.apiVersion;
  object.kind = type.kind;
  ctx.warnings.push(...pruneAndDefault(type, object, ctx.fieldValidation));
  type.defaults?.(object);
  if (old.metadata.deletionTimestamp) {
    const added = (meta.finalizers ?? []).filter((f) => !(old.metadata.finalizers ?? []).includes(f));
    if (added.length > 0) {
      throw apiErrors.invalid(type.kind, type.group, meta.name, [
        fieldError.forbidden(
          "metadata.finalizers",
          `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
        ),
      ]);
    }
  }
  validate(type, object, old);
  if (!jsonEqual(specOf(object), specOf(old))) meta.generation = (old.metadata.generation ?? 1) + 1;
  if (!ctx.skipManagedFields) {
    recordUpdate(old, object, {
      manager: ctx.fieldManager,
      apiVersion: apiVersionOf(type),
      now: ctx.now,
      info: type.typeInfo,
      ...(ctx.subresource ? { subresource: ctx.subresource } : {}),
    });
  }
  return object;
}
