// examples/README.md on the dev cluster, as a newcomer follows it: its walkthrough block runs as written
// in bash (real kubectl, `npx tessera model create`, `npx tessera operator &` on the host with its
// default ports, then a request through the model's router pod with curl), the checkpoint in the
// README's folder too (/tmp/tessera-models/tiny-llama: the manifest names it; `model create` rewrites it
// the same, seed 1). Only the dev cluster is the test's own (the README starts it with `tessera dev up`).
// Then a router pod whose HTTP port is taken, as the operator on the host once took it: its container
// exits with the one line, the kubelet restarts it, and `kubectl get pods` shows the restarts.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { clientBinaries } from "../devcluster/client-binaries.ts";
import { type DevClusterFixture, eventually, startDevClusterFixture } from "../devcluster/kubelet-fixture.ts";

const root = path.resolve(import.meta.dirname, "../..");
const README_MODEL = "/tmp/tessera-models/tiny-llama";

/** The README's walkthrough: the sh block that starts the operator. */
function walkthrough(): string {
  const readme = readFileSync(path.join(root, "examples/README.md"), "utf8");
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? "")
    .find((b) => b.includes("npx tessera operator &"));
  if (block === undefined)
    throw new Error("examples/README.md has no walkthrough with `npx tessera operator &`");
  return block;
}

describe("examples/README.md on the dev cluster, as written (e2e)", function () {
  this.timeout(240_000);
  let f: DevClusterFixture;
  let script: ChildProcess | undefined;
  let output = "";

  before(async () => {
    f = await startDevClusterFixture("v35");
  });
  after(async () => {
    // The script's background operator stays in the script's process group: stop it with the group.
    if (script?.pid !== undefined) {
      try {
        process.kill(-script.pid, "SIGTERM");
      } catch {}
    }
    await f?.close();
  });

  /** What a user would look at when the walkthrough stops: pods, the model's status, pod logs. */
  const diagnostics = async () => {
    const runs = [
      await f.kubectl("get", "pods", "-o", "wide"),
      await f.kubectl("get", "inferencemodel", "tiny-llama", "-o", "jsonpath={.status}"),
    ];
    for (const pod of (await f.kubectl("get", "pods", "-o", "name")).stdout.trim().split("\n"))
      if (pod) runs.push(await f.kubectl("logs", pod, "--all-containers", "--tail", "20"));
    return runs.map((r) => r.stdout + r.stderr).join("\n");
  };

  it("runs the walkthrough: the model turns Ready and the router pod answers curl", async () => {
    const { kubectl } = clientBinaries("v35");
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: [path.join(root, "node_modules/.bin"), path.dirname(kubectl), process.env["PATH"]].join(":"),
      KUBECONFIG: f.kubeconfig,
      KUBECACHEDIR: path.join(f.dir, "kube-cache"),
    };
    delete env["KUBERNETES_SERVICE_HOST"]; // the operator runs on the host, out of cluster
    script = spawn("bash", ["-euo", "pipefail", "-c", walkthrough()], { cwd: root, env, detached: true });
    script.stdout?.on("data", (chunk: Buffer) => (output += chunk));
    script.stderr?.on("data", (chunk: Buffer) => (output += chunk));
    // "exit", not "close": the operator left running in the background keeps the pipes open.
    const [code] = (await once(script, "exit")) as [number | null];
    assert.equal(code, 0, `${output}\n${await diagnostics()}`);
    // curl's answer, which ends without a newline (so does the jsonpath line before it).
    const answer = /\{"id":"cmpl-.*?"usage":\{[^}]*\}\}/.exec(output)?.[0];
    assert.ok(answer, `curl printed no completion:\n${output}`);
    const completion = JSON.parse(answer) as {
      model: string;
      choices: { text: string; finish_reason: string }[];
      usage: { completion_tokens: number };
    };
    assert.equal(completion.model, "tiny-llama");
    // The curl sets no temperature, so it samples (OpenAI's temperature 1): the model may end early.
    const finish = completion.choices[0]?.finish_reason;
    const tokens = completion.usage.completion_tokens;
    assert.ok(
      (finish === "length" && tokens === 8) || (finish === "stop" && tokens >= 1 && tokens < 8),
      `max_tokens 8: ${tokens} tokens, finish_reason ${finish}`,
    );
    assert.equal(typeof completion.choices[0]?.text, "string");
    const restarts = await f.ok(
      "get",
      "pods",
      "-l",
      "serving.tessera.dev/router=tiny-llama",
      "-o",
      "jsonpath={.items[*].status.containerStatuses[*].restartCount}",
    );
    assert.equal(restarts.trim(), "0", "the router pod started once: the operator left its ports free");
  });

  it("a router pod whose HTTP port is taken exits with the line, restarts, and kubectl shows it", async () => {
    // What the operator on the host did when it bound 0.0.0.0: take the port on every pod address.
    const taken = net.createServer().listen(0, "0.0.0.0");
    await once(taken, "listening");
    const { port } = taken.address() as net.AddressInfo;
    try {
      const endpoints = f.file("endpoints.yaml", "endpoints: []\n");
      const config = JSON.stringify({
        grpcPort: 0,
        httpPort: port,
        models: [{ id: "tiny-llama", tokenizer: README_MODEL }],
        discovery: { type: "static", file: endpoints },
      });
      const main = path.join(root, "services/cli/main.ts");
      const pod = `apiVersion: v1
kind: Pod
metadata: {name: blocked-router}
spec:
  containers:
    - name: router
      image: tessera
      command: [node, ${main}, router, --config-json, '${config}', --host, $(POD_IP)]
      env:
        - name: POD_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
`;
      await f.ok("apply", "-f", f.file("blocked-router.yaml", pod));
      const restarts = await eventually(
        "a restart counted by kubectl",
        async () => {
          const row = (await f.ok("get", "pods", "blocked-router", "--no-headers")).trim().split(/\s+/);
          const count = Number(row[3]); // NAME READY STATUS RESTARTS AGE
          return count >= 1 && count;
        },
        60_000,
      );
      assert.ok(restarts >= 1);
      const ip = f.pod("blocked-router").status?.podIP ?? "";
      const previous = (await f.ok("logs", "blocked-router", "--previous")).trim().split("\n");
      assert.equal(
        previous.at(-1),
        `tessera router: cannot listen on ${ip}:${port} (httpPort): address in use`,
      );
      const status = f.pod("blocked-router").status?.containerStatuses?.[0];
      const exitCode = status?.lastState?.terminated?.exitCode;
      assert.equal(exitCode, 1, JSON.stringify(status));
    } finally {
      taken.close();
    }
  });
});
