// The operator end to end on the dev cluster (API server, scheduler, process kubelet) with real
// kubectl, real `tessera serve` workers and a real `tessera operator` process: apply the examples
// -> Ready -> Generate, on a worker and through the operator-managed router pod, equals `tessera
// generate`; scale 1 -> 3 and the router sends traffic to the new shards about as soon as status
// shows them; two router pods (routing.replicas) pick the same shard for each prompt, take API keys
// from a Secret (and a rotated Secret without a restart) and, with a KV store, share their response
// cache in it; an engine change rolls out
// one replica at a time with no failed request, surviving an operator crash; a converged operator
// stops reconciling; delete removes the pods (router included) and the model's Redis keys. The dev cluster has no Service DNS or cluster IPs: the
// router is called on its pod IP, read from its Service's EndpointSlice.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { RespConnection } from "../../operator/reconcile/resp-client.ts";
import { RedisServer } from "../../services/worker/kv-transfer/redis-harness.ts";
import { tinyCheckpoint } from "../checkpoint.ts";
import { clientBinaries } from "../devcluster/client-binaries.ts";
import {
  type DevClusterFixture,
  eventually,
  httpGet,
  processesWith,
  runClient,
  startDevClusterFixture,
} from "../devcluster/kubelet-fixture.ts";
import { generate, generateIds, localGreedyIds, MAX_TOKENS, PROMPT } from "./generate-client.ts";
import { type OperatorProcess, startOperatorProcess } from "./operator-process.ts";
import { prepareServingNamespace } from "./serving-namespace.ts";

const root = path.resolve(import.meta.dirname, "../..");
const example = (name: string) => readFileSync(path.join(root, "examples", name), "utf8");

interface Shard {
  replica: number;
  endpoint?: string;
  ready: boolean;
  entry: boolean;
  revision: string;
  pod: string;
}
interface ModelStatus {
  readyReplicas?: number;
  updatedReplicas?: number;
  revision?: string;
  routerEndpoint?: string;
  shards?: Shard[];
  conditions?: { type: string; status: string; reason: string }[];
}

