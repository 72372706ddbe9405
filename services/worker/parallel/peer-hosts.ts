// Resolves a peer's `host:port` before it is dialed. On real Kubernetes a peer's name
// (`<hostname>.<model>-workers.<namespace>.svc`) is cluster DNS and grpc-js resolves it itself. The dev
// cluster has no DNS: its kubelet keeps a hosts-style file of the same records (the pods of headless
// Services, devtools/devcluster/kubelet/cluster-hosts.ts) and names it in TESSERA_HOSTS_FILE. The file
// is read again at every dial attempt, so a replaced peer (a new pod IP) is found; a name not in it is
// left to DNS.
import { readFile } from "node:fs/promises";

/** `host:port` -> the address to dial. */
export type PeerResolver = (address: string) => Promise<string>;

/** The names of a hosts file (`IP name [name...]` lines, `#` comments), each to its first address. */
export function parseHosts(text: string): Map<string, string> {
  const hosts = new Map<string, string>();
  for (const line of text.split("\n")) {
    const [ip, ...names] = (line.split("#")[0] ?? "").trim().split(/\s+/);
    if (!ip) continue;
    for (const name of names) {
      const key = canonicalName(name);
      if (!hosts.has(key)) hosts.set(key, ip);
    }
  }
  return hosts;
}

/** `host:port` with host looked up in `hosts`; unchanged when it is not there (DNS, or an IP). */
export function resolveAddress(address: string, hosts: ReadonlyMap<string, string>): string {
  const colon = address.lastIndexOf(":");
  if (colon <= 0 || address.startsWith("[")) return address;
  const ip = hosts.get(canonicalName(address.slice(0, colon)));
  return ip ? `${ip}${address.slice(colon)}` : address;
}

/** Resolves through the hosts file when one is given (a missing or unreadable file resolves nothing). */
export function hostsFileResolver(file: string | undefined): PeerResolver {
  if (!file) return async (address) => address;
  return async (address) => {
    const text = await readFile(file, "utf8").catch(() => "");
    return resolveAddress(address, parseHosts(text));
  };
}

function canonicalName(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}
