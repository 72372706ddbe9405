// The API calls about authentication and authorization themselves, answered from the
// authenticator and RBAC rather than the object store: SelfSubjectAccessReview (`kubectl auth
// can-i`), SelfSubjectRulesReview (`kubectl auth can-i --list`), SelfSubjectReview (`kubectl auth
// whoami`) and TokenRequest on serviceaccounts/<name>/token (`kubectl create token`).
import type { JsonValue } from "../../../../services/kube/kube-object.ts";
import { SERVICEACCOUNTS } from "../../objects/refs.ts";
import type { ClusterApi } from "../cluster/cluster-api.ts";
import { apiErrors } from "../core/api-status.ts";
import { isJsonObject } from "../core/json-object.ts";
import type { ResourceRequest } from "../http/request-info.ts";
import type { RbacAuthorizer } from "./rbac-authorizer.ts";
import type { RequestAttributes } from "./request-attributes.ts";
import { type ServiceAccountTokens, TOKEN_AUDIENCE } from "./service-account-tokens.ts";
import type { UserInfo } from "./user-info.ts";

export interface AuthEndpointDeps {
  api: ClusterApi;
  rbac: RbacAuthorizer;
  tokens: ServiceAccountTokens;
  now: () => number;
}

type Json = Record<string, unknown>;

/** Whether a request is one of these endpoints (a create, the only verb they have). */
export function isAuthEndpoint(target: ResourceRequest): boolean {
  if (target.group === "authorization.k8s.io")
    return ["selfsubjectaccessreviews", "selfsubjectrulesreviews"].includes(target.resource);
  if (target.group === "authentication.k8s.io") return target.resource === "selfsubjectreviews";
  return target.group === "" && target.resource === "serviceaccounts" && target.subresource === "token";
}

function spec(body: JsonValue | undefined): Json {
  if (!isJsonObject(body)) throw apiErrors.badRequest("the request body must be an object");
  const value = body["spec"];
  return isJsonObject(value) ? (value as Json) : {};
}

function accessAttributes(s: Json): RequestAttributes {
  const resource = s["resourceAttributes"] as Json | undefined;
  if (resource) {
    const str = (key: string) => (typeof resource[key] === "string" ? (resource[key] as string) : "");
    return {
      kind: "resource",
      verb: str("verb"),
      apiGroup: str("group"),
      resource: str("resource"),
      ...(str("subresource") ? { subresource: str("subresource") } : {}),
      ...(str("namespace") ? { namespace: str("namespace") } : {}),
      ...(str("name") ? { name: str("name") } : {}),
    };
  }
  const other = s["nonResourceAttributes"] as Json | undefined;
  if (other)
    return { kind: "non-resource", verb: String(other["verb"] ?? ""), path: String(other["path"] ?? "") };
  throw apiErrors.badRequest(
    "spec: exactly one of nonResourceAttributes or resourceAttributes must be specified",
  );
}

