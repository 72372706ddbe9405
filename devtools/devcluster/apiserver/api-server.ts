// The dev cluster's Kubernetes API server: an in-memory (optionally file-backed) object store,
// the built-in kinds and CRDs, the garbage collector and namespace controller, served over HTTPS
// with a generated certificate. Every request is authenticated (client certificates the serving
// certificate signed, tokens of --token-auth-file's format, service-account tokens it signs) and
// authorized by RBAC (auth/); the kubeconfig it writes is the admin's (system:masters). `startApiServer` returns both the URL for real clients (kubectl,
// helm, client-node) and `api`, the same API as method calls for in-process controllers.
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { type Clock, systemClock } from "../../../services/kernel/clock.ts";
import { TesseraError } from "../../../services/kernel/errors.ts";
import { createLogger, type Logger } from "../../../services/kernel/log.ts";
import { Authenticator } from "./auth/authenticator.ts";
import { bootstrapRbac } from "./auth/bootstrap-rbac.ts";
import { issueClientCertificate } from "./auth/client-certificate.ts";
import { RbacAuthorizer, type RbacObjects } from "./auth/rbac-authorizer.ts";
import type { RequestAuth } from "./auth/request-auth.ts";
import { ServiceAccountTokens, type TokenSubject } from "./auth/service-account-tokens.ts";
import { readTokenFile } from "./auth/token-file.ts";
import type { UserInfo } from "./auth/user-info.ts";
import { bootstrapCluster } from "./bootstrap.ts";
import { ClusterApi } from "./cluster/cluster-api.ts";
import { GarbageCollector } from "./cluster/garbage-collector.ts";
import { NamespaceController } from "./cluster/namespace-controller.ts";
import { createHttpHandler } from "./http/http-handler.ts";
import type { PodLogSource } from "./http/pod-logs.ts";
import { selfSignedCertificate, type TlsMaterial } from "./http/tls-certificate.ts";
import { kubeconfigYaml, writeKubeconfig } from "./kubeconfig.ts";
import { ResourceRegistry } from "./resources/registry.ts";
import { ObjectStore } from "./store/object-store.ts";
import { loadStateFile, StateFileWriter } from "./store/state-file.ts";

export const apiServerConfigSchema = z.object({
  /** Address to listen on; loopback by default. */
  host: z.string().default("127.0.0.1"),
  /** 0 picks a free port. */
  port: z.number().int().min(0).max(65535).default(0),
  /** Keep the cluster state in this JSON file (loaded at start, written on change). */
  stateFile: z.string().optional(),
  /** Write a kubeconfig for this server here. */
  kubeconfigPath: z.string().optional(),
  /** How many changes watches can resume from before they get 410 Gone. */
  eventWindow: z.number().int().positive().default(10_000),
  /** Upper bound of one watch request (clients reconnect). */
  watchTimeoutSeconds: z.number().positive().default(1800),
  bookmarkIntervalSeconds: z.number().positive().default(60),
  /** Pods on a node wait for the kubelet to delete them (see ClusterApiOptions). */
  gracefulPodDeletion: z.boolean().default(false),
  /** Pods get their service account's token volume (see ClusterApiOptions). */
  serviceAccountAdmission: z.boolean().default(false),
  /** Static bearer tokens, one `token,user,uid,"group1,group2"` line each (as --token-auth-file). */
  tokenAuthFile: z.string().optional(),
});

export type ApiServerConfig = z.input<typeof apiServerConfigSchema>;

export interface ApiServerDeps {
  clock?: Clock;
  log?: Logger;
  tls?: TlsMaterial;
  podLogs?: PodLogSource;
}

export interface ApiServer {
  /** https://host:port */
  readonly url: string;
  /** PEM of the serving certificate, which is also its CA. */
  readonly caCert: string;
  /** The admin's client certificate (kubernetes-admin in system:masters), as the kubeconfig carries it. */
  readonly admin: TlsMaterial;
  /** A client certificate the cluster CA signs: CN the user, O the groups. */
  clientCertificate(user: string, groups?: string[]): Promise<TlsMaterial>;
  /** A service-account token (bound to a pod when `subject.pod` is given), as TokenRequest issues it. */
  serviceAccountToken(
    subject: TokenSubject,
    options?: { expirationSeconds?: number; audiences?: string[] },
  ): { token: string; expiresAt: number };
  /** The in-process API (same semantics as the REST API). */
  readonly api: ClusterApi;
  kubeconfig(namespace?: string): string;
  writeKubeconfig(file: string, namespace?: string): Promise<void>;
  /** Resolves when the garbage collector and namespace controller have nothing queued. */
  controllersIdle(): Promise<void>;
  setPodLogSource(source: PodLogSource | undefined): void;
  close(): Promise<void>;
}

