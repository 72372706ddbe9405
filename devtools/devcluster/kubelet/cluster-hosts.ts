// The dev cluster's stand-in for cluster DNS. Kubernetes gives a pod with spec.hostname and
// spec.subdomain the name `<hostname>.<subdomain>.<namespace>.svc.<cluster domain>` when a headless
// Service named like the subdomain exists in its namespace: the DNS server (CoreDNS) serves it from
// the Service's EndpointSlices, whose endpoints carry the pod's hostname. This is the same rule over
// the same objects, written as a hosts-style file (`IP name...` lines) that the kubelet names in every
// container's TESSERA_HOSTS_FILE, because there is no DNS server and no mount namespace to put an
// /etc/hosts in. Programs that dial peers by name (services/worker/parallel/peer-hosts.ts) look names
// up there first, then in DNS. The file is rewritten (atomically) whenever a Service or EndpointSlice
// changes, so a replaced pod's new IP shows up within a moment.
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Clock } from "../../../services/kernel/clock.ts";
import type { Logger } from "../../../services/kernel/log.ts";
import { ReconcileLoop } from "../../../services/kube/reconcile-loop.ts";
import type { WatchHandle } from "../apiserver/cluster/api-types.ts";
import type { ClusterApi } from "../apiserver/cluster/cluster-api.ts";
import type { Pod } from "../objects/pod-types.ts";
import { ENDPOINTSLICES, SERVICES } from "../objects/refs.ts";
import type { EndpointSlice, Service } from "../objects/workload-types.ts";

/** The variable that names the file in every container (dnsPolicy ClusterFirst, the default). */
export const HOSTS_FILE_ENV = "TESSERA_HOSTS_FILE";
const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/**
 * The records of headless Services (clusterIP None), as hosts lines sorted by name: each endpoint
 * with a hostname as `<hostname>.<service>.<ns>.svc.<domain>` (and the `.svc` form a pod reaches
 * through its `<domain>` search path), and the Service itself as every ready endpoint's address.
 * Ready endpoints only, as DNS serves (publishNotReadyAddresses marks them all ready); a terminating
 * one only where no other endpoint has its hostname (a replaced pod's successor wins).
 */
export function clusterHostLines(
  services: readonly Service[],
  slices: readonly EndpointSlice[],
  domain: string,
): string[] {
  const records = new Map<string, string[]>();
  const add = (name: string, ip: string) => records.set(name, [...(records.get(name) ?? []), ip]);
  for (const service of services) {
    if (service.spec.clusterIP !== "None") continue;
    const ns = service.metadata.namespace ?? "";
    const base = `${service.metadata.name}.${ns}.svc`;
    const endpoints = slices
      .filter(
        (s) =>
          s.metadata.namespace === ns && s.metadata.labels?.[SERVICE_NAME_LABEL] === service.metadata.name,
      )
      .flatMap((s) => s.endpoints)
      .filter((e) => e.conditions.ready !== false && e.addresses[0])
      .sort((a, b) => Number(a.conditions.terminating) - Number(b.conditions.terminating));
    const named = new Set<string>();
    for (const e of endpoints) {
      const ip = e.addresses[0]!;
      if (!e.conditions.terminating) add(base, ip);
      if (!e.hostname || named.has(e.hostname)) continue;
      named.add(e.hostname);
      add(`${e.hostname}.${base}`, ip);
    }
  }
  const lines: string[] = [];
  for (const name of [...records.keys()].sort())
    for (const ip of records.get(name) ?? []) lines.push(`${ip} ${name}.${domain} ${name}`);
  return lines;
}

/** Whether a pod's containers use cluster DNS (Kubernetes' dnsPolicy rules), so get the hosts file. */
export function usesClusterDns(pod: Pod): boolean {
  const policy = (pod.spec as { dnsPolicy?: string }).dnsPolicy ?? "ClusterFirst";
  if (policy === "ClusterFirstWithHostNet") return true;
  return policy === "ClusterFirst" && !pod.spec.hostNetwork;
}

/** Keeps the hosts file equal to clusterHostLines of the cluster's Services and EndpointSlices. */
export class ClusterHosts {
  readonly file: string;
  readonly #api: ClusterApi;
  readonly #domain: string;
  readonly #log: Logger;
  readonly #loop: ReconcileLoop;
  #watches: WatchHandle[] = [];
  #written: string | undefined;
  #stopped = false;

  constructor(api: ClusterApi, options: { file: string; domain: string; clock: Clock; log: Logger }) {
    this.file = options.file;
    this.#api = api;
    this.#domain = options.domain;
    this.#log = options.log;
    this.#loop = new ReconcileLoop("cluster-hosts", () => this.#syncLogged(), {
      clock: options.clock,
      log: options.log,
    });
  }

  start(): void {
    this.#sync();
    this.#loop.start();
    const changed = () => this.#loop.queue.add("hosts");
    this.#watches = [this.#api.watch(SERVICES, {}, changed), this.#api.watch(ENDPOINTSLICES, {}, changed)];
  }

  /** Resolves when no change waits to be written. */
  idle(): Promise<void> {
    return this.#loop.idle();
  }

  stop(): void {
    this.#stopped = true;
    void this.#loop.stop();
    for (const watch of this.#watches) watch.stop();
    this.#watches = [];
    rmSync(this.file, { force: true });
  }

  /** A file that cannot be written is logged; the next change writes it again. */
  #syncLogged(): undefined {
    try {
      this.#sync();
    } catch (err) {
      this.#log.warn({ err, file: this.file }, "cluster hosts file not written");
    }
    return undefined;
  }

  #sync(): void {
    if (this.#stopped) return;
    const services = this.#api.list(SERVICES, {}).items as Service[];
    const slices = this.#api.list(ENDPOINTSLICES, {}).items as EndpointSlice[];
    const lines = clusterHostLines(services, slices, this.#domain);
    const text = `# Written by the dev cluster's kubelet: pods of headless Services (its stand-in for cluster DNS).\n${lines.map((l) => `${l}\n`).join("")}`;
    if (text === this.#written) return;
    mkdirSync(path.dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, text);
    renameSync(temporary, this.file);
    this.#written = text;
  }
}
