import assert from "node:assert/strict";
import { type DevCluster, startDevCluster } from "../../operator/testing/dev-cluster.ts";
import { createLogger } from "../kernel/log.ts";
import { ManualClock } from "../kernel/manual-clock.ts";
import type { KubeClient } from "./kube-client.ts";
import type { KubeObject } from "./kube-object.ts";
import { DEFAULT_LEASE_TIMING, LeaderElector } from "./leader-election.ts";
import { LEASES } from "./resources.ts";

const log = createLogger("leader-election-spec", "silent");

describe("leader election on a Lease", () => {
  let cluster: DevCluster;
  let client: KubeClient;
  let clock: ManualClock;
  let lease = 0;
  const elector = (identity: string, c: KubeClient = client) =>
    new LeaderElector(
      c,
      { namespace: "default", name: `lease-${lease}`, identity, ...DEFAULT_LEASE_TIMING },
      { clock, log },
    );
  const holder = async () =>
    (await client.get<KubeObject & { spec: { holderIdentity: string } }>(LEASES, "default", `lease-${lease}`))
      ?.spec.holderIdentity;

  before(async () => {
    cluster = await startDevCluster({ crds: false });
    client = cluster.client();
  });
  after(() => cluster.close());
  beforeEach(() => {
    clock = new ManualClock();
    lease++;
  });

  it("lets one candidate hold the lease while it renews", async () => {
    const a = elector("a");
    const b = elector("b");
    assert.equal(await a.tryAcquireOrRenew(), true);
    assert.equal(await b.tryAcquireOrRenew(), false);
    await clock.advance(10_000);
    assert.equal(await a.tryAcquireOrRenew(), true);
    await clock.advance(10_000);
    assert.equal(await b.tryAcquireOrRenew(), false, "a renewed 10 s ago: the lease has not expired");
    assert.equal(await holder(), "a");
  });

  it("hands the lease over once the holder stopped renewing for the lease duration", async () => {
    const a = elector("a");
    const b = elector("b");
    assert.equal(await a.tryAcquireOrRenew(), true);
    assert.equal(await b.tryAcquireOrRenew(), false);
    await clock.advance(14_999);
    assert.equal(await b.tryAcquireOrRenew(), false);
    await clock.advance(1);
    assert.equal(await b.tryAcquireOrRenew(), true);
    const spec = (
      await client.get<KubeObject & { spec: { leaseTransitions: number } }>(
        LEASES,
        "default",
        `lease-${lease}`,
      )
    )?.spec;
    assert.equal(spec?.leaseTransitions, 1);
    assert.equal(await a.tryAcquireOrRenew(), false);
  });

  it("runs the leader's work, and releases the lease when stopped so a standby takes over at once", async () => {
    const a = elector("a");
    const stop = new AbortController();
    const events: string[] = [];
    const running = a.run(
      stop.signal,
      () => events.push("started"),
      () => events.push("stopped"),
    );
    while (!a.isLeader) await new Promise((r) => setTimeout(r, 1));
    assert.deepEqual(events, ["started"]);
    stop.abort();
    await running;
    assert.deepEqual(events, ["started", "stopped"]);
    assert.equal(await holder(), "");
    assert.equal(await elector("b").tryAcquireOrRenew(), true);
  });

  it("stops leading when it cannot renew within the renew deadline", async () => {
    let failing = false;
    const flaky = new Proxy(client, {
      get: (target, prop) =>
        prop === "update" && failing
          ? () => Promise.reject(new Error("connection refused"))
          : (target[prop as keyof KubeClient] as (...args: unknown[]) => unknown).bind(target),
    });
    const a = elector("a", flaky);
    const events: string[] = [];
    const running = a.run(
      new AbortController().signal,
      () => events.push("started"),
      () => events.push("stopped"),
    );
    while (!a.isLeader) await new Promise((r) => setTimeout(r, 1));
    failing = true;
    for (let t = 0; t < 200 && events.length < 2; t++) {
      await clock.advance(2_000);
      await new Promise((r) => setTimeout(r, 5));
    }
    await running;
    assert.deepEqual(events, ["started", "stopped"]);
    assert.equal(a.isLeader, false);
  });
});
