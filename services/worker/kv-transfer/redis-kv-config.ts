// Where the KV block store finds Redis and how it uses it, validated at start-up. The address is a
// `redis://` or `rediss://` (TLS) URL, or host and port; a password alone authenticates the `default`
// user, username + password an ACL user. Fields given beside a URL override what the URL says (a
// password from a Secret beside an address from the config). TLS files are read when connecting.
import { readFileSync } from "node:fs";
import type { RedisOptions } from "ioredis";
import { z } from "zod";
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";

const MiB = 1024 * 1024;

export const redisKvConfigSchema = z
  .object({
    /** redis://[user[:password]@]host[:port][/db] or rediss://… for TLS. */
    url: z
      .string()
      .regex(/^rediss?:\/\/[^/]+(\/\d+)?$/, "must be redis://host[:port][/db] or rediss://…")
      .optional(),
    host: z.string().min(1).optional(),
    port: z.number().int().min(1).max(65535).optional(),
    /** An ACL user; needs a password. */
    username: z.string().min(1).optional(),
    password: z.string().min(1).optional(),
    db: z.number().int().min(0).optional(),
    /** true: TLS with the system's CAs; or files (PEM) and options. */
    tls: z
      .union([
        z.boolean(),
        z
          .object({
            caFile: z.string().min(1).optional(),
            certFile: z.string().min(1).optional(),
            keyFile: z.string().min(1).optional(),
            servername: z.string().min(1).optional(),
            rejectUnauthorized: z.boolean().default(true),
          })
          .strict(),
      ])
      .optional(),
    /** How long a block lives in Redis (PX on every SET). */
    ttlMs: z
      .number()
      .int()
      .min(1)
      .default(10 * 60_000),
    /** Deadline of one store operation (all the pipelines of one batch). */
    opTimeoutMs: z.number().int().min(1).default(2_000),
    connectTimeoutMs: z.number().int().min(1).default(5_000),
    /** Prefix of every key; keys are `${keyPrefix}${modelId}@${revision}:${start}-${end}:${hash}`. */
    keyPrefix: z.string().min(1).default("tessera:kv:"),
    /** Sockets a batch's blocks are spread over (besides the one for health, EXISTS and deletes). */
    connections: z.number().int().min(1).max(64).default(8),
    /** Bytes of values in one pipeline; larger batches are split (two pipelines in flight). */
    maxPipelineBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .default(4 * MiB),
  })
  .strict()
  .refine((c) => !(c.url !== undefined && (c.host !== undefined || c.port !== undefined)), {
    message: "give url or host/port, not both",
    path: ["url"],
  })
  .refine((c) => c.username === undefined || c.password !== undefined || c.url?.includes("@"), {
    message: "an ACL username needs a password",
    path: ["username"],
  });

export type RedisKvConfig = z.infer<typeof redisKvConfigSchema>;
export type RedisKvConfigInput = z.input<typeof redisKvConfigSchema>;

export function parseRedisKvConfig(raw: unknown): Result<RedisKvConfig> {
  const parsed = redisKvConfigSchema.safeParse(raw ?? {});
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join(".") || "(root)";
  return { error: new TesseraError(Code.INVALID_ARGUMENT, `KV store config ${field}: ${issue.message}`) };
}

/** The connection part of ioredis' options (address, credentials, database, TLS). */
export function connectionOptions(
  config: RedisKvConfig,
  readFile: (path: string) => Buffer = readFileSync,
): RedisOptions {
  const options: RedisOptions = { host: "127.0.0.1", port: 6379, connectTimeout: config.connectTimeoutMs };
  let tls = config.tls ?? false;
  if (config.url !== undefined) {
    const url = new URL(config.url);
    options.host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    if (url.port !== "") options.port = Number(url.port);
    if (url.username !== "") options.username = decodeURIComponent(url.username);
    if (url.password !== "") options.password = decodeURIComponent(url.password);
    const db = url.pathname.replace(/^\//, "");
    if (db !== "") options.db = Number(db);
    if (url.protocol === "rediss:" && tls === false) tls = true;
  }
  if (config.host !== undefined) options.host = config.host;
  if (config.port !== undefined) options.port = config.port;
  if (config.username !== undefined) options.username = config.username;
  if (config.password !== undefined) options.password = config.password;
  if (config.db !== undefined) options.db = config.db;
  if (tls === true) options.tls = {};
  else if (tls !== false) {
    options.tls = { rejectUnauthorized: tls.rejectUnauthorized };
    if (tls.caFile !== undefined) options.tls.ca = readFile(tls.caFile);
    if (tls.certFile !== undefined) options.tls.cert = readFile(tls.certFile);
    if (tls.keyFile !== undefined) options.tls.key = readFile(tls.keyFile);
    if (tls.servername !== undefined) options.tls.servername = tls.servername;
  }
  return options;
}

/** host:port for logs and health reasons (never the password). */
export function describeAddress(options: RedisOptions): string {
  return `${options.tls === undefined ? "redis" : "rediss"}://${options.host}:${options.port}`;
}
