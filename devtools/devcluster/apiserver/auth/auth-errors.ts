// The Status bodies kube-apiserver answers refused requests with: 401 Unauthorized, and
// 403 Forbidden with the message its RBAC refusals carry, e.g. `pods is forbidden: User "x"
// cannot list resource "pods" in API group "" in the namespace "default"`.
import type { TesseraError } from "../../../../services/kernel/errors.ts";
import { statusError } from "../core/api-status.ts";
import type { RequestAttributes } from "./request-attributes.ts";

export function unauthorized(): TesseraError {
  return statusError(401, "Unauthorized", "Unauthorized");
}

/** What kube-apiserver's forbiddenMessage says the user cannot do. */
export function forbiddenMessage(userName: string, attrs: RequestAttributes): string {
  if (attrs.kind === "non-resource") return `User "${userName}" cannot ${attrs.verb} path "${attrs.path}"`;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const scope = attrs.namespace ? `in the namespace "${attrs.namespace}"` : "at the cluster scope";
  return `User "${userName}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.apiGroup}" ${scope}`;
}

/** The 403 of a refused request (`reason`: the authorizer's, appended after a colon). */
export function forbidden(userName: string, attrs: RequestAttributes, reason = ""): TesseraError {
  const why = forbiddenMessage(userName, attrs) + (reason ? `: ${reason}` : "");
  if (attrs.kind === "non-resource") return statusError(403, "Forbidden", `forbidden: ${why}`, {});
  const qualified = attrs.apiGroup ? `${attrs.resource}.${attrs.apiGroup}` : attrs.resource;
  const subject = attrs.name ? `${qualified} "${attrs.name}"` : qualified;
  return statusError(403, "Forbidden", `${subject} is forbidden: ${why}`, {
    ...(attrs.name ? { name: attrs.name } : {}),
    ...(attrs.apiGroup ? { group: attrs.apiGroup } : {}),
    kind: attrs.resource,
  });
}
