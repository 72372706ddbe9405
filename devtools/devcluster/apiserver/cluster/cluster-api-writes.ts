// Create, update and patch (including server-side apply) on top of the reads; deletion lives in
// cluster-api-delete.ts. Each write runs admission, honours dry-run, and keeps CRDs and the registry
// in step.

import type { JsonValue, KubeObject } from "../../../../services/kube/kube-object.ts";
import { formatTime } from "../../../../services/kube/kube-time.ts";
import { serverSideApply } from "../apply/server-side-apply.ts";
import { apiErrors } from "../core/api-status.ts";
import { cloneObject } from "../core/json-object.ts";
import { applyJsonPatch } from "../patch/json-patch.ts";
import { applyMergePatch } from "../patch/merge-patch.ts";
import { applyStrategicMergePatch } from "../patch/strategic-merge-patch.ts";
import { establishedStatus, resourceTypesOfCrd, validateCrd } from "../resources/crd-types.ts";
import { apiVersionOf, groupResourceOf, type ResourceType } from "../resources/resource-type.ts";
import { type AdmissionContext, admitCreate, admitUpdate } from "./admission.ts";
import type { PatchType, ResourceRef, WriteOptions } from "./api-types.ts";
import { ClusterReads } from "./cluster-api-reads.ts";
import { fromScale, toScale } from "./scale.ts";
import { admitServiceAccount } from "./service-account-admission.ts";

const CRD_GROUP_RESOURCE = "customresourcedefinitions.apiextensions.k8s.io";

export class ClusterWrites extends ClusterReads {
  protected context(options: WriteOptions): AdmissionContext {
    return {
      now: this.clock.now(),
      fieldManager: options.fieldManager ?? "unknown",
      fieldValidation: options.fieldValidation ?? "Warn",
      ...(options.subresource ? { subresource: options.subresource } : {}),
      warnings: [],
    };
  }

  protected finish(ctx: AdmissionContext, options: WriteOptions): void {
    for (const warning of ctx.warnings) options.onWarning?.(warning);
  }

