// Leader election on a coordination.k8s.io Lease, as client-go does it. A candidate takes the
// lease when it is free or its holder let it expire (no renewal seen for leaseDuration by our own
// clock, so clock skew between machines does not matter), then renews it every retryPeriod. A
// leader that cannot renew within renewDeadline stops leading (its controllers stop) before
// another candidate can take over. Writes carry the lease's resourceVersion, so two candidates
// racing for it cannot both win (409).

import { type Clock, sleep } from "../kernel/clock.ts";
import type { Logger } from "../kernel/log.ts";
import { isConflict } from "./api-error.ts";
import type { KubeClient } from "./kube-client.ts";
import type { KubeObject } from "./kube-object.ts";
import { formatMicroTime } from "./kube-time.ts";
import { LEASES } from "./resources.ts";

export interface LeaderElectionConfig {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export const DEFAULT_LEASE_TIMING = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

type Lease = KubeObject & { spec?: LeaseSpec };

export class LeaderElector {
  readonly #client: KubeClient;
  readonly #config: LeaderElectionConfig;
  readonly #clock: Clock;
  readonly #log: Logger;
  /** The last lease record seen and when we saw it change (our clock). */
  #observed: { record: string; at: number } | undefined;
  #leading = false;

  constructor(client: KubeClient, config: LeaderElectionConfig, deps: { clock: Clock; log: Logger }) {
    this.#client = client;
    this.#config = config;
    this.#clock = deps.clock;
    this.#log = deps.log;
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /**
   * Campaigns until leading, calls onStartedLeading, renews until renewal fails past the deadline
   * or signal aborts (then releases the lease), and resolves after onStoppedLeading.
   */
  async run(signal: AbortSignal, onStartedLeading: () => void, onStoppedLeading: () => void): Promise<void> {
    while (!signal.aborted && !(await this.tryAcquireOrRenew()))
      await sleep(this.#clock, this.#config.retryPeriodMs, signal);
    if (signal.aborted) return;
    this.#leading = true;
    this.#log.info({ lease: this.#config.name, identity: this.#config.identity }, "became leader");
    onStartedLeading();
    let lastRenew = this.#clock.now();
    while (!signal.aborted) {
      await sleep(this.#clock, this.#config.retryPeriodMs, signal);
      if (signal.aborted) break;
      if (await this.tryAcquireOrRenew()) lastRenew = this.#clock.now();
      else if (this.#clock.now() - lastRenew >= this.#config.renewDeadlineMs) break;
    }
    this.#leading = false;
    if (signal.aborted) await this.#release();
    this.#log.info({ lease: this.#config.name, identity: this.#config.identity }, "stopped leading");
    onStoppedLeading();
  }

  /** One attempt: true when we hold the lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.#config;
    const now = this.#clock.now();
    try {
      const lease = await this.#client.get<Lease>(LEASES, namespace, name);
      if (!lease) {
        await this.#client.create(
          LEASES,
          namespace,
          this.#lease({ name, namespace }, this.#record(undefined, now)),
        );
        return true;
      }
      const spec = lease.spec ?? {};
      const record = JSON.stringify(spec);
      if (this.#observed?.record !== record) this.#observed = { record, at: now };
      const heldByOther = spec.holderIdentity && spec.holderIdentity !== identity;
      const expiresAt = this.#observed.at + (spec.leaseDurationSeconds ?? 0) * 1000;
      if (heldByOther && now < expiresAt) return false;
      const updated = await this.#client.update<Lease>(
        LEASES,
        namespace,
        this.#lease(lease.metadata, this.#record(spec, now)),
      );
      this.#observed = { record: JSON.stringify(updated.spec ?? {}), at: now };
      return true;
    } catch (err) {
      if (!isConflict(err))
        this.#log.warn({ err: String(err), lease: name }, "leader election: lease update failed");
      return false;
    }
  }

  #record(previous: LeaseSpec | undefined, now: number): LeaseSpec {
    const { identity, leaseDurationMs } = this.#config;
    const renewing = previous?.holderIdentity === identity;
    return {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      acquireTime: renewing && previous?.acquireTime ? previous.acquireTime : formatMicroTime(now),
      renewTime: formatMicroTime(now),
      leaseTransitions: (previous?.leaseTransitions ?? 0) + (previous && !renewing ? 1 : 0),
    };
  }

  #lease(metadata: KubeObject["metadata"], spec: LeaseSpec): Lease {
    return { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata, spec };
  }

  /** Gives the lease up at once, so a standby need not wait for it to expire. */
  async #release(): Promise<void> {
    const { namespace, name, identity } = this.#config;
    try {
      const lease = await this.#client.get<Lease>(LEASES, namespace, name);
      if (lease?.spec?.holderIdentity !== identity) return;
      await this.#client.update(
        LEASES,
        namespace,
        this.#lease(lease.metadata, { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1 }),
      );
    } catch (err) {
      this.#log.warn({ err: String(err), lease: name }, "leader election: could not release the lease");
    }
  }
}
