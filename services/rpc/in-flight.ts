// Tracks the calls a server is working on, so a graceful shutdown can refuse new calls, wait for the
// ones in flight, and cancel those still running when the drain time is up.
import { Code, TesseraError } from "../kernel/errors.ts";
import { type Slot, SlotTable } from "../kernel/slot-table.ts";

/** The reason a call's controller is aborted with when its client cancels the call. */
export const CANCELLED_BY_CLIENT = new TesseraError(Code.CANCELLED, "cancelled by the client");

/** A call's controller, knowing where InFlight holds it. */
export class InFlightCall extends AbortController {
  slot: Slot = -1;
}

export class InFlight {
  // Slots, not a Set: a long-lived Set keeps what passed through it until V8's next full collection
  // (slot-table.ts), and a controller reaches its call's whole state through its signal's listeners.
  readonly #calls = new SlotTable<InFlightCall>();
  readonly #idleWaiters: (() => void)[] = [];
  #draining = false;

  get draining(): boolean {
    return this.#draining;
  }

  get size(): number {
    return this.#calls.size;
  }

  /** A controller whose signal aborts the new call, or undefined once draining (refuse the call). */
  begin(): InFlightCall | undefined {
    if (this.#draining) return undefined;
    const controller = new InFlightCall();
    controller.slot = this.#calls.add(controller);
    return controller;
  }

  end(controller: InFlightCall): void {
    if (this.#calls.get(controller.slot) === controller) {
      this.#calls.delete(controller.slot);
      controller.slot = -1;
    }
    if (this.#calls.size > 0) return;
    for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  /**
   * Refuses new calls from now on and resolves once none is in flight. When `deadline` resolves
   * first, the calls still running are aborted with `reason` and counted in `cancelled`.
   */
  async drain(deadline: Promise<void>, reason: unknown): Promise<{ cancelled: number }> {
    this.#draining = true;
    const idle = this.#whenIdle();
    const timedOut = await Promise.race([idle.then(() => false), deadline.then(() => true)]);
    if (!timedOut) return { cancelled: 0 };
    const cancelled = this.#calls.size;
    for (const controller of this.#calls.values()) controller.abort(reason);
    await idle;
    return { cancelled };
  }

  #whenIdle(): Promise<void> {
    if (this.#calls.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }
}
