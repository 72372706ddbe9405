// Client certificates, as kube-apiserver's --client-ca-file authenticator reads them: a
// certificate the cluster CA signed names the user by its Common Name and the groups by its
// Organizations. The dev cluster's CA is its serving certificate (self-signed, a CA), which the
// kubeconfig already trusts; `issueClientCertificate` signs with it, e.g. the admin kubeconfig's
// kubernetes-admin in system:masters.
import type { PeerCertificate } from "node:tls";
import { generate } from "selfsigned";
import { certificateBasics, type TlsMaterial } from "../http/tls-certificate.ts";
import type { UserInfo } from "./user-info.ts";

export async function issueClientCertificate(
  ca: TlsMaterial,
  user: string,
  groups: string[] = [],
  now = Date.now(),
): Promise<TlsMaterial> {
  const result = await generate(
    [
      { name: "commonName", value: user },
      ...groups.map((value) => ({ name: "organizationName" as const, value })),
    ],
    {
      ...certificateBasics(now),
      extensions: [
        { name: "basicConstraints", cA: false, critical: true },
        { name: "keyUsage", digitalSignature: true, critical: true },
        { name: "extKeyUsage", clientAuth: true },
      ],
      ca,
    },
  );
  return { cert: result.cert, key: result.private };
}

/** The user of a verified peer certificate: CN the name, O the groups (undefined without a CN). */
export function userOfCertificate(cert: PeerCertificate): UserInfo | undefined {
  const subject = cert.subject as Record<string, string | string[] | undefined> | undefined;
  const cn = subject?.["CN"];
  const name = Array.isArray(cn) ? cn[0] : cn;
  if (!name) return undefined;
  const o = subject?.["O"];
  const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
  return { name, groups };
}
