// What every operator e2e applies before its models: the CRDs, a namespace of its own and (unless
// told otherwise) the dev cluster's example WorkerPool in it, with real kubectl.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { DevClusterFixture } from "../devcluster/kubelet-fixture.ts";

const root = path.resolve(import.meta.dirname, "../..");

export async function prepareServingNamespace(
  f: DevClusterFixture,
  ns: string,
  o: { workerPool: boolean } = { workerPool: true },
): Promise<void> {
  await f.ok("apply", "-f", path.join(root, "crds"));
  await f.ok("apply", "-f", f.file("ns.yaml", `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n`));
  if (!o.workerPool) return;
  const pool = readFileSync(path.join(root, "examples/dev-cluster/worker-pool.yaml"), "utf8");
  await f.ok("apply", "-n", ns, "-f", f.file("pool.yaml", pool));
}
