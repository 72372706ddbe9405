// A real redis-server for tests: started on a free loopback port in its own temporary directory, with
// no persistence (`--save '' --appendonly no`), optionally a password and a memory limit. It can be
// stopped gracefully, killed abruptly, paused (SIGSTOP: a hung Redis) and restarted on the same port,
// for outage tests. Every server still running when the test process exits is killed.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { freePort } from "../../kernel/free-port.ts";

export interface RedisServerOptions {
  /** `--requirepass`: clients must AUTH with this password (user `default`). */
  password?: string;
  /** `--maxmemory`, e.g. "2mb". */
  maxmemory?: string;
  /** `--maxmemory-policy`, e.g. "allkeys-lru" (Redis' default is noeviction). */
  maxmemoryPolicy?: string;
  /** Serve TLS only, with this certificate and key (PEM); clients need not present certificates. */
  tls?: { cert: string; key: string };
  /** How long to wait for the server to answer PING; 10 s unless told. */
  startTimeoutMs?: number;
}

export const REDIS_SERVER_MISSING =
  "redis-server is not installed: run scripts/setup.sh (it installs the Debian package redis-server)";

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

export class RedisServer {
  readonly port: number;
  readonly dir: string;
  readonly options: RedisServerOptions;
  #child: ChildProcess | undefined;

  private constructor(port: number, dir: string, options: RedisServerOptions) {
    this.port = port;
    this.dir = dir;
    this.options = options;
  }

  /** Starts a server on a free port; rejects with REDIS_SERVER_MISSING when redis-server is absent. */
  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const dir = mkdtempSync(path.join(tmpdir(), "tessera-redis-"));
    for (let attempt = 1; ; attempt++) {
      const server = new RedisServer(await freePort(), dir, options);
      try {
        await server.launch();
        return server;
      } catch (err) {
        // Another process may take the port between freePort() and redis-server's bind.
        if (attempt >= 3 || !String(err).includes("Address already in use")) {
          rmSync(dir, { recursive: true, force: true });
          throw err;
        }
      }
    }
  }

  /** redis://[:password@]127.0.0.1:port (rediss:// with TLS) */
  get url(): string {
    const auth = this.options.password === undefined ? "" : `:${encodeURIComponent(this.options.password)}@`;
    return `${this.options.tls ? "rediss" : "redis"}://${auth}127.0.0.1:${this.port}`;
  }

  /** The server's certificate file (PEM), when it serves TLS: clients trust it as their CA. */
  get certFile(): string {
    return path.join(this.dir, "server.crt");
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  /** Graceful stop (SIGTERM); resolves once the process has exited. */
  stop(): Promise<void> {
    return this.signal("SIGTERM");
  }

  /** Abrupt stop (SIGKILL), as a crashed or partitioned Redis: clients see their connections reset. */
  kill(): Promise<void> {
    return this.signal("SIGKILL");
  }

  /** SIGSTOP: the server keeps its connections open but answers nothing (a hung Redis). */
  pause(): void {
    this.#child?.kill("SIGSTOP");
  }

  resume(): void {
    this.#child?.kill("SIGCONT");
  }

  /** Starts the server again on the same port (empty: nothing is persisted). */
  async restart(): Promise<void> {
    if (this.#child !== undefined) await this.stop();
    await this.launch();
  }

  /** Kills the server and removes its directory. */
  async close(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    if (signal !== "SIGKILL") child.kill("SIGCONT");
    child.kill(signal);
    await exited;
  }

  private tlsArgs(material: { cert: string; key: string }): string[] {
    const keyFile = path.join(this.dir, "server.key");
    writeFileSync(this.certFile, material.cert);
    writeFileSync(keyFile, material.key, { mode: 0o600 });
    const files = [
      "--tls-cert-file",
      this.certFile,
      "--tls-key-file",
      keyFile,
      "--tls-ca-cert-file",
      this.certFile,
    ];
    return [...files, "--tls-auth-clients", "no"];
  }

  private launch(): Promise<void> {
    const args = ["--bind", "127.0.0.1", "--dir", this.dir];
    if (this.options.tls === undefined) args.push("--port", String(this.port));
    else args.push("--port", "0", "--tls-port", String(this.port), ...this.tlsArgs(this.options.tls));
    args.push("--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", "");
    if (this.options.password !== undefined) args.push("--requirepass", this.options.password);
    if (this.options.maxmemory !== undefined) args.push("--maxmemory", this.options.maxmemory);
    if (this.options.maxmemoryPolicy !== undefined)
      args.push("--maxmemory-policy", this.options.maxmemoryPolicy);
    const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
    const timeoutMs = this.options.startTimeoutMs ?? 10_000;
    return new Promise<void>((resolve, reject) => {
      let output = "";
      const fail = (err: Error) => {
        clearTimeout(timer);
        child.kill("SIGKILL");
        reject(err);
      };
      const timer = setTimeout(
        () => fail(new Error(`redis-server did not answer PING within ${timeoutMs} ms:\n${output}`)),
        timeoutMs,
      );
      child.once("error", (err: NodeJS.ErrnoException) =>
        fail(err.code === "ENOENT" ? new Error(REDIS_SERVER_MISSING) : err),
      );
      child.once("exit", (code, signal) => {
        live.delete(child);
        if (this.#child === child) this.#child = undefined;
        fail(new Error(`redis-server exited (${code ?? signal}) before it was ready:\n${output}`));
      });
      const onOutput = (chunk: Buffer) => {
        output += chunk.toString();
        if (!output.includes("Ready to accept connections")) return;
        child.stdout.off("data", onOutput);
        ping(this.port, this.options.tls !== undefined).then(() => {
          clearTimeout(timer);
          child.removeAllListeners("exit");
          child.once("exit", () => {
            live.delete(child);
            if (this.#child === child) this.#child = undefined;
          });
          this.#child = child;
          resolve();
        }, fail);
      };
      child.stdout.on("data", onOutput);
      child.stderr.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      live.add(child);
    });
  }
}

/** One RESP PING; a NOAUTH error also proves the server answers. */
function ping(port: number, secure: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = secure
      ? tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false })
      : net.connect(port, "127.0.0.1");
    socket.once("error", reject);
    socket.once(secure ? "secureConnect" : "connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => {
      socket.destroy();
      const reply = data.toString();
      if (reply.startsWith("+PONG") || reply.startsWith("-NOAUTH")) resolve();
      else reject(new Error(`redis-server answered PING with ${JSON.stringify(reply)}`));
    });
  });
}
