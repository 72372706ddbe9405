// Impersonation (`kubectl --as`, `--as-group`): the Impersonate-User, -Group, -Uid and -Extra-*
// headers make a request act as another user, when the caller may `impersonate` each of them
// (users, groups, serviceaccounts in their namespace, uids and userextras/<key> of
// authentication.k8s.io), as kube-apiserver's impersonation filter checks.
import type { IncomingMessage } from "node:http";
import { apiErrors } from "../core/api-status.ts";
import { forbidden } from "./auth-errors.ts";
import type { RbacAuthorizer } from "./rbac-authorizer.ts";
import type { ResourceAttributes } from "./request-attributes.ts";
import {
  ANONYMOUS_USER,
  AUTHENTICATED_GROUP,
  serviceAccountOf,
  serviceAccountUser,
  UNAUTHENTICATED_GROUP,
  type UserInfo,
} from "./user-info.ts";

const EXTRA_PREFIX = "impersonate-extra-";

function values(req: IncomingMessage, name: string): string[] {
  return req.headersDistinct[name] ?? [];
}

/** The user a request acts as: the authenticated user, or the one it impersonates (403 when not allowed). */
export function impersonatedUser(req: IncomingMessage, user: UserInfo, rbac: RbacAuthorizer): UserInfo {
  const name = values(req, "impersonate-user")[0];
  const groups = values(req, "impersonate-group");
  const uid = values(req, "impersonate-uid")[0];
  const extraKeys = Object.keys(req.headersDistinct).filter((h) => h.startsWith(EXTRA_PREFIX));
  if (name === undefined) {
    if (groups.length > 0 || uid !== undefined || extraKeys.length > 0)
      throw apiErrors.badRequest(
        "requested impersonation of groups, uid or extra without impersonating a user",
      );
    return user;
  }
  const check = (attrs: Omit<ResourceAttributes, "kind" | "verb">) => {
    const full: ResourceAttributes = { kind: "resource", verb: "impersonate", ...attrs };
    const decision = rbac.authorize(user, full);
    if (!decision.allowed) throw forbidden(user.name, full, decision.reason);
  };
  const account = serviceAccountOf(name);
  if (account)
    check({ apiGroup: "", resource: "serviceaccounts", namespace: account.namespace, name: account.name });
  else check({ apiGroup: "", resource: "users", name });
  for (const group of groups) check({ apiGroup: "", resource: "groups", name: group });
  if (uid !== undefined) check({ apiGroup: "authentication.k8s.io", resource: "uids", name: uid });
  const extra: Record<string, string[]> = {};
  for (const header of extraKeys) {
    const key = decodeURIComponent(header.slice(EXTRA_PREFIX.length));
    const list = values(req, header);
    for (const value of list)
      check({ apiGroup: "authentication.k8s.io", resource: "userextras", subresource: key, name: value });
    extra[key] = list;
  }
  const finalGroups =
    account && groups.length === 0 ? serviceAccountUser(account.namespace, account.name).groups : [...groups];
  const implied = name === ANONYMOUS_USER ? UNAUTHENTICATED_GROUP : AUTHENTICATED_GROUP;
  if (!finalGroups.includes(implied)) finalGroups.push(implied);
  return {
    name,
    groups: finalGroups,
    ...(uid !== undefined ? { uid } : {}),
    ...(extraKeys.length > 0 ? { extra } : {}),
  };
}
