// Who a request is from, as kube-apiserver's authenticators name it: a user name, groups, and
// the well-known names (anonymous, the masters group that RBAC does not restrict, service accounts).

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  /** Extra attributes (e.g. the pod a service-account token was bound to). */
  extra?: Record<string, string[]>;
}

export const ANONYMOUS_USER = "system:anonymous";
export const UNAUTHENTICATED_GROUP = "system:unauthenticated";
export const AUTHENTICATED_GROUP = "system:authenticated";
export const MASTERS_GROUP = "system:masters";
export const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";

export function anonymousUser(): UserInfo {
  return { name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };
}

/** Adds system:authenticated, as kube-apiserver does for every user an authenticator names. */
export function authenticated(user: UserInfo): UserInfo {
  if (user.groups.includes(AUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

export function serviceAccountUser(namespace: string, name: string, uid?: string): UserInfo {
  return {
    name: `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`,
    ...(uid ? { uid } : {}),
    groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, AUTHENTICATED_GROUP],
  };
}

/** The namespace and name of a service account's user name, or undefined for other users. */
export function serviceAccountOf(userName: string): { namespace: string; name: string } | undefined {
  if (!userName.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const [namespace, name, ...rest] = userName.slice(SERVICE_ACCOUNT_PREFIX.length).split(":");
  if (!namespace || !name || rest.length > 0) return undefined;
  return { namespace, name };
}
