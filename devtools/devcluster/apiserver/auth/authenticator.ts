// Who sent a request, as kube-apiserver's authenticator chain decides: a client certificate the
// cluster CA signed, else a bearer token (the static token file, then the service-account tokens
// this cluster signed). A request with no credentials is system:anonymous only on the paths
// kube-apiserver serves anonymously (health and version); elsewhere, and with credentials that
// do not check out, it is refused with 401.
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import { userOfCertificate } from "./client-certificate.ts";
import type { BoundObjects, ServiceAccountTokens } from "./service-account-tokens.ts";
import { anonymousUser, authenticated, type UserInfo } from "./user-info.ts";

/** Paths kube-apiserver answers without credentials (AnonymousAuthConfigurableEndpoints). */
const ANONYMOUS_PATHS = ["/healthz", "/livez", "/readyz", "/version"];

export function anonymousAllowed(pathname: string): boolean {
  return ANONYMOUS_PATHS.some((p) => pathname === p || pathname.startsWith(`${p}/`));
}

export interface AuthenticatorOptions {
  /** Static tokens (--token-auth-file). */
  tokens: ReadonlyMap<string, UserInfo>;
  serviceAccountTokens: ServiceAccountTokens;
  objects: BoundObjects;
  now: () => number;
}

export type Authentication = { user: UserInfo } | { unauthorized: true };

export class Authenticator {
  readonly options: AuthenticatorOptions;

  constructor(options: AuthenticatorOptions) {
    this.options = options;
  }

  authenticate(req: IncomingMessage, pathname: string): Authentication {
    const socket = req.socket as Partial<TLSSocket>;
    const peer = socket.getPeerCertificate?.();
    if (peer && Object.keys(peer).length > 0) {
      const user = socket.authorized ? userOfCertificate(peer) : undefined;
      return user ? { user: authenticated(user) } : { unauthorized: true };
    }
    const header = req.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const user = match ? this.userOfToken(match[1]!) : undefined;
      return user ? { user } : { unauthorized: true };
    }
    return anonymousAllowed(pathname) ? { user: anonymousUser() } : { unauthorized: true };
  }

  userOfToken(token: string): UserInfo | undefined {
    const fromFile = this.options.tokens.get(token);
    if (fromFile) return authenticated(fromFile);
    return this.options.serviceAccountTokens.verify(token, this.options.objects, this.options.now());
  }
}