describe("operator on the dev cluster with kubectl and real workers (e2e)", function () {
  this.timeout(180_000);
  let f: DevClusterFixture;
  let operator: OperatorProcess;
  let modelDir: string;
  let expected: number[];
  const ns = "serving";

  const status = async (name: string): Promise<ModelStatus> =>
    JSON.parse(
      await f.ok("get", "inferencemodel", name, "-n", ns, "-o", "jsonpath={.status}"),
    ) as ModelStatus;
  /** host:port of a ready router pod, from the EndpointSlices of the model's router Service. */
  const routerAddress = async (): Promise<string> => {
    const [address] = await routerAddresses();
    if (address === undefined) throw new Error("no ready router endpoint");
    return address;
  };
  /** host:port of every ready router pod. */
  const routerAddresses = async (): Promise<string[]> => {
    const slices = JSON.parse(
      await f.ok(
        "get",
        "endpointslices",
        "-n",
        ns,
        "-l",
        "kubernetes.io/service-name=tiny-llama-router",
        "-o",
        "json",
      ),
    ) as { items: { endpoints?: EndpointEntry[]; ports?: { name?: string; port?: number }[] }[] };
    const addresses: string[] = [];
    for (const slice of slices.items) {
      const port = slice.ports?.find((p) => p.name === "grpc")?.port;
      for (const e of slice.endpoints ?? [])
        if (port && e.conditions?.ready === true && e.addresses[0])
          addresses.push(`${e.addresses[0]}:${port}`);
    }
    return addresses;
  };
  const tinyModel = (extra = "") =>
    example("dev-cluster/tiny-llama.yaml").replaceAll("/tmp/tessera-models/tiny-llama", modelDir) + extra;

  before(async () => {
    // A copy of its own: the last spec finds this model's worker processes by the folder in their
    // command line, and other specs' shared workers serve the cached checkpoint for the whole run.
    modelDir = path.join(mkdtempSync(path.join(os.tmpdir(), "tessera-operator-serving-")), "tiny-llama");
    cpSync(await tinyCheckpoint(), modelDir, { recursive: true });
    [f, expected] = await Promise.all([startDevClusterFixture("v35"), localGreedyIds(modelDir)]);
    await prepareServingNamespace(f, ns, { workerPool: false });
    operator = await startOperatorProcess(await f.operatorKubeconfig());
  });
  after(async () => {
    operator?.child.kill("SIGTERM");
    await operator?.exited;
    await f?.close();
    if (modelDir) rmSync(path.dirname(modelDir), { recursive: true, force: true });
  });

  it("serves the example: Ready, columns, and Generate gives the greedy tokens of `tessera generate`", async () => {
    await f.ok("apply", "-n", ns, "-f", f.file("pool.yaml", example("dev-cluster/worker-pool.yaml")));
    await f.ok("apply", "-n", ns, "-f", f.file("tiny.yaml", tinyModel()));
    await f.ok("wait", "-n", ns, "--for=condition=Ready", "inferencemodel/tiny-llama", "--timeout=60s");
    const table = await f.ok("get", "inferencemodels", "-n", ns);
    assert.match(table, /^NAME\s+MODEL\s+MODE\s+REPLICAS\s+READY\s+STATUS\s+AGE\n/);
    assert.match(table, /tiny-llama\s+tiny-llama\s+colocated\s+1\s+1\s+ReplicasReady\s+\d+s/);
    const [shard] = (await status("tiny-llama")).shards ?? [];
    assert.ok(shard?.endpoint && shard.ready && shard.entry, JSON.stringify(shard));
    assert.deepEqual(await generateIds(shard.endpoint), expected);
    assert.match(await f.ok("get", "workerpools", "-n", ns), /default\s+1\s+16\s+0\s+1\s+\d+s/);
    assert.equal((await status("tiny-llama")).routerEndpoint, `tiny-llama-router.${ns}.svc:50050`);
    assert.deepEqual(await generateIds(await routerAddress()), expected, "through the router pod");
  });

  it("scales 1 -> 3 with kubectl scale; the router sends traffic to the new shards within a second or so", async () => {
    const router = await routerAddress();
    await f.ok("scale", "-n", ns, "inferencemodel/tiny-llama", "--replicas=3");
    // Distinct prompts and sessions (routing keys, and no response-cache hits) spread over the ring;
    // the router's per-endpoint request counters say which shards took them.
    let shownReady: number | undefined;
    let sent = 0;
    const lag = await eventually(
      "router traffic on all 3 shards",
      async () => {
        const entries = ((await status("tiny-llama")).shards ?? []).filter((x) => x.entry && x.ready);
        if (shownReady === undefined && entries.length === 3) shownReady = Date.now();
        const batch = Array.from({ length: 12 }, () => sent++);
        const outputs = await Promise.all(
          batch.map((n) => generateIds(router, { prompt: `${PROMPT} ${n}`, sessionId: `session-${n}` })),
        );
        assert.ok(outputs.every((ids) => ids.length === MAX_TOKENS));
        if (shownReady === undefined) return undefined;
        const requests = await routerRequests(router);
        return entries.every((e) => (requests.get(e.pod) ?? 0) > 0) && Date.now() - shownReady;
      },
      60_000,
    );
    assert.ok(lag < 3_000, `the router reached every new shard ${lag} ms after status showed it`);
    const shards = (await status("tiny-llama")).shards ?? [];
    assert.deepEqual(
      shards.map((s) => s.replica),
      [0, 1, 2],
    );
    for (const shard of shards) assert.deepEqual(await generateIds(shard.endpoint!), expected, shard.pod);
    assert.deepEqual(await generateIds(router), expected, "through the router");
  });

  it("rolls an engine change out one replica at a time with no failed request, through an operator crash", async () => {
    const before = await status("tiny-llama");
    const patch = JSON.stringify({ spec: { engine: { maxNumSeqs: 16 } } });
    await f.ok("patch", "-n", ns, "inferencemodel/tiny-llama", "--type=merge", "-p", patch);
    let minReady = 3;
    let requests = 0;
    let failures = 0;
    let crashed = false;
    const done = (s: ModelStatus) =>
      s.updatedReplicas === 3 &&
      s.readyReplicas === 3 &&
      s.conditions?.find((c) => c.type === "Progressing")?.status === "False";
    await eventually(
      "rollout done",
      async () => {
        const s = await status("tiny-llama");
        minReady = Math.min(minReady, s.readyReplicas ?? 0);
        if (!crashed && (s.updatedReplicas ?? 0) >= 1) {
          crashed = true;
          operator.child.kill("SIGKILL");
          await operator.exited;
          operator = await startOperatorProcess(await f.operatorKubeconfig());
        }
        const endpoints = (s.shards ?? []).filter((x) => x.ready && x.entry).map((x) => x.endpoint!);
        requests++;
        if (!(await generateWithFailover(endpoints, expected))) failures++;
        return done(s) ? s : undefined;
      },
      120_000,
    );
    assert.ok(crashed, "the operator was killed during the rollout");
    assert.equal(minReady, 3, "the ready replica count never dropped during the rollout");
    assert.equal(failures, 0, `${failures} of ${requests} requests failed`);
    const after = await status("tiny-llama");
    assert.notEqual(after.revision, before.revision);
    const pods = JSON.parse(
      await f.ok("get", "pods", "-n", ns, "-l", "app.kubernetes.io/name=tessera-worker", "-o", "json"),
    ) as {
      items: { metadata: { name: string } }[];
    };
    assert.equal(pods.items.length, 3, pods.items.map((p) => p.metadata.name).join(", "));
    assert.ok(pods.items.every((p) => p.metadata.name.endsWith(after.revision!)));
  });

  it("runs routing.replicas routers active-active: each picks the same shard for a prompt", async () => {
    const patch = JSON.stringify({ spec: { routing: { replicas: 2 } } });
    await f.ok("patch", "-n", ns, "inferencemodel/tiny-llama", "--type=merge", "-p", patch);
    const routers = await eventually("two ready router pods", async () => {
      const addresses = await routerAddresses();
      return addresses.length === 2 && addresses;
    });
    const model = await status("tiny-llama");
    assert.equal(model.conditions?.find((c) => c.type === "Ready")?.status, "True");
    const pdb = await f.ok(
      "get",
      "pdb",
      "tiny-llama-router",
      "-n",
      ns,
      "-o",
      "jsonpath={.spec.maxUnavailable}",
    );
    assert.equal(pdb, "1", "a drain takes at most one router pod at a time");
    // Distinct sessions (routing keys) spread over the 3 shards; one request at a time, so both routers
    // see equal (no) load.
    const picks: string[] = [];
    for (let n = 0; n < 12; n++) {
      const request = { prompt: `${PROMPT} active ${n}`, sessionId: `active-${n}` };
      const [a, b] = [await generate(routers[0]!, request), await generate(routers[1]!, request)];
      const prompt = request.sessionId;
      assert.deepEqual(a.ids, b.ids, prompt);
      assert.ok(a.servedBy !== "", "the router names the shard it used");
      assert.equal(a.servedBy, b.servedBy, `both routers pick the same shard for "${prompt}"`);
      picks.push(a.servedBy);
    }
    assert.ok(new Set(picks).size > 1, `prompts spread over shards: ${picks.join(", ")}`);
  });

  it("rolls only the router on a routing change, which keeps serving and the model Ready", async () => {
    const workers = async () =>
      (
        await f.ok("get", "pods", "-n", ns, "-l", "app.kubernetes.io/name=tessera-worker", "-o", "name")
      ).trim();
    const before = await workers();
    const patch = JSON.stringify({ spec: { routing: { strategy: "round-robin" } } });
    await f.ok("patch", "-n", ns, "inferencemodel/tiny-llama", "--type=merge", "-p", patch);
    await eventually("router template updated", async () =>
      (await f.ok("get", "deployment", "tiny-llama-router", "-n", ns, "-o", "jsonpath={.spec}")).includes(
        "round-robin",
      ),
    );
    await f.ok("rollout", "status", "-n", ns, "deployment/tiny-llama-router", "--timeout=60s");
    const ready = (await status("tiny-llama")).conditions?.find((c) => c.type === "Ready");
    assert.equal(ready?.status, "True");
    assert.equal(await workers(), before, "no worker pod replaced");
    const router = await eventually("the new router pod", async () => {
      const address = await routerAddress();
      const [ip = ""] = address.split(":");
      const pods = await f.ok("get", "pods", "-n", ns, "-o", "jsonpath={.items[*].status.podIP}");
      return pods.split(" ").includes(ip) && address;
    });
    assert.deepEqual(await generateIds(router), expected);
  });

  it("authenticates callers with the keys of routing.apiKeysSecret, on every router pod, and follows a rotation", async () => {
    const keys = "keys:\n  - {name: team-a, key: sk-team-a-0001, requestsPerSecond: 50}\n";
    const secret = `apiVersion: v1\nkind: Secret\nmetadata: {name: router-keys}\nstringData:\n  api-keys.yaml: ${JSON.stringify(keys)}\n`;
    await f.ok("apply", "-n", ns, "-f", f.file("router-keys.yaml", secret));
    const roll = async (apiKeysSecret: unknown, mounted: boolean) => {
      const patch = JSON.stringify({ spec: { routing: { apiKeysSecret } } });
      await f.ok("patch", "-n", ns, "inferencemodel/tiny-llama", "--type=merge", "-p", patch);
      await eventually("router template updated", async () => {
        const template = await f.ok(
          "get",
          "deployment",
          "tiny-llama-router",
          "-n",
          ns,
          "-o",
          "jsonpath={.spec}",
        );
        return template.includes("router-keys") === mounted;
      });
      await f.ok("rollout", "status", "-n", ns, "deployment/tiny-llama-router", "--timeout=60s");
      return eventually("two ready router pods", async () => {
        const addresses = await routerAddresses();
        return addresses.length === 2 && addresses;
      });
    };
    const routers = await roll({ name: "router-keys" }, true);
    for (const router of routers) {
      await assert.rejects(generate(router), (err: { code?: number; details?: string }) => {
        assert.equal(err.code, 16, "UNAUTHENTICATED");
        assert.match(err.details ?? "", /API key is required/);
        return true;
      });
      await assert.rejects(generate(router, { apiKey: "sk-wrong-0001" }), { code: 16 });
      assert.deepEqual((await generate(router, { apiKey: "sk-team-a-0001" })).ids, expected);
    }
    // Rotation without a restart: the kubelet rewrites the mounted file from the Secret's new version
    // and each router's next reload of it (admission.apiKeysReloadMs) puts the new keys in force.
    const rotated = "keys:\n  - {name: team-b, key: sk-team-b-0002, requestsPerSecond: 50}\n";
    const secretB = `apiVersion: v1\nkind: Secret\nmetadata: {name: router-keys}\nstringData:\n  api-keys.yaml: ${JSON.stringify(rotated)}\n`;
    await f.ok("apply", "-n", ns, "-f", f.file("router-keys-rotated.yaml", secretB));
    for (const router of routers) {
      await eventually(
        `${router} refuses the rotated-out key`,
        async () => {
          await delay(250);
          return generate(router, { apiKey: "sk-team-a-0001" }).then(
            () => false,
            (err: { code?: number }) => err.code === 16,
          );
        },
        45_000,
      );
      assert.deepEqual((await generate(router, { apiKey: "sk-team-b-0002" })).ids, expected);
    }
    assert.deepEqual(await routerAddresses(), routers, "the same router pods, not restarted ones");
    // Open again for the tests after this one.
    const open = await roll(null, false);
    assert.deepEqual(await generateIds(open[0]!), expected);
  });

  it("stops reconciling once converged", async () => {
    await f.ok(
      "wait",
      "-n",
      ns,
      "--for=condition=Progressing=False",
      "inferencemodel/tiny-llama",
      "--timeout=30s",
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const first = await operator.reconciles("inferencemodel");
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal(await operator.reconciles("inferencemodel"), first);
  });

  it("rejects invalid manifests, naming the field (kubectl 1.31 and 1.35)", async () => {
    const bad = f.file(
      "bad.yaml",
      tinyModel().replace("replicas: 1", "replicas: 1\n  parallelism: {tensor: 3}"),
    );
    const rejected = await f.kubectl("apply", "-n", ns, "-f", bad);
    assert.notEqual(rejected.code, 0);
    assert.match(rejected.stderr, /spec\.parallelism\.tensor: Invalid value: 3: must be a power of two/);
    const disagg = f.file(
      "disagg.yaml",
      tinyModel().replace("replicas: 1", "replicas: 1\n  serving: {mode: disaggregated}"),
    );
    const env = { PATH: process.env["PATH"] ?? "", HOME: f.dir, KUBECONFIG: f.kubeconfig };
    const v31 = await runClient(clientBinaries("v31").kubectl, ["apply", "-n", ns, "-f", disagg], env, f.dir);
    assert.notEqual(v31.code, 0);
    assert.match(
      v31.stderr,
      /spec\.kvTransfer\.redis: Required value: disaggregated serving needs a KV transfer store/,
    );
  });

  it("accepts every example as it is (server-side dry run)", async () => {
    for (const dir of ["dev-cluster", "kubernetes"])
      await f.ok("apply", "-n", ns, "--dry-run=server", "-f", path.join(root, "examples", dir));
  });

  it("deletes the model: its pods and worker processes go, and its Redis keys (the routers' shared cache too)", async () => {
    const redis = await RedisServer.start({ password: "pw" });
    const connection = await RespConnection.connect("127.0.0.1", redis.port, 5_000);
    await connection.command("AUTH", "pw");
    try {
      const secret = f.file(
        "secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: kv}\nstringData: {password: pw}\n",
      );
      await f.ok("apply", "-n", ns, "-f", secret);
      const kv = `\n  kvTransfer:\n    redis:\n      address: 127.0.0.1:${redis.port}\n      passwordSecret: {name: kv}\n`;
      const before = (await status("tiny-llama")).revision;
      await f.ok("apply", "-n", ns, "-f", f.file("tiny.yaml", tinyModel(kv)));
      const restarted = async () => {
        const s = await status("tiny-llama");
        return (
          s.revision !== before && s.conditions?.find((c) => c.type === "Progressing")?.status === "False"
        );
      };
      await eventually("pods restarted with the KV store", restarted, 60_000);
      // The two router pods now share their response cache in the KV store, under the model's prefix:
      // a greedy request one of them answered is a hit on the other.
      await f.ok("rollout", "status", "-n", ns, "deployment/tiny-llama-router", "--timeout=60s");
      const [a = "", b = ""] = await eventually("two ready router pods", async () => {
        const addresses = await routerAddresses();
        return addresses.length === 2 && addresses;
      });
      const first = await generate(a, { prompt: `${PROMPT} shared` });
      assert.equal(first.cache, "miss");
      // The first router stores the answer once its stream has ended: give the write a moment.
      const second = await eventually("a hit on the other router", async () => {
        const answer = await generate(b, { prompt: `${PROMPT} shared` });
        return answer.cache === "hit" && answer;
      });
      assert.deepEqual(second.ids, first.ids);
      const cached = await connection.command("KEYS", `tessera:kv:${ns}:tiny-llama:router-cache:*`);
      assert.equal((cached as string[]).length, 1, JSON.stringify(cached));
      await connection.command("SET", `tessera:kv:${ns}:tiny-llama:tiny-llama@r:0-2:abc`, "block");
      await connection.command("SET", `tessera:kv:${ns}:other:tiny-llama@r:0-2:abc`, "block");
      await f.ok("delete", "-n", ns, "inferencemodel/tiny-llama", "--timeout=60s");
      const left = (kind: string) => f.ok("get", kind, "-n", ns, "-o", "name");
      const workers = ["pods", "-l", "app.kubernetes.io/name=tessera-worker"];
      assert.match(await f.ok("get", ...workers, "-n", ns, "-o", "name"), /^$/);
      await eventually("the router's objects gone with the model", async () => {
        const names = await left(
          "deployments,services,serviceaccounts,roles,rolebindings,poddisruptionbudgets,pods",
        );
        return !/tiny-llama/.test(names);
      });
      assert.deepEqual(await connection.command("KEYS", "*"), [
        `tessera:kv:${ns}:other:tiny-llama@r:0-2:abc`,
      ]);
      // A worker drains for up to its pod's grace period (45 s, pod-template.ts) before the kubelet kills it.
      await eventually("worker processes gone", () => processesWith(modelDir).length === 0, 60_000);
    } finally {
      connection.close();
      await redis.close();
    }
  });
});

interface EndpointEntry {
  addresses: string[];
  conditions?: { ready?: boolean };
}

/** The router's tessera_router_endpoint_requests_total summed per endpoint (pod name). */
async function routerRequests(router: string): Promise<Map<string, number>> {
  const [ip = ""] = router.split(":");
  const text = await httpGet(ip, 9090, "/metrics");
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^tessera_router_endpoint_requests_total\{([^}]*)\} (\d+)/gm)) {
    const endpoint = /endpoint="([^"]*)"/.exec(m[1] ?? "")?.[1] ?? "";
    counts.set(endpoint, (counts.get(endpoint) ?? 0) + Number(m[2]));
  }
  return counts;
}

/** What the router does: a request that fails before its first token goes to another replica. */
async function generateWithFailover(endpoints: string[], expected: number[]): Promise<boolean> {
  for (const endpoint of endpoints) {
    try {
      const ids = await generateIds(endpoint);
      return ids.join(",") === expected.join(",");
    } catch {}
  }
  return false;
}
