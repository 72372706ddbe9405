// The discovery named by the config.
import type { Logger } from "../../kernel/log.ts";
import type { RouterConfig } from "../config/router-config.ts";
import type { EndpointDiscovery } from "./discovery.ts";
import { KubernetesDiscovery } from "./kubernetes-discovery.ts";
import { StaticFileDiscovery } from "./static-file-discovery.ts";

/** `env`: the process environment, read at start-up (Kubernetes discovery finds its API server there). */
export function createDiscovery(
  config: RouterConfig["discovery"],
  log: Logger,
  env: Record<string, string | undefined>,
): EndpointDiscovery {
  switch (config.type) {
    case "static":
      return new StaticFileDiscovery(config.file, { pollMs: config.pollMs, log });
    case "kubernetes":
      return new KubernetesDiscovery(config, { log, env });
    default:
      return assertNever(config);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected discovery ${JSON.stringify(value)}`);
}
