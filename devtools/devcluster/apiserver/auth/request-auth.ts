// Authentication, impersonation and authorization of one request, in kube-apiserver's order:
// who sent it (401 when nobody acceptable), whom it acts as, and whether RBAC allows it (403).
import type { IncomingMessage } from "node:http";
import type { ClusterApi } from "../cluster/cluster-api.ts";
import type { RequestTarget } from "../http/request-info.ts";
import { forbidden, unauthorized } from "./auth-errors.ts";
import type { Authenticator } from "./authenticator.ts";
import { impersonatedUser } from "./impersonation.ts";
import type { RbacAuthorizer } from "./rbac-authorizer.ts";
import { requestAttributes } from "./request-attributes.ts";
import type { ServiceAccountTokens } from "./service-account-tokens.ts";
import type { UserInfo } from "./user-info.ts";

export interface RequestAuth {
  authenticator: Authenticator;
  rbac: RbacAuthorizer;
  tokens: ServiceAccountTokens;
  api: ClusterApi;
  now: () => number;
}

/** The user a request acts as, once it is allowed; throws the 401 or 403 Status otherwise. */
export function admitRequest(
  req: IncomingMessage,
  url: URL,
  target: RequestTarget,
  auth: RequestAuth,
): UserInfo {
  const authentication = auth.authenticator.authenticate(req, url.pathname);
  if ("unauthorized" in authentication) throw unauthorized();
  const user = impersonatedUser(req, authentication.user, auth.rbac);
  const attrs = requestAttributes(req.method ?? "GET", url.pathname, url.searchParams, target);
  const decision = auth.rbac.authorize(user, attrs);
  if (!decision.allowed) throw forbidden(user.name, attrs, decision.reason);
  return user;
}
