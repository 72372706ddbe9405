// `tessera router --config FILE` (or `--config-json JSON`, how the operator passes it to the router
// it runs for each InferenceModel): routes gRPC (tessera.v1.Inference) and OpenAI-compatible HTTP
// requests to worker endpoints until SIGTERM or SIGINT, then drains and exits 0.
import { Command } from "commander";
import { createLogger } from "../kernel/log.ts";

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
    .action(async (flags: { config?: string; configJson?: string; host?: string }, command: Command) => {
      if ((flags.config === undefined) === (flags.configJson === undefined))
        command.error("error: give exactly one of --config FILE and --config-json JSON", { exitCode: 2 });
      const { loadRouterConfig, parseRouterConfigJson, runRouter } = await import("../router/index.ts");
      const config =
        flags.configJson === undefined
          ? loadRouterConfig(flags.config ?? "")
          : parseRouterConfigJson(flags.configJson, process.cwd());
      if (config.error) command.error(`error: ${config.error.message}`, { exitCode: 2 });
      if (flags.host !== undefined) config.value.host = flags.host;
      await runRouter(config.value, createLogger("router"));
    });
}
