// The OpenTelemetry context of the code running now, carried across awaits, timers and callbacks by
// node:async_hooks' AsyncLocalStorage. Registered only while tracing is on, so a process without
// tracing pays nothing (the API's default manager just calls the function).
import { AsyncLocalStorage } from "node:async_hooks";
import { type Context, type ContextManager, ROOT_CONTEXT } from "@opentelemetry/api";

export class AsyncContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(context, () => fn.call(thisArg, ...args));
  }

  /** Binds functions to `context`; other values (event emitters included) are returned as they are. */
  bind<T>(context: Context, target: T): T {
    if (typeof target !== "function") return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    const run = (thisArg: unknown, args: unknown[]) => this.with(context, () => fn.apply(thisArg, args));
    return function (this: unknown, ...args: unknown[]) {
      return run(this, args);
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#storage.disable();
    return this;
  }
}
