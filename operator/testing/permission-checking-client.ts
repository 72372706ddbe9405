// Wraps a KubeClient and records every call as (API group, resource[/subresource], RBAC verb),
// flagging those the operator's Role does not grant: specs fail when the code needs a permission
// operator/deploy/permissions.ts lacks.

import type { KubeClient } from "../../services/kube/kube-client.ts";
import type { ResourceRef } from "../../services/kube/resources.ts";
import { allows, OPERATOR_PERMISSIONS } from "../deploy/permissions.ts";

const VERBS: Record<string, string[]> = {
  get: ["get"],
  list: ["list"],
  watch: ["watch"],
  create: ["create"],
  update: ["update"],
  // Server-side apply is a patch (Kubernetes also wants create when it creates the object: the
  // Role grants it for pods and Services, the objects the operator creates by applying them).
  apply: ["patch"],
  mergePatch: ["patch"],
  delete: ["delete"],
};

export class PermissionCheckingClient {
  readonly violations = new Set<string>();
  readonly used = new Set<string>();

  wrap(client: KubeClient): KubeClient {
    return new Proxy(client, {
      get: (target, prop) => {
        const value = target[prop as keyof KubeClient] as unknown;
        if (typeof value !== "function") return value;
        const verbs = VERBS[String(prop)];
        return (ref: ResourceRef, ...rest: unknown[]) => {
          if (verbs) {
            const options = (prop === "apply" ? rest[2] : undefined) as { subresource?: string } | undefined;
            const resource = options?.subresource ? `${ref.resource}/${options.subresource}` : ref.resource;
            for (const verb of verbs) {
              const entry = `${ref.group || "core"} ${resource} ${verb}`;
              this.used.add(entry);
              if (!allows(OPERATOR_PERMISSIONS, ref.group, resource, verb)) this.violations.add(entry);
            }
          }
          return (value as (...args: unknown[]) => unknown).call(target, ref, ...rest);
        };
      },
    });
  }
}
