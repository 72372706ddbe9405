// API keys and their limits, from a YAML or JSON file (in Kubernetes: a Secret mounted as a file):
//
//   keys:
//     - name: team-a                 # shown in logs and metrics, never the key itself
//       key: sk-team-a-...
//       requestsPerSecond: 5         # token bucket on requests (burst: burstRequests, default 2x rate)
//       tokensPerSecond: 2000        # token bucket on tokens: prompt + max_tokens, unused ones refunded
//
// A limit left out is no limit. Keys are compared in constant time. Followed, the file is re-read while
// the router runs (a rotated Kubernetes Secret is rewritten in place): a valid new version replaces the
// keys, keeping the buckets of every key whose entry did not change; an invalid one is logged and the
// keys in force stay.
import { timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import type { Clock } from "../../kernel/clock.ts";
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";
import { TokenBucket } from "./token-bucket.ts";

const keySchema = z.strictObject({
  name: z.string().min(1),
  key: z.string().min(8, "must be at least 8 characters"),
  requestsPerSecond: z.number().positive().optional(),
  burstRequests: z.number().positive().optional(),
  tokensPerSecond: z.number().positive().optional(),
  burstTokens: z.number().positive().optional(),
});
const fileSchema = z.strictObject({ keys: z.array(keySchema).min(1) });

export type ApiKeyConfig = z.infer<typeof keySchema>;

export interface Caller {
  name: string;
  requests: TokenBucket | undefined;
  tokens: TokenBucket | undefined;
}

export function parseApiKeys(text: string): Result<ApiKeyConfig[]> {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    return { error: new TesseraError(Code.INVALID_ARGUMENT, `API keys file: ${(err as Error).message}`) };
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      error: TesseraError.invalidArgument(
        `API keys file: ${issue?.path.map(String).join(".") || "keys"}`,
        issue?.message ?? "invalid",
      ),
    };
  }
  return { value: parsed.data.keys };
}

interface Entry {
  key: Buffer;
  caller: Caller;
  /** The entry as configured, to tell an unchanged key on reload. */
  config: string;
}

export class ApiKeys {
  #entries: Entry[] = [];
  readonly #clock: Clock;
  #timer: NodeJS.Timeout | undefined;

  constructor(keys: readonly ApiKeyConfig[], clock: Clock) {
    this.#clock = clock;
    this.replace(keys);
  }

  /**
   * The keys of `file`; with `follow`, the file is re-read every `intervalMs` and a changed, valid
   * version taken (`onChange` hears of each version taken or refused) until stop().
   */
  static fromFile(
    file: string,
    clock: Clock,
    follow?: { intervalMs: number; onChange: (outcome: Result<string[]>) => void },
  ): ApiKeys {
    const text = readFileSync(file, "utf8");
    const keys = parseApiKeys(text);
    if (keys.error) throw keys.error;
    const apiKeys = new ApiKeys(keys.value, clock);
    if (follow) apiKeys.#follow(file, text, follow.intervalMs, follow.onChange);
    return apiKeys;
  }

  /** The key names in force. */
  get names(): string[] {
    return this.#entries.map((e) => e.caller.name);
  }

  /** New keys; a key whose entry is unchanged keeps its caller (and the state of its buckets). */
  replace(keys: readonly ApiKeyConfig[]): void {
    const kept = new Map(this.#entries.map((e) => [e.config, e]));
    this.#entries = keys.map((k) => {
      const config = JSON.stringify(k);
      return (
        kept.get(config) ?? {
          key: Buffer.from(k.key),
          config,
          caller: {
            name: k.name,
            requests: bucket(k.requestsPerSecond, k.burstRequests, this.#clock),
            tokens: bucket(k.tokensPerSecond, k.burstTokens, this.#clock),
          },
        }
      );
    });
  }

  #follow(
    file: string,
    text: string,
    intervalMs: number,
    onChange: (outcome: Result<string[]>) => void,
  ): void {
    let last = text;
    this.#timer = setInterval(() => {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (err) {
        onChange({ error: TesseraError.from(err) });
        return;
      }
      if (text === last) return;
      last = text;
      const keys = parseApiKeys(text);
      if (keys.error) return onChange(keys);
      this.replace(keys.value);
      onChange({ value: this.names });
    }, intervalMs);
    this.#timer.unref();
  }

  /** Stops following the file. */
  stop(): void {
    clearInterval(this.#timer);
  }

  /** The caller owning `key`; UNAUTHENTICATED when it is missing or unknown. */
  authenticate(key: string | undefined): Result<Caller> {
    if (!key)
      return {
        error: new TesseraError(Code.UNAUTHENTICATED, "an API key is required (Authorization: Bearer KEY)"),
      };
    const given = Buffer.from(key);
    const found = this.#entries.find((e) => e.key.length === given.length && timingSafeEqual(e.key, given));
    if (found === undefined)
      return { error: new TesseraError(Code.UNAUTHENTICATED, "the API key is not valid") };
    return { value: found.caller };
  }
}

function bucket(
  perSecond: number | undefined,
  burst: number | undefined,
  clock: Clock,
): TokenBucket | undefined {
  return perSecond === undefined
    ? undefined
    : new TokenBucket({ perSecond, burst: burst ?? 2 * perSecond }, clock);
}

/** Charges one request and `tokens` tokens to the caller; RESOURCE_EXHAUSTED with a retry hint when over. */
export function chargeCaller(caller: Caller, tokens: number): Result<void> {
  const request = caller.requests?.take(1) ?? { ok: true };
  if (!request.ok) return { error: rateLimited(caller, "requests", request.retryAfterMs) };
  const taken = caller.tokens?.take(tokens) ?? { ok: true };
  if (!taken.ok) {
    caller.requests?.refund(1);
    return { error: rateLimited(caller, "tokens", taken.retryAfterMs) };
  }
  return { value: undefined };
}

/** Gives back a charge for a request that was not served. */
export function refundCaller(caller: Caller, tokens: number): void {
  caller.requests?.refund(1);
  caller.tokens?.refund(tokens);
}

function rateLimited(caller: Caller, what: string, retryAfterMs: number): TesseraError {
  return new TesseraError(
    Code.RESOURCE_EXHAUSTED,
    `rate limit on ${what} reached for ${caller.name}; retry in ${retryAfterMs} ms`,
    {
      retryAfterMs,
    },
  );
}
