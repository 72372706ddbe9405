// Polls an endpoint's tessera.v1.WorkerLoad every `intervalMs` while it is healthy. A worker without
// the service (UNIMPLEMENTED) is not asked again.

import { WorkerLoad } from "../../../proto/gen/tessera/v1/load_pb.js";
import type { Clock } from "../../kernel/clock.ts";
import { Code } from "../../kernel/errors.ts";
import type { GrpcClient } from "../../rpc/grpc-client.ts";
import type { LoadReport } from "../routing/plugin.ts";

export class LoadPoller {
  readonly #client: GrpcClient;
  readonly #intervalMs: number;
  readonly #clock: Clock;
  readonly #onReport: (report: LoadReport) => void;
  readonly #active: () => boolean;
  #cancelTimer: (() => void) | undefined;
  #stopped = false;

  constructor(
    client: GrpcClient,
    options: {
      intervalMs: number;
      clock: Clock;
      active: () => boolean;
      onReport: (report: LoadReport) => void;
    },
  ) {
    this.#client = client;
    this.#intervalMs = options.intervalMs;
    this.#clock = options.clock;
    this.#active = options.active;
    this.#onReport = options.onReport;
  }

  start(): void {
    this.#schedule(0);
  }

  stop(): void {
    this.#stopped = true;
    this.#cancelTimer?.();
  }

  #schedule(ms: number): void {
    if (!this.#stopped) this.#cancelTimer = this.#clock.setTimer(ms, () => void this.#poll());
  }

  async #poll(): Promise<void> {
    if (!this.#active()) return this.#schedule(this.#intervalMs);
    try {
      const { running, waiting, kvBlocksUsed, kvBlocksTotal } = await this.#client.unary(
        WorkerLoad.method.getLoad,
        {},
        { deadline: Date.now() + Math.max(1_000, this.#intervalMs) },
      );
      this.#onReport({ running, waiting, kvBlocksUsed, kvBlocksTotal });
    } catch (err) {
      if ((err as { code?: unknown }).code === Code.UNIMPLEMENTED) return;
    }
    this.#schedule(this.#intervalMs);
  }
}