function parseConfig(config: ApiServerConfig) {
  const parsed = apiServerConfigSchema.safeParse(config);
  if (!parsed.success) throw TesseraError.invalidArgument("apiserver config", z.prettifyError(parsed.error));
  return parsed.data;
}

export async function startApiServer(
  config: ApiServerConfig = {},
  deps: ApiServerDeps = {},
): Promise<ApiServer> {
  const settings = parseConfig(config);
  const clock = deps.clock ?? systemClock;
  const log = deps.log ?? createLogger("devcluster-apiserver");
  const store = new ObjectStore({ eventWindow: settings.eventWindow });
  const snapshot = settings.stateFile ? await loadStateFile(settings.stateFile) : undefined;
  if (snapshot) store.restore(snapshot);
  const api = new ClusterApi({
    store,
    registry: new ResourceRegistry(),
    clock,
    gracefulPodDeletion: settings.gracefulPodDeletion,
    serviceAccountAdmission: settings.serviceAccountAdmission,
  });
  api.registerStoredCrds();
  bootstrapCluster(api);
  bootstrapRbac(api);
  const gc = new GarbageCollector(api, { log });
  const namespaces = new NamespaceController(api, { log });
  gc.start();
  namespaces.start();
  const stateWriter = settings.stateFile ? new StateFileWriter(settings.stateFile, store, clock) : undefined;
  stateWriter?.start();

  const tls = deps.tls ?? (await selfSignedCertificate(["127.0.0.1", "localhost", "::1", settings.host]));
  const admin = await issueClientCertificate(tls, "kubernetes-admin", ["system:masters"]);
  const auth = requestAuth(
    api,
    clock,
    settings.tokenAuthFile ? readTokenFile(settings.tokenAuthFile) : new Map(),
  );
  const handlerOptions = {
    api,
    auth,
    clock,
    log,
    watchTimeoutMs: settings.watchTimeoutSeconds * 1000,
    bookmarkIntervalMs: settings.bookmarkIntervalSeconds * 1000,
    ...(deps.podLogs ? { podLogs: deps.podLogs } : {}),
  };
  const handler = createHttpHandler(handlerOptions);
  const server: Server = createServer(
    // Client certificates are asked for, not required: a request without one may carry a token.
    { cert: tls.cert, key: tls.key, ca: tls.cert, requestCert: true, rejectUnauthorized: false },
    (req, res) => void handler(req, res),
  );
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `https://${host}:${address.port}`;
  log.info({ url, stateFile: settings.stateFile }, "dev cluster API server listening");

  const apiServer: ApiServer = {
    url,
    caCert: tls.cert,
    api,
    admin,
    clientCertificate: (user, groups = []) => issueClientCertificate(tls, user, groups),
    serviceAccountToken: (subject, options = {}) =>
      auth.tokens.issue(subject, { now: clock.now(), ...options }),
    kubeconfig: (namespace) =>
      kubeconfigYaml({ server: url, caCert: tls.cert, client: admin, ...(namespace ? { namespace } : {}) }),
    writeKubeconfig: (file, namespace) =>
      writeKubeconfig(file, {
        server: url,
        caCert: tls.cert,
        client: admin,
        ...(namespace ? { namespace } : {}),
      }),
    controllersIdle: async () => {
      do {
        await Promise.all([gc.idle(), namespaces.idle()]);
        await new Promise((resolve) => setImmediate(resolve));
      } while (gc.busy || namespaces.busy);
    },
    setPodLogSource: (source) => {
      if (source) handlerOptions.podLogs = source;
      else delete (handlerOptions as { podLogs?: PodLogSource }).podLogs;
    },
    close: async () => {
      gc.stop();
      namespaces.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stateWriter?.stop();
    },
  };
  if (settings.kubeconfigPath) await apiServer.writeKubeconfig(settings.kubeconfigPath);
  return apiServer;
}

function requestAuth(api: ClusterApi, clock: Clock, staticTokens: Map<string, UserInfo>): RequestAuth {
  const RBAC = "rbac.authorization.k8s.io";
  const objects: RbacObjects = {
    list: (resource, namespace) => api.store.list(`${resource}.${RBAC}`, namespace),
    get: (resource, namespace, name) => api.store.get(`${resource}.${RBAC}`, namespace, name),
  };
  const rbac = new RbacAuthorizer(objects);
  const tokens = new ServiceAccountTokens();
  const authenticator = new Authenticator({
    tokens: staticTokens,
    serviceAccountTokens: tokens,
    objects: {
      serviceAccountUid: (namespace, name) => api.store.get("serviceaccounts", namespace, name)?.metadata.uid,
      podUid: (namespace, name) => api.store.get("pods", namespace, name)?.metadata.uid,
    },
    now: () => clock.now(),
  });
  return { authenticator, rbac, tokens, api, now: () => clock.now() };
}
