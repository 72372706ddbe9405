// Workloads the kubelet and deployment end-to-end tests run, built as objects and written as
// YAML: a small HTTP server as the container's `node -e` command. It binds $POD_IP:8080 and
// answers / with who it is, /healthz and /ready for probes, and /set-ready and /set-unhealthy to
// flip them. Each carries a marker in its command line so a test can find its processes (ps).
import { stringify } from "yaml";

export const serverScript = (marker: string) => `// ${marker}
const http = require("node:http");
let ready = process.env.START_READY !== "0";
let healthy = true;
const server = http.createServer((req, res) => {
  if (req.url === "/healthz") { res.statusCode = healthy ? 200 : 500; return res.end(); }
  if (req.url === "/ready") { res.statusCode = ready ? 200 : 503; return res.end(); }
  if (req.url === "/set-ready") { ready = true; return res.end("ok"); }
  if (req.url === "/set-unhealthy") { healthy = false; return res.end("ok"); }
  res.end(JSON.stringify({ pod: process.env.POD_NAME, namespace: process.env.POD_NAMESPACE,
    ip: process.env.POD_IP, greeting: process.env.GREETING, token: process.env.TOKEN,
    version: process.env.VERSION }));
});
server.listen(8080, process.env.POD_IP, () => console.log("listening on " + process.env.POD_IP + ":8080"));
process.on("SIGTERM", () => { console.log("SIGTERM"); server.close(); process.exit(0); });
`;

type Json = Record<string, unknown>;

export const fieldEnv = (name: string, fieldPath: string) => ({
  name,
  valueFrom: { fieldRef: { fieldPath } },
});

export function serverContainer(marker: string, extra: Json = {}, env: Json[] = []): Json {
  return {
    name: "server",
    image: "tessera/e2e-web:1",
    command: ["node", "-e", serverScript(marker)],
    ports: [{ name: "http", containerPort: 8080 }],
    env: [
      fieldEnv("POD_IP", "status.podIP"),
      fieldEnv("POD_NAME", "metadata.name"),
      fieldEnv("POD_NAMESPACE", "metadata.namespace"),
      ...env,
    ],
    ...extra,
  };
}

export function pod(name: string, containers: Json[], spec: Json = {}): Json {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { app: name } },
    spec: { terminationGracePeriodSeconds: 5, containers, ...spec },
  };
}

/** A container running `node -e script` (script starts with a marker comment). */
export function scriptContainer(name: string, marker: string, script: string, extra: Json = {}): Json {
  return { name, image: "none", command: ["node", "-e", `// ${marker}\n${script}`], ...extra };
}

export function webDeployment(marker: string, replicas: number, version: string, extra: Json = {}): Json {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", labels: { app: "web" } },
    spec: {
      replicas,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: {
          terminationGracePeriodSeconds: 5,
          containers: [
            serverContainer(
              marker,
              { readinessProbe: { httpGet: { path: "/ready", port: "http" }, periodSeconds: 1 }, ...extra },
              [{ name: "VERSION", value: version }],
            ),
          ],
        },
      },
    },
  };
}

export const webService: Json = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web" },
  spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
};

export const toYaml = (...docs: Json[]) => docs.map((d) => stringify(d)).join("---\n");