/** The answer (HTTP 201 body) of an auth endpoint for `user`. */
export function answerAuthEndpoint(
  target: ResourceRequest,
  body: JsonValue | undefined,
  user: UserInfo,
  deps: AuthEndpointDeps,
): Json {
  const meta = { creationTimestamp: null };
  switch (target.resource) {
    case "selfsubjectaccessreviews": {
      const s = spec(body);
      const decision = deps.rbac.authorize(user, accessAttributes(s));
      return {
        kind: "SelfSubjectAccessReview",
        apiVersion: "authorization.k8s.io/v1",
        metadata: meta,
        spec: s,
        status: { allowed: decision.allowed, ...(decision.reason ? { reason: decision.reason } : {}) },
      };
    }
    case "selfsubjectrulesreviews": {
      const s = spec(body);
      const { rules, missing } = deps.rbac.rulesFor(user, String(s["namespace"] ?? ""));
      const masters = user.groups.includes("system:masters");
      const all = masters
        ? [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"], nonResourceURLs: ["*"] }]
        : rules;
      return {
        kind: "SelfSubjectRulesReview",
        apiVersion: "authorization.k8s.io/v1",
        metadata: meta,
        spec: s,
        status: {
          resourceRules: all
            .filter((r) => r.resources)
            .map(({ verbs, apiGroups, resources, resourceNames }) => ({
              verbs,
              apiGroups,
              resources,
              ...(resourceNames ? { resourceNames } : {}),
            })),
          nonResourceRules: all
            .filter((r) => r.nonResourceURLs)
            .map(({ verbs, nonResourceURLs }) => ({ verbs, nonResourceURLs })),
          incomplete: missing.length > 0,
          ...(missing.length > 0 ? { evaluationError: missing.join(", ") } : {}),
        },
      };
    }
    case "selfsubjectreviews":
      return {
        kind: "SelfSubjectReview",
        apiVersion: "authentication.k8s.io/v1",
        metadata: meta,
        status: {
          userInfo: {
            username: user.name,
            ...(user.uid ? { uid: user.uid } : {}),
            groups: user.groups,
            ...(user.extra ? { extra: user.extra } : {}),
          },
        },
      };
    default:
      return tokenRequest(target, body, deps);
  }
}

function tokenRequest(target: ResourceRequest, body: JsonValue | undefined, deps: AuthEndpointDeps): Json {
  const namespace = target.namespace ?? "";
  const name = target.name ?? "";
  const account = deps.api.get(SERVICEACCOUNTS, namespace, name);
  const s = spec(body);
  const seconds = typeof s["expirationSeconds"] === "number" ? s["expirationSeconds"] : 3600;
  if (seconds < 600)
    throw apiErrors.badRequest("spec.expirationSeconds: may not specify a duration less than 10 minutes");
  const audiences =
    Array.isArray(s["audiences"]) && s["audiences"].length > 0
      ? (s["audiences"] as string[])
      : [TOKEN_AUDIENCE];
  const pod = boundPod(s["boundObjectRef"], namespace, deps);
  const issued = deps.tokens.issue(
    { namespace, serviceAccount: { name, uid: account.metadata.uid ?? "" }, ...(pod ? { pod } : {}) },
    { expirationSeconds: seconds, audiences, now: deps.now() },
  );
  return {
    kind: "TokenRequest",
    apiVersion: "authentication.k8s.io/v1",
    metadata: {
      name,
      namespace,
      creationTimestamp: new Date(deps.now()).toISOString().replace(/\.\d+Z$/, "Z"),
    },
    spec: {
      audiences,
      expirationSeconds: seconds,
      boundObjectRef: pod ? { kind: "Pod", apiVersion: "v1", name: pod.name, uid: pod.uid } : null,
    },
    status: {
      token: issued.token,
      expirationTimestamp: new Date(issued.expiresAt).toISOString().replace(/\.\d+Z$/, "Z"),
    },
  };
}

/** The pod a TokenRequest binds its token to (kubectl create token --bound-object-kind Pod); other kinds are refused. */
function boundPod(
  ref: unknown,
  namespace: string,
  deps: AuthEndpointDeps,
): { name: string; uid: string } | undefined {
  if (!isJsonObject(ref as JsonValue)) return undefined;
  const { kind, name, uid } = ref as { kind?: string; name?: string; uid?: string };
  if (kind !== "Pod")
    throw apiErrors.badRequest(
      `spec.boundObjectRef.kind: Unsupported value: "${kind ?? ""}": this cluster binds tokens to Pods only`,
    );
  const pod = deps.api.get({ group: "", version: "v1", resource: "pods" }, namespace, name ?? "");
  const podUid = pod.metadata.uid ?? "";
  if (uid && uid !== podUid)
    throw apiErrors.badRequest(`spec.boundObjectRef.uid: the uid of pod "${name}" is ${podUid}, not ${uid}`);
  return { name: name ?? "", uid: podUid };
}
