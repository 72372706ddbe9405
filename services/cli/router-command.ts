// `tessera router --config FILE` (or `--config-json JSON`, how the operator passes it to the router
// it runs for each InferenceModel): routes gRPC (tessera.v1.Inference) and OpenAI-compatible HTTP
// requests to worker endpoints until SIGTERM or SIGINT, then drains and exits 0.
import path from "node:path";
import { Command, Option } from "commander";
import { createLogger } from "../kernel/log.ts";
import { execWithRouterSettings } from "./router-process.ts";

export function routerCommand(): Command {
  return new Command("router")
    .summary("Route requests to workers (gRPC and OpenAI-compatible HTTP)")
    .description(
      "Serve tessera.v1.Inference over gRPC and /v1/completions, /v1/chat/completions, /v1/models over HTTP, " +
        "routing each request to the worker that caches its prefix (consistent hashing with bounded loads), " +
        "with health checking, failover, admission control and a response cache. See services/router/config/router-config.ts.",
    )
    .option("--config <file>", "router config (YAML or JSON)")
    .option(
      "--config-json <json>",
      "the router config inline, as JSON (relative paths are relative to the working directory)",
    )
    .option(
      "--host <address>",
      "interface to listen on, instead of the config's host (e.g. the pod's IP: --host $(POD_IP))",
    )
    .addOption(
      new Option(
        "--tls-dir <dir>",
        "mutual TLS to the workers: a mounted TLS Secret folder (tls.crt, tls.key, ca.crt), reloaded when it changes; instead of the config's tls.workers.dir",
      ).env("TESSERA_TLS_DIR"),
    )
    .addOption(
      new Option(
        "--tls-server-name <name>",
        "the name the workers' certificates carry, where it is not the host dialled",
      ).env("TESSERA_TLS_SERVER_NAME"),
    )
    .addOption(
      new Option(
        "--front-tls-dir <dir>",
        "TLS for the front door (gRPC and HTTPS): a mounted TLS Secret folder, reloaded when it changes; instead of the config's tls.frontDoor.dir",
      ).env("TESSERA_FRONT_TLS_DIR"),
    )
    .addOption(
      new Option(
        "--front-tls-client-auth",
        "front door clients must present a certificate that the folder's ca.crt verifies (mutual TLS; env: TESSERA_FRONT_TLS_CLIENT_AUTH=true)",
      ),
    )
    .action(async (flags: RouterFlags, command: Command) => {
      if ((flags.config === undefined) === (flags.configJson === undefined))
        command.error("error: give exactly one of --config FILE and --config-json JSON", { exitCode: 2 });
      // Before the router allocates anything: V8 reads its heap settings at process start only.
      execWithRouterSettings();
      const { loadRouterConfig, parseRouterConfigJson, runRouter } = await import("../router/index.ts");
      const config =
        flags.configJson === undefined
          ? loadRouterConfig(flags.config ?? "")
          : parseRouterConfigJson(flags.configJson, process.cwd());
      if (config.error) command.error(`error: ${config.error.message}`, { exitCode: 2 });
      if (flags.host !== undefined) config.value.host = flags.host;
      const tls = withTlsFlags(config.value.tls, flags, process.env);
      if (typeof tls === "string") command.error(`error: ${tls}`, { exitCode: 2 });
      config.value.tls = tls;
      await runRouter(config.value, createLogger("router"));
    });
}

interface RouterFlags {
  config?: string;
  configJson?: string;
  host?: string;
  tlsDir?: string;
  tlsServerName?: string;
  frontTlsDir?: string;
  frontTlsClientAuth?: boolean;
}

interface RouterTlsConfig {
  workers?: { dir: string; serverName?: string | undefined } | undefined;
  frontDoor?: { dir: string; clientAuth: boolean } | undefined;
}

/** The config's tls section with the TLS flags over it; a flag that needs a folder none gives is refused. */
export function withTlsFlags<T extends RouterTlsConfig>(
  tls: T,
  flags: RouterFlags,
  env: Record<string, string | undefined> = {},
): T | string {
  const next: T = { ...tls };
  // Read here rather than by commander, which takes any value of a switch's variable ("false" too) as on.
  const clientAuthEnv = env["TESSERA_FRONT_TLS_CLIENT_AUTH"];
  if (clientAuthEnv !== undefined && clientAuthEnv !== "true" && clientAuthEnv !== "false")
    return `TESSERA_FRONT_TLS_CLIENT_AUTH must be true or false, not ${JSON.stringify(clientAuthEnv)}`;
  const clientAuth = flags.frontTlsClientAuth === true || clientAuthEnv === "true";
  if (flags.tlsDir !== undefined) next.workers = { ...next.workers, dir: path.resolve(flags.tlsDir) };
  if (flags.tlsServerName !== undefined) {
    if (next.workers === undefined) return "--tls-server-name needs --tls-dir (or tls.workers.dir)";
    next.workers = { ...next.workers, serverName: flags.tlsServerName };
  }
  if (flags.frontTlsDir !== undefined)
    next.frontDoor = { clientAuth: false, ...next.frontDoor, dir: path.resolve(flags.frontTlsDir) };
  if (clientAuth) {
    if (next.frontDoor === undefined)
      return "--front-tls-client-auth needs --front-tls-dir (or tls.frontDoor.dir)";
    next.frontDoor = { ...next.frontDoor, clientAuth: true };
  }
  return next;
}
