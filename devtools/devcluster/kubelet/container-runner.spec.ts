import assert from "node:assert/strict";
import os from "node:os";
import { ManualClock } from "../../../services/kernel/manual-clock.ts";
import type { Container, RestartPolicy } from "../objects/pod-types.ts";
import { ContainerRunner, type ContainerRunnerDeps } from "./container-runner.ts";
import { FakeLauncher, flush } from "./fake-launcher.ts";
import type { ProbeOutcome } from "./probe-check.ts";

function setup(
  container: Partial<Container>,
  options: { restartPolicy?: RestartPolicy; init?: boolean } = {},
) {
  const clock = new ManualClock();
  const fake = new FakeLauncher();
  const events: string[] = [];
  const probeResults = new Map<string, boolean>();
  let prepareError: string | undefined;
  const deps: ContainerRunnerDeps = {
    clock,
    launcher: fake.launcher,
    checker: async (probe): Promise<ProbeOutcome> => {
      const key = probe.httpGet?.path ?? "";
      const ok = probeResults.get(key) ?? true;
      return { ok, message: ok ? "" : `${key} failed` };
    },
    backoff: { initialMs: 10_000, maxMs: 40_000, resetAfterMs: 600_000 },
    configRetryMs: 2_000,
    maxLogLines: 100,
    restartPolicy: options.restartPolicy ?? "Always",
    init: options.init ?? false,
    podIP: "127.1.0.2",
    graceSeconds: 30,
    prepare: () =>
      prepareError
        ? { error: new Error(prepareError) as never }
        : { value: { command: "node", args: ["app.js"], env: {}, cwd: os.tmpdir() } },
    onChange: () => {},
    event: (_type, reason, message) => events.push(`${reason}: ${message}`),
  };
  const runner = new ContainerRunner({ name: "app", image: "img:1", ...container }, deps);
  const advance = async (ms: number) => {
    await flush();
    await clock.advance(ms);
    await flush();
  };
  return {
    runner,
    fake,
    events,
    probeResults,
    advance,
    failPrepare: (message: string | undefined) => (prepareError = message),
  };
}

