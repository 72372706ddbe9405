// Service-account tokens: JWTs the dev cluster signs with an ES256 key it holds (generated at
// start-up), with the claims of a bound token from kube-apiserver's TokenRequest API (issuer,
// audience, expiry, the service account's and pod's names and uids). A token is accepted only
// while it is unexpired, its signature checks, and the service account (and the pod it was bound
// to) still exists with the uid it names, as kube-apiserver checks bound tokens. Node's crypto
// signs and verifies ES256 directly; the encoding around it is a few lines, so no JWT library.
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from "node:crypto";
import { serviceAccountUser, type UserInfo } from "./user-info.ts";

export const TOKEN_ISSUER = "https://kubernetes.default.svc.cluster.local";
export const TOKEN_AUDIENCE = "https://kubernetes.default.svc.cluster.local";

export interface TokenSubject {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  /** The pod a token is bound to (the kubelet's tokens are). */
  pod?: { name: string; uid: string };
}

export interface IssueOptions {
  /** Lifetime; kube-apiserver's default for a TokenRequest is 3600 s. */
  expirationSeconds?: number;
  audiences?: string[];
  now?: number;
}

interface Claims {
  iss: string;
  aud: string[];
  sub: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  "kubernetes.io": {
    namespace: string;
    serviceaccount: { name: string; uid: string };
    pod?: { name: string; uid: string };
  };
}

/** Looks up whether the objects a token names still exist: the uid of a service account or pod. */
export interface BoundObjects {
  serviceAccountUid(namespace: string, name: string): string | undefined;
  podUid(namespace: string, name: string): string | undefined;
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString("base64url");

export class ServiceAccountTokens {
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;

  constructor(privateKeyPem?: string) {
    if (privateKeyPem) {
      this.#privateKey = createPrivateKey(privateKeyPem);
      this.#publicKey = createPublicKey(this.#privateKey);
    } else {
      const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
      this.#privateKey = pair.privateKey;
      this.#publicKey = pair.publicKey;
    }
  }

  issue(subject: TokenSubject, options: IssueOptions = {}): { token: string; expiresAt: number } {
    const now = Math.floor((options.now ?? Date.now()) / 1000);
    const exp = now + (options.expirationSeconds ?? 3600);
    const claims: Claims = {
      iss: TOKEN_ISSUER,
      aud: options.audiences ?? [TOKEN_AUDIENCE],
      sub: serviceAccountUser(subject.namespace, subject.serviceAccount.name).name,
      iat: now,
      nbf: now,
      exp,
      jti: crypto.randomUUID(),
      "kubernetes.io": {
        namespace: subject.namespace,
        serviceaccount: subject.serviceAccount,
        ...(subject.pod ? { pod: subject.pod } : {}),
      },
    };
    const input = `${base64url(JSON.stringify({ alg: "ES256", typ: "JWT" }))}.${base64url(JSON.stringify(claims))}`;
    const signature = sign("sha256", Buffer.from(input), {
      key: this.#privateKey,
      dsaEncoding: "ieee-p1363",
    });
    return { token: `${input}.${base64url(signature)}`, expiresAt: exp * 1000 };
  }

  /** The user a token names, or undefined when it is not one of ours or no longer valid. */
  verify(token: string, objects: BoundObjects, now = Date.now()): UserInfo | undefined {
    const claims = this.#claims(token);
    if (!claims || claims.iss !== TOKEN_ISSUER || !claims.aud?.includes(TOKEN_AUDIENCE)) return undefined;
    const seconds = now / 1000;
    if (!((claims.exp ?? 0) > seconds) || (claims.nbf ?? 0) > seconds + 60) return undefined;
    const k8s = claims["kubernetes.io"];
    if (!k8s?.namespace || !k8s.serviceaccount?.name) return undefined;
    if (objects.serviceAccountUid(k8s.namespace, k8s.serviceaccount.name) !== k8s.serviceaccount.uid)
      return undefined;
    if (k8s.pod && objects.podUid(k8s.namespace, k8s.pod.name) !== k8s.pod.uid) return undefined;
    const user = serviceAccountUser(k8s.namespace, k8s.serviceaccount.name, k8s.serviceaccount.uid);
    if (!k8s.pod) return user;
    return {
      ...user,
      extra: {
        "authentication.kubernetes.io/pod-name": [k8s.pod.name],
        "authentication.kubernetes.io/pod-uid": [k8s.pod.uid],
      },
    };
  }

  #claims(token: string): Partial<Claims> | undefined {
    const [header, payload, signature, ...rest] = token.split(".");
    if (!header || !payload || !signature || rest.length > 0) return undefined;
    try {
      const head = JSON.parse(Buffer.from(header, "base64url").toString()) as { alg?: string };
      if (head.alg !== "ES256") return undefined;
      const valid = verify(
        "sha256",
        Buffer.from(`${header}.${payload}`),
        { key: this.#publicKey, dsaEncoding: "ieee-p1363" },
        Buffer.from(signature, "base64url"),
      );
      if (!valid) return undefined;
      return JSON.parse(Buffer.from(payload, "base64url").toString()) as Partial<Claims>;
    } catch {
      return undefined;
    }
  }
}
