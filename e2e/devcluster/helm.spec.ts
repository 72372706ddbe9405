// Real helm (3.17 and 4.1) against the dev cluster API server: install, upgrade, list and
// uninstall a small chart. helm keeps its releases in Secrets written as protobuf.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { type ClientRelease, clientBinaries } from "./client-binaries.ts";
import { type ClusterFixture, startClusterFixture } from "./cluster-fixture.ts";
import { chart } from "./manifests.ts";

const helmVersions: Record<ClientRelease, RegExp> = { v31: /^v3\.17\./, v35: /^v4\./ };

for (const release of ["v31", "v35"] satisfies ClientRelease[]) {
  describe(`helm from layer ${release} against the dev cluster (e2e)`, function () {
    this.timeout(60_000);
    let cluster: ClusterFixture;
    let helm: (...args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;
    const ok = async (...args: string[]) => {
      const result = await helm(...args);
      assert.equal(result.code, 0, `helm ${args.join(" ")} failed:\n${result.stderr}`);
      return result.stdout;
    };
    const get = (resource: string, namespace: string, name: string) =>
      cluster.server.api.get(
        { group: resource === "deployments" ? "apps" : "", version: "v1", resource },
        namespace,
        name,
      );

    before(async () => {
      cluster = await startClusterFixture();
      const binary = clientBinaries(release).helm;
      helm = (...args) => cluster.run(binary, args);
      mkdirSync(path.join(cluster.dir, "chart", "templates"), { recursive: true });
      for (const [name, content] of Object.entries(chart)) cluster.file(path.join("chart", name), content);
    });
    after(() => cluster.close());

    it(`is helm ${helmVersions[release].source}`, async () => {
      assert.match(await ok("version", "--template", "{{.Version}}"), helmVersions[release]);
    });

    it("installs, upgrades, lists and uninstalls a release", async () => {
      await ok("install", "demo", "./chart", "--namespace", "apps", "--create-namespace", "--wait=false");
      assert.equal((get("deployments", "apps", "demo")["spec"] as { replicas: number }).replicas, 1);
      const storage = cluster.server.api.list(
        { group: "", version: "v1", resource: "secrets" },
        { namespace: "apps", labelSelector: "owner=helm,name=demo" },
      );
      assert.equal(storage.items.length, 1, "helm stores the release in a Secret");

      await ok("upgrade", "demo", "./chart", "--namespace", "apps", "--set", "replicas=3,message=bye");
      const deployment = get("deployments", "apps", "demo");
      assert.equal((deployment["spec"] as { replicas: number }).replicas, 3);
      assert.equal((get("configmaps", "apps", "demo-config")["data"] as { message: string }).message, "bye");

      const list = JSON.parse(await ok("list", "--namespace", "apps", "-o", "json")) as {
        name: string;
        revision: string;
        status: string;
      }[];
      assert.deepEqual(
        list.map((r) => [r.name, String(r.revision), r.status]),
        [["demo", "2", "deployed"]],
      );

      await ok("uninstall", "demo", "--namespace", "apps");
      await cluster.server.controllersIdle();
      for (const resource of ["deployments", "services", "configmaps", "serviceaccounts"]) {
        assert.throws(
          () => get(resource, "apps", resource === "configmaps" ? "demo-config" : "demo"),
          /not found/,
        );
      }
      assert.equal(JSON.parse(await ok("list", "--namespace", "apps", "-o", "json")).length, 0);
    });
  });
}
