// Certificates for TLS specs, made in the test: a CA and leaves it signs (for 127.0.0.1 and localhost,
// good as server and client), written and rotated as kubelet mounts a Secret (the dev cluster's atomic
// writer: files in a `..<timestamp>` folder, `..data` swapped to it by one rename, names linked through it).
import { generate } from "selfsigned";
import { writeVolumeAtomically } from "../../../devtools/devcluster/kubelet/atomic-writer.ts";

export interface Pem {
  cert: string;
  key: string;
}

const validity = () => {
  const now = Date.now();
  return { notBeforeDate: new Date(now - 60_000), notAfterDate: new Date(now + 24 * 3600 * 1000) };
};

export async function testCa(name = "tessera-test-ca"): Promise<Pem> {
  const r = await generate([{ name: "commonName", value: name }], {
    keyType: "ec",
    algorithm: "sha256",
    ...validity(),
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: r.cert, key: r.private };
}

/** A leaf signed by `ca`, for 127.0.0.1, ::1 and localhost (and `dnsNames`), server and client auth. */
export async function testLeaf(ca: Pem, name = "tessera-test", dnsNames: string[] = []): Promise<Pem> {
  const r = await generate([{ name: "commonName", value: name }], {
    keyType: "ec",
    algorithm: "sha256",
    ...validity(),
    ca,
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", serverAuth: true, clientAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 7 as const, ip: "127.0.0.1" },
          { type: 7 as const, ip: "::1" },
          { type: 2 as const, value: "localhost" },
          ...dnsNames.map((value) => ({ type: 2 as const, value })),
        ],
      },
    ],
  });
  return { cert: r.cert, key: r.private };
}

export type SecretFiles = Record<string, string>;

/** tls.crt, tls.key and (with a CA) ca.crt. */
export function secretFiles(leaf: Pem, ca: Pem | undefined): SecretFiles {
  return { "tls.crt": leaf.cert, "tls.key": leaf.key, ...(ca && { "ca.crt": ca.cert }) };
}

/** Writes `files` into `dir` as kubelet mounts a Secret volume (first time) or updates it (after). */
export function writeSecretVolume(dir: string, files: SecretFiles): void {
  writeVolumeAtomically(dir, new Map(Object.entries(files)));
}