  protected checkNamespace(type: ResourceType, namespace: string, name: string): void {
    if (!type.namespaced) return;
    if (namespace === "")
      throw apiErrors.badRequest("the server could not find the requested resource: namespace is required");
    const ns = this.store.get("namespaces", "", namespace);
    if (!ns) throw apiErrors.notFound({ group: "", resource: "namespaces", name: namespace });
    if (ns.metadata.deletionTimestamp) {
      throw apiErrors.forbidden(
        `${type.plural} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
      );
    }
  }

  create(ref: ResourceRef, namespace: string, object: KubeObject, options: WriteOptions = {}): KubeObject {
    const type = this.resolve(ref);
    if (
      object.metadata?.namespace &&
      type.namespaced &&
      namespace &&
      object.metadata.namespace !== namespace
    ) {
      throw apiErrors.badRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    }
    const ctx = this.context(options);
    const admitted = admitCreate(type, { ...object, metadata: { ...object.metadata } }, namespace, ctx);
    this.admitPod(type, admitted);
    this.checkNamespace(type, admitted.metadata.namespace ?? "", admitted.metadata.name ?? "");
    this.admitCrd(type, admitted, ctx.now);
    options.validate?.(type, admitted);
    this.finish(ctx, options);
    if (options.dryRun) return this.present(type, admitted);
    const stored = this.store.create(groupResourceOf(type), admitted);
    this.afterWrite(type, stored);
    return this.present(type, stored);
  }

  update(
    ref: ResourceRef,
    namespace: string,
    name: string,
    object: KubeObject,
    options: WriteOptions = {},
  ): KubeObject {
    const type = this.resolve(ref);
    const old = this.get(ref, namespace, name);
    if (options.subresource === "scale") return this.writeScale(type, old, object, options);
    return this.commitUpdate(type, old, object, this.context(options), options);
  }

  /** Applies a patch of the given type; `apply` is server-side apply (creates when absent). */
  patch(
    ref: ResourceRef,
    namespace: string,
    name: string,
    patchType: PatchType,
    body: JsonValue,
    options: WriteOptions = {},
  ): KubeObject {
    const type = this.resolve(ref);
    if (patchType === "apply") return this.apply(type, namespace, name, body, options);
    const old = this.get(ref, namespace, name);
    const target = options.subresource === "scale" ? toScale(type, old) : old;
    const patched = this.applyPatch(type, target, patchType, body);
    if (options.subresource === "scale") return this.writeScale(type, old, patched, options);
    return this.commitUpdate(type, old, patched, this.context(options), options);
  }

  private applyPatch(
    type: ResourceType,
    target: KubeObject,
    patchType: Exclude<PatchType, "apply">,
    body: JsonValue,
  ): KubeObject {
    const current = target as unknown as JsonValue;
    switch (patchType) {
      case "json":
        return applyJsonPatch(current, body) as unknown as KubeObject;
      case "merge":
        return applyMergePatch(current, body) as unknown as KubeObject;
      case "strategic":
        if (type.crdName !== undefined)
          throw apiErrors.unsupportedMediaType("application/strategic-merge-patch+json");
        return applyStrategicMergePatch(current, body, type.typeInfo) as unknown as KubeObject;
      default: {
        const never: never = patchType;
        return never;
      }
    }
  }

  private apply(
    type: ResourceType,
    namespace: string,
    name: string,
    body: JsonValue,
    options: WriteOptions,
  ): KubeObject {
    if (!options.fieldManager) {
      throw apiErrors.invalid("PatchOptions", "meta.k8s.io", "", [
        { type: "Required", field: "fieldManager", detail: "is required for apply patch" },
      ]);
    }
    const applied = body as unknown as KubeObject;
    if (typeof applied !== "object" || applied === null || !applied.metadata)
      throw apiErrors.badRequest("apply patch must be an object with metadata");
    if (applied.metadata.name && applied.metadata.name !== name) {
      throw apiErrors.badRequest(
        `the name of the object (${applied.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    const scoped = this.scopeApplied(type, applied, options.subresource);
    const live = this.store.get(groupResourceOf(type), type.namespaced ? namespace : "", name);
    const ctx = { ...this.context(options), skipManagedFields: true };
    const merged = serverSideApply({
      live: live ? this.present(type, live) : undefined,
      applied: scoped,
      manager: options.fieldManager,
      force: options.force ?? false,
      info: type.typeInfo,
      apiVersion: apiVersionOf(type),
      now: ctx.now,
      ...(options.subresource ? { subresource: options.subresource } : {}),
    });
    if (!live) {
      merged.metadata.name = name;
      const created = admitCreate(type, merged, namespace, ctx);
      this.admitPod(type, created);
      created.metadata.managedFields = merged.metadata.managedFields ?? [];
      this.checkNamespace(type, created.metadata.namespace ?? "", name);
      this.admitCrd(type, created, ctx.now);
      options.validate?.(type, created);
      this.finish(ctx, options);
      if (options.dryRun) return this.present(type, created);
      const stored = this.store.create(groupResourceOf(type), created);
      this.afterWrite(type, stored);
      return this.present(type, stored);
    }
    return this.commitUpdate(type, this.present(type, live), merged, ctx, options);
  }

  /** Server-side apply to the main resource ignores status when status is a subresource, and vice versa. */
  private scopeApplied(type: ResourceType, applied: KubeObject, subresource: string | undefined): KubeObject {
    const scoped = cloneObject(applied);
    if (subresource === "status") {
      return {
        ...(scoped.apiVersion !== undefined ? { apiVersion: scoped.apiVersion } : {}),
        ...(scoped.kind !== undefined ? { kind: scoped.kind } : {}),
        metadata: { name: scoped.metadata.name ?? "" },
        ...(scoped["status"] !== undefined ? { status: scoped["status"] } : {}),
      };
    }
    if (type.subresources.status) delete scoped["status"];
    return scoped;
  }

  private writeScale(
    type: ResourceType,
    old: KubeObject,
    scale: KubeObject,
    options: WriteOptions,
  ): KubeObject {
    const updated = fromScale(type, cloneObject(old), scale);
    const result = this.commitUpdate(
      type,
      old,
      updated,
      this.context({ ...options, subresource: "scale" }),
      options,
    );
    return toScale(type, result);
  }

  protected commitUpdate(
    type: ResourceType,
    old: KubeObject,
    input: KubeObject,
    ctx: AdmissionContext,
    options: WriteOptions,
  ): KubeObject {
    const admitted = admitUpdate(type, old, input, ctx);
    this.admitCrd(type, admitted, ctx.now);
    options.validate?.(type, admitted);
    this.finish(ctx, options);
    if (options.dryRun) return this.present(type, admitted);
    const groupResource = groupResourceOf(type);
    const meta = admitted.metadata;
    if (meta.deletionTimestamp && (meta.finalizers ?? []).length === 0 && !meta.deletionGracePeriodSeconds) {
      const updated = this.store.update(groupResource, admitted);
      const final = this.store.delete(groupResource, meta.namespace ?? "", meta.name ?? "");
      this.afterDelete(type, final);
      return this.present(type, updated);
    }
    const stored = this.store.update(groupResource, admitted);
    this.afterWrite(type, stored);
    return this.present(type, stored);
  }

  private admitCrd(type: ResourceType, object: KubeObject, now: number): void {
    if (groupResourceOf(type) !== CRD_GROUP_RESOURCE) return;
    const errors = validateCrd(object);
    if (errors.length > 0) throw apiErrors.invalid(type.kind, type.group, object.metadata.name ?? "", errors);
    if (!object.metadata.deletionTimestamp) object["status"] = establishedStatus(object, formatTime(now));
  }

  /** The service-account admission of a pod being created (when the cluster has it on). */
  private admitPod(type: ResourceType, object: KubeObject): void {
    if (!this.serviceAccountAdmission || type.group !== "" || type.plural !== "pods") return;
    const spec = (object["spec"] ?? {}) as { serviceAccountName?: string };
    const account = this.store.get(
      "serviceaccounts",
      object.metadata.namespace ?? "",
      spec.serviceAccountName || "default",
    );
    admitServiceAccount(object, account);
  }

  protected afterWrite(type: ResourceType, object: KubeObject): void {
    if (groupResourceOf(type) === CRD_GROUP_RESOURCE && !object.metadata.deletionTimestamp) {
      this.registry.setCustom(object.metadata.name ?? "", resourceTypesOfCrd(object));
    }
  }

  protected afterDelete(type: ResourceType, object: KubeObject): void {
    if (groupResourceOf(type) === CRD_GROUP_RESOURCE) this.registry.setCustom(object.metadata.name ?? "", []);
  }

  /** Re-registers the resources of every stored CRD (after loading a state file). */
  registerStoredCrds(): void {
    for (const crd of this.store.list(CRD_GROUP_RESOURCE)) {
      if (!crd.metadata.deletionTimestamp)
        this.registry.setCustom(crd.metadata.name ?? "", resourceTypesOfCrd(crd));
    }
  }
}
