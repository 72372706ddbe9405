// One API server and the credentials for it, applied to each of our requests. Authentication is
// @kubernetes/client-node's (KubeConfig.applyToHTTPSOptions): bearer tokens, token files re-read as
// they rotate, exec credential plugins with their expirationTimestamp, OIDC with refresh, client
// certificates (files, data, or from an exec plugin), the CA, insecure-skip-tls-verify,
// tls-server-name and impersonation. We keep our own request layer (https-client.ts) because
// client-node's generated API has no server-side apply content type, `any` types and no injectable
// clock for watches (docs/STYLE.md).
//
// What this class adds around client-node:
// - refreshCredentials() (called on a 401) starts over from a fresh KubeConfig, so a cached exec
//   credential or token file is fetched again, as client-go does on a 401;
// - proxies: a cluster's proxy-url goes through client-node's agents (HTTP(S) CONNECT or SOCKS);
//   without one, HTTPS_PROXY/HTTP_PROXY/NO_PROXY from the environment apply as in kubectl (Go's
//   ProxyFromEnvironment, which never proxies localhost or a loopback address), through Node's own
//   agent proxy support; client-node ignores these variables;
// - one keep-alive agent per set of TLS material (client-node's agents do not keep connections), made
//   again when the CA or client certificate changes (a rotated file, an exec plugin's new certificate).
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";

/** What a request needs: its URL base, headers (Authorization included) and the agent to send it on. */
export interface RequestAuth {
  headers: Record<string, string>;
  agent: http.Agent;
}

const PROXY_VARIABLES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"];

export class ClusterConnection {
  /** The API server, without a trailing slash. */
  readonly server: string;
  /** The context's namespace, the pod's in cluster, else "default". */
  readonly namespace: string;
  /** The context in use. */
  readonly context: string;
  #config: KubeConfig;
  readonly #proxyEnv: Record<string, string>;
  #agent: { key: string; agent: http.Agent } | undefined;

  constructor(loaded: { config: KubeConfig; namespace: string }, env: Record<string, string | undefined>) {
    this.#config = loaded.config;
    this.namespace = loaded.namespace;
    this.context = loaded.config.getCurrentContext();
    this.server = (loaded.config.getCurrentCluster()?.server ?? "").replace(/\/$/, "");
    this.#proxyEnv = viaProxy(this.server)
      ? Object.fromEntries(PROXY_VARIABLES.flatMap((name) => (env[name] ? [[name, env[name]]] : [])))
      : {};
  }

  /** Headers and agent for one request, with credentials fetched or refreshed as needed. */
  async requestAuth(): Promise<RequestAuth> {
    const options: https.RequestOptions = {};
    await this.#config.applyToHTTPSOptions(options);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers ?? {}))
      if (value !== undefined) headers[name.toLowerCase()] = String(value).trim();
    const proxied = this.#config.getCurrentCluster()?.proxyUrl;
    return { headers, agent: proxied ? (options.agent as http.Agent) : this.#agentFor(options) };
  }

  /** Forgets every cached credential (exec plugin output, token file contents, OIDC tokens). */
  refreshCredentials(): void {
    const fresh = new KubeConfig();
    fresh.loadFromOptions({
      clusters: this.#config.clusters,
      users: this.#config.users,
      contexts: this.#config.contexts,
      currentContext: this.#config.currentContext,
    });
    this.#config = fresh;
  }

  close(): void {
    this.#agent?.agent.destroy();
    this.#agent = undefined;
  }

  #agentFor(options: https.RequestOptions): http.Agent {
    const tls = {
      ...(options.ca ? { ca: options.ca } : {}),
      ...(options.cert ? { cert: options.cert } : {}),
      ...(options.key ? { key: options.key } : {}),
      ...(options.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
      ...(options.servername ? { servername: options.servername } : {}),
    };
    // PEM text compares in a microsecond; JSON of the Buffers took 20-50 us a request (measured).
    const key = [tls.ca, tls.cert, tls.key, tls.rejectUnauthorized, tls.servername].join("\n");
    if (this.#agent?.key === key) return this.#agent.agent;
    const common = { keepAlive: true, maxSockets: 64, proxyEnv: this.#proxyEnv };
    const agent = this.server.startsWith("http:")
      ? new http.Agent(common)
      : new https.Agent({ ...common, ...tls });
    this.#agent = { key, agent };
    return agent;
  }
}

/** Go's ProxyFromEnvironment never proxies localhost or a loopback address. */
function viaProxy(server: string): boolean {
  const host = URL.canParse(server) ? new URL(server).hostname.replace(/^\[|\]$/g, "") : "";
  if (host === "localhost" || host.endsWith(".localhost")) return false;
  if (isIP(host) === 4) return !host.startsWith("127.");
  if (isIP(host) === 6) return host !== "::1";
  return true;
}
