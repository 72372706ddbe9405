// Real kubectl (1.31 and 1.35) against the dev cluster API server: client-side and server-side
// apply, printed columns, wait, delete, and CRD validation errors that name the field.
import assert from "node:assert/strict";
import { type ClientRelease, clientBinaries } from "./client-binaries.ts";
import { type ClusterFixture, startClusterFixture } from "./cluster-fixture.ts";
import { appManifest, widget, widgetCrd } from "./manifests.ts";

for (const release of ["v31", "v35"] satisfies ClientRelease[]) {
  describe(`kubectl ${release} against the dev cluster (e2e)`, function () {
    this.timeout(60_000);
    let cluster: ClusterFixture;
    let kubectl: (...args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;
    const ok = async (...args: string[]) => {
      const result = await kubectl(...args);
      assert.equal(result.code, 0, `kubectl ${args.join(" ")} failed:\n${result.stderr}`);
      return result.stdout;
    };

    before(async () => {
      cluster = await startClusterFixture();
      const binary = clientBinaries(release).kubectl;
      kubectl = (...args) => cluster.run(binary, args);
    });
    after(() => cluster.close());

    it("applies manifests client-side, prints columns, and applies changes as patches", async () => {
      const file = cluster.file("app.yaml", appManifest(2, "hi"));
      assert.match(await ok("apply", "-f", file), /deployment.apps\/web created/);
      const wide = await ok("get", "deployment", "web", "-o", "wide");
      assert.match(wide, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR/);
      assert.match(wide, /web\s+0\/2\s+0\s+0\s+\d+s\s+server\s+tessera\/web:1\s+app=web/);
      assert.match(await ok("get", "svc", "web"), /web\s+ClusterIP\s+10\.96\.\d+\.\d+\s+<none>\s+80\/TCP/);
      cluster.file("app.yaml", appManifest(3, "hello"));
      const second = await ok("apply", "-f", file);
      assert.match(second, /deployment.apps\/web configured/);
      assert.match(second, /service\/web unchanged/);
      const deployment = JSON.parse(await ok("get", "deployment", "web", "-o", "json"));
      assert.equal(deployment.spec.replicas, 3);
      assert.equal(deployment.metadata.generation, 2);
      assert.deepEqual(deployment.spec.template.spec.containers[0].env, [
        { name: "GREETING", value: "hello" },
      ]);
      assert.equal((await kubectl("diff", "-f", file)).code, 0);
    });

    it("waits for a condition and for deletion, then reports NotFound", async () => {
      const waiting = kubectl("wait", "--for=condition=Available", "deployment/web", "--timeout=20s");
      const status = JSON.stringify({
        status: { conditions: [{ type: "Available", status: "True", reason: "MinimumReplicasAvailable" }] },
      });
      await ok("patch", "deployment", "web", "--subresource=status", "--type=merge", "-p", status);
      assert.match((await waiting).stdout, /condition met/);
      const deleting = kubectl("wait", "--for=delete", "configmap/web-config", "--timeout=20s");
      await ok("delete", "configmap", "web-config");
      assert.equal((await deleting).code, 0);
      const missing = await kubectl("get", "configmap", "web-config");
      assert.notEqual(missing.code, 0);
      assert.match(missing.stderr, /NotFound.*configmaps "web-config" not found/);
      await ok("delete", "-f", cluster.file("app.yaml", appManifest(3, "hello")), "--ignore-not-found");
      assert.match(await ok("get", "deployments,services", "-l", "app=web"), /^$|No resources/);
    });

    it("applies server-side, reports conflicts with another manager and forces them", async () => {
      const file = cluster.file("ssa.yaml", appManifest(1, "ssa"));
      assert.match(await ok("apply", "--server-side", "-f", file), /deployment.apps\/web serverside-applied/);
      await ok("scale", "deployment", "web", "--replicas=4");
      const conflict = await kubectl("apply", "--server-side", "-f", file);
      assert.notEqual(conflict.code, 0);
      assert.match(conflict.stderr, /conflict with "kubectl".*: \.spec\.replicas/);
      await ok("apply", "--server-side", "--force-conflicts", "-f", file);
      const deployment = JSON.parse(
        await ok("get", "deployment", "web", "-o", "json", "--show-managed-fields"),
      );
      assert.equal(deployment.spec.replicas, 1);
      const applied = deployment.metadata.managedFields.find(
        (m: { operation: string }) => m.operation === "Apply",
      );
      assert.equal(applied.manager, "kubectl");
      assert.ok(applied.fieldsV1["f:spec"]["f:replicas"]);
    });

    it("serves a CRD at once, with defaults, printer columns and field-naming validation errors", async () => {
      await ok("apply", "-f", cluster.file("crd.yaml", widgetCrd));
      await ok("wait", "--for=condition=Established", "crd/widgets.example.tessera.dev", "--timeout=10s");
      await ok("apply", "-f", cluster.file("w1.yaml", widget("w1", "{model: tiny-llama, replicas: 2}")));
      assert.match(await ok("get", "widgets"), /NAME\s+REPLICAS\s+ROLE\s+AGE\n\s*w1\s+2\s+both\s+\d+s/);
      const bad = await kubectl(
        "apply",
        "-f",
        cluster.file("w2.yaml", widget("w2", "{model: tiny-llama, replicas: -1}")),
      );
      assert.match(
        bad.stderr,
        /spec\.replicas: Invalid value: -1: spec\.replicas in body should be greater than or equal to 0/,
      );
      const cel = await kubectl(
        "apply",
        "-f",
        cluster.file("w3.yaml", widget("w3", "{model: m, replicas: 9}")),
      );
      assert.match(cel.stderr, /spec: Invalid value: "object": replicas must not exceed maxReplicas/);
      const unknown = await kubectl(
        "apply",
        "-f",
        cluster.file("w4.yaml", widget("w4", "{model: m, colour: red}")),
      );
      assert.match(unknown.stderr, /unknown field "spec\.colour"/);
      const role = await kubectl(
        "apply",
        "-f",
        cluster.file("w5.yaml", widget("w5", "{model: m, role: router}")),
      );
      assert.match(
        role.stderr,
        /spec\.role: Unsupported value: "router": supported values: "prefill", "decode", "both"/,
      );
      await ok("scale", "widget", "w1", "--replicas=5");
      assert.equal(await ok("get", "wd", "w1", "-o", "jsonpath={.spec.replicas}"), "5");
      await ok("delete", "crd", "widgets.example.tessera.dev");
      assert.notEqual((await kubectl("get", "widgets")).code, 0);
    });
  });
}
