// A self-signed serving certificate for 127.0.0.1/localhost, generated at start-up. It is its own
// CA: the kubeconfig carries it as certificate-authority-data, so clients verify TLS normally
// (client-node 2.x refuses plain http unless verification is skipped).
import { generate } from "selfsigned";

export interface TlsMaterial {
  cert: string;
  key: string;
}

/** The key and validity of every certificate the dev cluster makes: EC P-256, a year from a minute ago. */
export function certificateBasics(now: number) {
  return {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 365 * 24 * 3600 * 1000),
  } as const;
}

export async function selfSignedCertificate(hosts: string[], now = Date.now()): Promise<TlsMaterial> {
  const ips = hosts.filter((h) => /^[\d.]+$/.test(h) || h.includes(":"));
  const names = hosts.filter((h) => !ips.includes(h));
  const result = await generate([{ name: "commonName", value: "tessera-devcluster" }], {
    ...certificateBasics(now),
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, keyCertSign: true, critical: true },
      { name: "extKeyUsage", serverAuth: true, clientAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          ...names.map((value) => ({ type: 2 as const, value })),
          ...ips.map((ip) => ({ type: 7 as const, ip })),
        ],
      },
    ],
  });
  return { cert: result.cert, key: result.private };
}
