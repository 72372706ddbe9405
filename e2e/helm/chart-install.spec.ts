// The chart installed with real helm into the dev cluster (API server, scheduler, process kubelet):
// 2 operator replicas electing a leader, Redis with its Secret, the default WorkerPool; an example
// InferenceModel applied with kubectl serves requests; `helm upgrade` adds the router, which serves
// the model over HTTP and gRPC; after the model is deleted, `helm uninstall` leaves no object of the
// release and no process behind (the CRDs stay, as Helm keeps a chart's crds/).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Redis } from "ioredis";
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { tinyCheckpoint } from "../checkpoint.ts";
import {
  type DevClusterFixture,
  eventually,
  processesWith,
  startDevClusterFixture,
} from "../devcluster/kubelet-fixture.ts";
import { generateIds, MAX_TOKENS } from "../operator/generate-client.ts";
import { CHART, DEV_VALUES, ROOT } from "./chart-tool.ts";

const NS = "tessera-system";
const RELEASE_LABEL = "app.kubernetes.io/instance=tessera";

interface Item {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  status?: Record<string, unknown>;
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

describe("the chart on the dev cluster with helm and kubectl (e2e)", function () {
  this.timeout(120_000);
  let f: DevClusterFixture;
  let modelDir: string;
  let podPrefix: string;
  const base = [
    "-n",
    NS,
    "-f",
    DEV_VALUES,
    "--set",
    "operator.replicas=2,redis.enabled=true",
    "--wait",
    "--timeout",
    "60s",
  ];

  const helm = async (...args: string[]) => {
    const run = await f.helm(...args);
    assert.equal(run.code, 0, `helm ${args.join(" ")}:\n${run.stderr}`);
    return run.stdout;
  };
  const items = async (resource: string, ...flags: string[]) =>
    (JSON.parse(await f.ok("get", resource, "-n", NS, "-o", "json", ...flags)) as { items: Item[] }).items;
  const podIp = async (selector: string) =>
    (await items("pods", "-l", selector)).map((p) => String(p.status?.["podIP"]))[0] ?? "";
  const redisPassword = async () => {
    const [secret] = await items("secrets", "-l", RELEASE_LABEL);
    return Buffer.from(secret?.data?.["password"] ?? "", "base64").toString();
  };

  before(async () => {
    [modelDir, f] = await Promise.all([tinyCheckpoint(), startDevClusterFixture("v35")]);
    podPrefix = f.podCidr.replace(/0\.0\/16$/, "");
  });
  after(async () => {
    await f?.close();
  });

  it("installs: 2 operator replicas Ready with one holding the Lease, Redis serving with the Secret's password, the default WorkerPool", async () => {
    const notes = await helm("install", "tessera", CHART, "--create-namespace", ...base);
    assert.match(notes, /KV transfer store[\s\S]*address: tessera-redis\.tessera-system\.svc:6379/);
    const [operator] = await items("deployments", "-l", "app.kubernetes.io/component=operator");
    assert.equal(operator?.status?.["readyReplicas"], 2);
    const lease = JSON.parse(await f.ok("get", "lease", "tessera-operator", "-n", NS, "-o", "json")) as Item;
    assert.ok(String(lease.spec?.["holderIdentity"]).length > 0, "an operator replica leads");
    assert.equal(lease.metadata.labels?.["app.kubernetes.io/instance"], "tessera");

    const password = await redisPassword();
    assert.equal(password.length, 32);
    const redis = new Redis({
      host: await podIp("app.kubernetes.io/component=redis"),
      port: 6379,
      password,
      lazyConnect: true,
    });
    try {
      await redis.connect();
      assert.equal(await redis.ping(), "PONG");
    } finally {
      redis.disconnect();
    }
    assert.match(await f.ok("get", "workerpools", "-n", NS), /default\s+0\s+16\s/);
  });

  it("serves an example InferenceModel applied with kubectl", async () => {
    const example = readFileSync(path.join(ROOT, "examples/dev-cluster/tiny-llama.yaml"), "utf8");
    await f.ok(
      "apply",
      "-n",
      NS,
      "-f",
      f.file("tiny.yaml", example.replaceAll("/tmp/tessera-models/tiny-llama", modelDir)),
    );
    await f.ok("wait", "-n", NS, "--for=condition=Ready", "inferencemodel/tiny-llama", "--timeout=60s");
    const endpoint = await workerEndpoint();
    assert.equal((await generateIds(endpoint)).length, MAX_TOKENS);
  });

  const workerEndpoint = async () => {
    const status = JSON.parse(
      await f.ok("get", "inferencemodel", "tiny-llama", "-n", NS, "-o", "jsonpath={.status}"),
    ) as {
      shards: { endpoint: string; pod: string }[];
    };
    return status.shards[0]?.endpoint ?? "";
  };

  it("upgrades: the router joins and serves the model over HTTP and gRPC; the Redis password is kept", async () => {
    const password = await redisPassword();
    const endpoint = await workerEndpoint();
    await helm(
      "upgrade",
      "tessera",
      CHART,
      ...base,
      "--set",
      "router.enabled=true",
      "--set-json",
      `router.models=[{"id":"tiny-llama","tokenizer":${JSON.stringify(modelDir)}}]`,
      "--set-json",
      `router.discovery={"type":"static","endpoints":[{"name":"tiny-llama-0","address":"${endpoint}"}]}`,
    );
    const history = JSON.parse(await helm("history", "tessera", "-n", NS, "-o", "json")) as {
      status: string;
    }[];
    assert.deepEqual(
      history.map((h) => h.status),
      ["superseded", "deployed"],
    );
    assert.equal(await redisPassword(), password);

    const router = await podIp("app.kubernetes.io/component=router");
    const response = await fetch(`http://${router}:8080/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "tiny-llama",
        prompt: "Once upon a time",
        max_tokens: 5,
        ignore_eos: true,
      }),
    });
    assert.equal(response.status, 200);
    const completion = (await response.json()) as { usage: { completion_tokens: number } };
    assert.equal(completion.usage.completion_tokens, 5);
    assert.equal((await generateIds(`${router}:50050`)).length, MAX_TOKENS);
    const client = new GrpcClient(`${router}:50050`);
    try {
      const models = await client.unary(Inference.method.listModels, {});
      assert.deepEqual(
        models.models.map((m) => m.id),
        ["tiny-llama"],
      );
    } finally {
      client.close();
    }
  });

  it("uninstalls after the model is deleted: no object of the release, no pod, no process left; the CRDs stay", async () => {
    await f.ok("delete", "inferencemodel", "tiny-llama", "-n", NS, "--wait", "--timeout=60s");
    await helm("uninstall", "tessera", "-n", NS, "--wait", "--timeout", "60s");
    const kinds =
      "deployments,statefulsets,replicasets,pods,services,configmaps,secrets,serviceaccounts,roles,rolebindings,leases,workerpools";
    await eventually("every pod gone", async () => (await items("pods")).length === 0);
    assert.deepEqual(
      (await items(kinds, "-l", RELEASE_LABEL)).map((o) => `${o.kind}/${o.metadata.name}`),
      [],
    );
    assert.deepEqual(
      (await items("secrets,configmaps"))
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .filter((n) => !n.endsWith("kube-root-ca.crt")),
      [],
      "no release record or dashboard left",
    );
    assert.equal((await items("roles,rolebindings,leases,workerpools,inferencemodels")).length, 0);
    assert.deepEqual(
      await eventually("no process left", () => processesWith(podPrefix).length === 0 && []),
      [],
    );
    assert.match(await f.ok("get", "crds"), /inferencemodels\.serving\.tessera\.dev/);
  });
});
