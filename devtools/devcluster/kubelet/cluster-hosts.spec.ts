import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "../../../services/kernel/log.ts";
import { discardEvents } from "../../../services/kube/event-recorder.ts";
import type { KubeObject } from "../../../services/kube/kube-object.ts";
import { testCluster } from "../apiserver/cluster/test-cluster.ts";
import { EndpointSliceController } from "../controllers/endpointslice-controller.ts";
import type { Pod } from "../objects/pod-types.ts";
import { NAMESPACES, PODS, SERVICES } from "../objects/refs.ts";
import type { Endpoint, EndpointSlice, Service } from "../objects/workload-types.ts";
import { clusterHostLines, usesClusterDns } from "./cluster-hosts.ts";
import { FakeLauncher, flush } from "./fake-launcher.ts";
import { Kubelet } from "./kubelet.ts";

const service = (name: string, clusterIP = "None"): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: "ns" },
  spec: { clusterIP, selector: { app: name } },
});
const endpoint = (
  ip: string,
  hostname?: string,
  conditions: Partial<Endpoint["conditions"]> = {},
): Endpoint => ({
  addresses: [ip],
  conditions: { ready: true, serving: true, terminating: false, ...conditions },
  ...(hostname ? { hostname } : {}),
});
const slice = (serviceName: string, endpoints: Endpoint[]): EndpointSlice => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: {
    name: `${serviceName}-x`,
    namespace: "ns",
    labels: { "kubernetes.io/service-name": serviceName },
  },
  addressType: "IPv4",
  endpoints,
  ports: [],
});

describe("cluster hosts (the dev cluster's stand-in for cluster DNS)", () => {
  it("names the pods of headless Services by hostname, and the Service by its ready endpoints", () => {
    const lines = clusterHostLines(
      [service("w"), service("web", "10.0.0.1")],
      [
        slice("w", [
          endpoint("127.1.0.2", "a"),
          endpoint("127.1.0.3", "b", { ready: false }),
          endpoint("127.1.0.4"),
        ]),
        slice("web", [endpoint("127.1.0.9", "c")]),
      ],
      "cluster.local",
    );
    assert.deepEqual(lines, [
      "127.1.0.2 a.w.ns.svc.cluster.local a.w.ns.svc",
      "127.1.0.2 w.ns.svc.cluster.local w.ns.svc",
      "127.1.0.4 w.ns.svc.cluster.local w.ns.svc",
    ]);
  });

  it("prefers a replaced pod's successor to the terminating pod with the same hostname", () => {
    const lines = clusterHostLines(
      [service("w")],
      [slice("w", [endpoint("127.1.0.2", "a", { terminating: true }), endpoint("127.1.0.7", "a")])],
      "cluster.local",
    );
    assert.deepEqual(lines, [
      "127.1.0.7 a.w.ns.svc.cluster.local a.w.ns.svc",
      "127.1.0.7 w.ns.svc.cluster.local w.ns.svc",
    ]);
  });

  it("follows Kubernetes' dnsPolicy: host-network pods use the node's resolver unless ClusterFirstWithHostNet", () => {
    const pod = (spec: Record<string, unknown>) => ({ spec: { containers: [], ...spec } }) as unknown as Pod;
    assert.equal(usesClusterDns(pod({})), true);
    assert.equal(usesClusterDns(pod({ hostNetwork: true })), false);
    assert.equal(usesClusterDns(pod({ hostNetwork: true, dnsPolicy: "ClusterFirstWithHostNet" })), true);
    assert.equal(usesClusterDns(pod({ dnsPolicy: "Default" })), false);
  });

  describe("kept by the kubelet", () => {
    let rootDir: string;
    beforeEach(() => {
      rootDir = mkdtempSync(path.join(os.tmpdir(), "tessera-cluster-hosts-"));
    });
    afterEach(() => rmSync(rootDir, { recursive: true, force: true }));

    it("gives every pod TESSERA_HOSTS_FILE, and keeps each pod's name at its current IP as pods come and go", async () => {
      const cluster = testCluster({ gracefulPodDeletion: true, controllers: true });
      const log = createLogger("cluster-hosts-spec", "silent");
      const fake = new FakeLauncher();
      const kubelet = new Kubelet(
        { nodeName: "n", rootDir, podCidr: "127.78.0.0/16", inheritEnv: [], clusterId: "c" },
        {
          api: cluster.api,
          clock: cluster.clock,
          launcher: fake.launcher,
          log,
          checker: async () => ({ ok: true, message: "" }),
        },
      );
      const slices = new EndpointSliceController({
        api: cluster.api,
        clock: cluster.clock,
        log,
        events: discardEvents,
      });
      kubelet.start();
      slices.start();
      const settle = async () => {
        for (let i = 0; i < 4; i++) {
          await flush();
          await kubelet.idle();
          await slices.loop.idle();
          await cluster.settle();
          await kubelet.idle();
        }
      };
      const pod = (name: string, hostname: string, subdomain: string): KubeObject => ({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, labels: { app: "m" } },
        spec: {
          nodeName: "n",
          hostname,
          subdomain,
          containers: [{ name: "c", image: "none", command: ["node", "-e", name] }],
        },
      });
      const hosts = () => readFileSync(kubelet.hostsFile, "utf8");
      const ipOf = (name: string) => (cluster.api.get(PODS, "ns", name) as Pod).status?.podIP;
      try {
        cluster.api.create(NAMESPACES, "", { apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } });
        cluster.api.create(SERVICES, "ns", {
          ...service("m-workers"),
          spec: { clusterIP: "None", publishNotReadyAddresses: true, selector: { app: "m" } },
        });
        cluster.api.create(PODS, "ns", pod("p0", "h0", "m-workers"));
        cluster.api.create(PODS, "ns", pod("p1", "h1", "m-workers"));
        cluster.api.create(PODS, "ns", pod("stray", "h2", "another"));
        await settle();
        assert.equal(fake.latest("p1")?.spec.env["TESSERA_HOSTS_FILE"], kubelet.hostsFile);
        const text = hosts();
        assert.ok(
          text.includes(`${ipOf("p0")} h0.m-workers.ns.svc.cluster.local h0.m-workers.ns.svc\n`),
          text,
        );
        assert.ok(
          text.includes(`${ipOf("p1")} h1.m-workers.ns.svc.cluster.local h1.m-workers.ns.svc\n`),
          text,
        );
        assert.doesNotMatch(text, /h2\./, "a subdomain with no headless Service names nothing");

        cluster.api.delete(PODS, "ns", "p0", { gracePeriodSeconds: 0 });
        await settle();
        assert.doesNotMatch(hosts(), /h0\./);
        cluster.api.create(PODS, "ns", pod("p0", "h0", "m-workers"));
        await settle();
        assert.ok(hosts().includes(`${ipOf("p0")} h0.m-workers.ns.svc.cluster.local`), hosts());
      } finally {
        slices.stop();
        await kubelet.stop({ graceSeconds: 0 });
      }
    });
  });
});
