// Real kubectl (1.31 and 1.35) imperative commands against the dev cluster. kubectl 1.35's create
// subcommands send application/vnd.kubernetes.protobuf bodies (1.31 sends JSON); each object is
// read back with `kubectl get -o json`.
import assert from "node:assert/strict";
import { type ClientRelease, clientBinaries } from "./client-binaries.ts";
import { type ClusterFixture, startClusterFixture } from "./cluster-fixture.ts";

for (const release of ["v31", "v35"] satisfies ClientRelease[]) {
  describe(`kubectl ${release} imperative commands against the dev cluster (e2e)`, function () {
    this.timeout(60_000);
    let cluster: ClusterFixture;
    let kubectl: (...args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;
    const ok = async (...args: string[]) => {
      const result = await kubectl(...args);
      assert.equal(result.code, 0, `kubectl ${args.join(" ")} failed:\n${result.stderr}`);
      return result.stdout;
    };
    // biome-ignore lint/suspicious/noExplicitAny: JSON read back from kubectl
    const getJson = async (...args: string[]): Promise<any> =>
      JSON.parse(await ok("get", ...args, "-o", "json"));

    before(async () => {
      cluster = await startClusterFixture();
      const binary = clientBinaries(release).kubectl;
      kubectl = (...args) => cluster.run(binary, args);
    });
    after(() => cluster.close());

    it("creates a namespace, a configmap and a secret in it", async () => {
      assert.match(await ok("create", "namespace", "team"), /namespace\/team created/);
      const ns = await getJson("namespace", "team");
      assert.equal(ns.status.phase, "Active");
      assert.equal(ns.metadata.labels["kubernetes.io/metadata.name"], "team");

      await ok("create", "configmap", "c", "-n", "team", "--from-literal=k=v", "--from-literal=e=");
      assert.deepEqual((await getJson("configmap", "c", "-n", "team")).data, { k: "v", e: "" });

      await ok("create", "secret", "generic", "s", "-n", "team", "--from-literal=k=v");
      const secret = await getJson("secret", "s", "-n", "team");
      assert.equal(secret.type, "Opaque");
      assert.deepEqual(secret.data, { k: Buffer.from("v").toString("base64") });
    });

    it("creates a deployment with a command, and a pod with kubectl run", async () => {
      await ok("create", "deployment", "d", "--image=busybox:1.36", "--port=8080", "--", "sleep", "3600");
      const deployment = await getJson("deployment", "d");
      assert.equal(deployment.spec.replicas, 1);
      assert.deepEqual(deployment.spec.selector, { matchLabels: { app: "d" } });
      const [container] = deployment.spec.template.spec.containers;
      assert.equal(container.name, "busybox");
      assert.equal(container.image, "busybox:1.36");
      assert.deepEqual(container.command, ["sleep", "3600"]);
      assert.deepEqual(container.ports, [{ containerPort: 8080, protocol: "TCP" }]);
      assert.equal(container.stdin, undefined);

      await ok("create", "deployment", "zero", "--image=i", "--replicas=0");
      assert.equal((await getJson("deployment", "zero")).spec.replicas, 0);

      assert.match(await ok("run", "p", "--image=busybox:1.36", "--", "sleep", "60"), /pod\/p created/);
      const pod = await getJson("pod", "p");
      assert.equal(pod.metadata.labels.run, "p");
      assert.deepEqual(pod.spec.containers[0].args, ["sleep", "60"]);
    });

    it("creates a service account, a service and RBAC objects", async () => {
      await ok("create", "serviceaccount", "robot");
      assert.equal((await getJson("serviceaccount", "robot")).metadata.name, "robot");

      await ok("create", "service", "nodeport", "web", "--tcp=80:http");
      const service = await getJson("service", "web");
      assert.equal(service.spec.type, "NodePort");
      assert.equal(service.spec.ports[0].port, 80);
      assert.equal(service.spec.ports[0].targetPort, "http");

      await ok("create", "role", "reader", "--verb=get,list", "--resource=pods,deployments.apps");
      assert.deepEqual((await getJson("role", "reader")).rules, [
        { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
        { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list"] },
      ]);
      await ok("create", "rolebinding", "read", "--role=reader", "--serviceaccount=default:robot");
      const binding = await getJson("rolebinding", "read");
      assert.deepEqual(binding.roleRef, {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name: "reader",
      });
      assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "robot", namespace: "default" }]);

      await ok("create", "clusterrole", "health", "--verb=get", "--non-resource-url=/healthz");
      assert.deepEqual((await getJson("clusterrole", "health")).rules, [
        { nonResourceURLs: ["/healthz"], verbs: ["get"] },
      ]);
      await ok("create", "clusterrolebinding", "health", "--clusterrole=health", "--group=ops");
      assert.deepEqual((await getJson("clusterrolebinding", "health")).subjects, [
        { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "ops" },
      ]);
    });

    it("labels and annotates objects", async () => {
      assert.match(await ok("label", "deployment", "d", "tier=web"), /labeled/);
      assert.match(await ok("annotate", "serviceaccount", "robot", "owner=me"), /annotated/);
      assert.equal((await getJson("deployment", "d")).metadata.labels.tier, "web");
      assert.equal((await getJson("serviceaccount", "robot")).metadata.annotations.owner, "me");
      await ok("label", "deployment", "d", "tier-");
      assert.equal((await getJson("deployment", "d")).metadata.labels.tier, undefined);
    });
  });
}