describe("container-runner", () => {
  it("reports running, then restarts a crashed container at once and then with back-off", async () => {
    const { runner, fake, events, advance } = setup({});
    runner.start();
    assert.deepEqual(Object.keys(runner.status().state), ["running"]);
    assert.equal(runner.ready, true);
    assert.equal(runner.status().containerID, `process://${fake.latest()?.pid}`);
    fake.latest()?.exit(1);
    await advance(0);
    assert.equal(runner.status().restartCount, 1);
    assert.deepEqual(runner.status().lastState.terminated?.exitCode, 1);
    fake.latest()?.exit(2);
    await flush();
    const status = runner.status();
    assert.equal(status.state.waiting?.reason, "CrashLoopBackOff");
    assert.match(status.state.waiting?.message ?? "", /back-off 10s restarting failed container=app/);
    assert.equal(status.lastState.terminated?.exitCode, 2);
    await advance(9_999);
    assert.equal(fake.processes.length, 2);
    await advance(1);
    assert.equal(fake.processes.length, 3);
    assert.equal(runner.status().restartCount, 2);
    assert.ok(events.includes("BackOff: Back-off restarting failed container app"));
  });

  it("keeps the previous instance's log for --previous", async () => {
    const { runner, fake, advance } = setup({});
    runner.start();
    fake.latest()?.print("first run\n");
    fake.latest()?.exit(1);
    await advance(0);
    fake.latest()?.print("second run\n");
    assert.equal(runner.logs.previous?.read(), "first run\n");
    assert.equal(runner.logs.current?.read(), "second run\n");
  });

  it("does not restart a container that succeeded under OnFailure, nor anything under Never", async () => {
    const onFailure = setup({}, { restartPolicy: "OnFailure" });
    onFailure.runner.start();
    onFailure.fake.latest()?.exit(0);
    await onFailure.advance(0);
    assert.equal(onFailure.runner.finished, true);
    assert.equal(onFailure.runner.status().state.terminated?.reason, "Completed");
    const never = setup({}, { restartPolicy: "Never" });
    never.runner.start();
    never.fake.latest()?.exit(3);
    await never.advance(60_000);
    assert.equal(never.fake.processes.length, 1);
    assert.equal(never.runner.status().state.terminated?.exitCode, 3);
  });

  it("is ready only after its readiness probe passes", async () => {
    const { runner, probeResults, advance } = setup({
      readinessProbe: { httpGet: { path: "/ready", port: 80 }, periodSeconds: 1 },
    });
    probeResults.set("/ready", false);
    runner.start();
    await advance(0);
    assert.equal(runner.ready, false);
    probeResults.set("/ready", true);
    await advance(1_000);
    assert.equal(runner.ready, true);
    assert.equal(runner.status().ready, true);
  });

  it("kills and restarts a container whose liveness probe fails, SIGKILL after the probe's grace", async () => {
    const { runner, fake, events, probeResults, advance } = setup({
      livenessProbe: {
        httpGet: { path: "/healthz", port: 80 },
        periodSeconds: 1,
        failureThreshold: 2,
        terminationGracePeriodSeconds: 5,
      },
    });
    runner.start();
    const first = fake.latest();
    assert.ok(first);
    first.ignoreTerm = true;
    probeResults.set("/healthz", false);
    await advance(0);
    await advance(1_000);
    assert.deepEqual(first.signals, ["SIGTERM"]);
    assert.ok(events.includes("Killing: Container app failed liveness probe, will be restarted"));
    assert.ok(events.some((e) => e.startsWith("Unhealthy: Liveness probe failed: /healthz failed")));
    await advance(5_000);
    assert.deepEqual(first.signals, ["SIGTERM", "SIGKILL"]);
    probeResults.set("/healthz", true);
    await advance(0);
    assert.equal(fake.processes.length, 2);
    assert.equal(runner.status().restartCount, 1);
    assert.equal(runner.status().lastState.terminated?.exitCode, 137);
  });

  it("gates liveness and readiness on the startup probe", async () => {
    const { runner, fake, probeResults, advance } = setup({
      startupProbe: { httpGet: { path: "/started", port: 80 }, periodSeconds: 1, failureThreshold: 30 },
      readinessProbe: { httpGet: { path: "/ready", port: 80 }, periodSeconds: 1 },
    });
    probeResults.set("/started", false);
    runner.start();
    await advance(0);
    await advance(1_000);
    assert.equal(runner.status().started, false);
    assert.equal(runner.ready, false);
    probeResults.set("/started", true);
    await advance(1_000);
    assert.equal(runner.status().started, true);
    await advance(0);
    assert.equal(runner.ready, true);
    probeResults.set("/started", false);
    await advance(60_000);
    assert.equal(fake.processes.length, 1, "the startup probe stops once it passed");
  });

  it("stops with SIGTERM and SIGKILL after the grace period, and does not restart", async () => {
    const { runner, fake, advance } = setup({});
    runner.start();
    const proc = fake.latest();
    assert.ok(proc);
    proc.ignoreTerm = true;
    let stopped = false;
    void runner.stop(2_000).then(() => (stopped = true));
    await advance(1_999);
    assert.equal(stopped, false);
    await advance(1);
    assert.equal(stopped, true);
    assert.deepEqual(proc.signals, ["SIGTERM", "SIGKILL"]);
    await advance(60_000);
    assert.equal(fake.processes.length, 1);
    assert.equal(runner.finished, true);
  });

  it("waits with CreateContainerConfigError while its config cannot be prepared, and retries", async () => {
    const { runner, fake, failPrepare, advance } = setup({});
    failPrepare('configmap "cfg" not found');
    runner.start();
    assert.deepEqual(runner.status().state, {
      waiting: { reason: "CreateContainerConfigError", message: 'configmap "cfg" not found' },
    });
    failPrepare(undefined);
    await advance(2_000);
    assert.equal(fake.processes.length, 1);
    assert.equal(runner.running, true);
  });

  it("restarts an init container only when it fails", async () => {
    const { runner, fake, advance } = setup({}, { init: true, restartPolicy: "Always" });
    runner.start();
    fake.latest()?.exit(1);
    await advance(0);
    assert.equal(fake.processes.length, 2);
    fake.latest()?.exit(0);
    await advance(60_000);
    assert.equal(fake.processes.length, 2);
    assert.equal(runner.finished, true);
  });
});
