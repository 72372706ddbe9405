// One probe attempt against a container: httpGet (2xx/3xx passes), tcpSocket (connects),
// grpc (grpc.health.v1 Check says SERVING) or exec (exits 0), each within timeoutSeconds.
// Messages read like the kubelet's, as `kubectl describe` shows them in Unhealthy events.
import { execFile } from "node:child_process";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { credentials, makeGenericClientConstructor, type ServiceError } from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import type { ContainerPort, Probe } from "../objects/pod-types.ts";

export interface ProbeTarget {
  podIP: string;
  ports: readonly ContainerPort[];
  /** For exec probes: the container's environment and working directory. */
  env: Record<string, string>;
  cwd: string;
  /** Maps mount paths in exec probe commands to host folders. */
  mapPath?: (text: string) => string;
}

export interface ProbeOutcome {
  ok: boolean;
  message: string;
}

export type ProbeChecker = (probe: Probe, target: ProbeTarget) => Promise<ProbeOutcome>;

const HealthClient = makeGenericClientConstructor(healthService, "grpc.health.v1.Health");

function resolvePort(port: number | string, ports: readonly ContainerPort[]): number | undefined {
  if (typeof port === "number") return port;
  if (/^\d+$/.test(port)) return Number(port);
  return ports.find((p) => p.name === port)?.containerPort;
}

const timeoutMsOf = (probe: Probe) => Math.max(1, probe.timeoutSeconds ?? 1) * 1000;

function httpCheck(probe: NonNullable<Probe["httpGet"]>, target: ProbeTarget, timeoutMs: number) {
  const port = resolvePort(probe.port, target.ports);
  const host = probe.host || target.podIP;
  const scheme = probe.scheme === "HTTPS" ? "https" : "http";
  const url = `${scheme}://${host}:${port}${probe.path ?? "/"}`;
  if (port === undefined)
    return Promise.resolve({ ok: false, message: `port "${probe.port}" is not a container port` });
  return new Promise<ProbeOutcome>((resolve) => {
    const headers: Record<string, string> = { "User-Agent": "kube-probe/1.31" };
    for (const h of probe.httpHeaders ?? []) headers[h.name] = h.value;
    const client = scheme === "https" ? https : http;
    const req = client.get(
      url,
      { headers, timeout: timeoutMs, rejectUnauthorized: false, agent: false },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(
          code >= 200 && code < 400
            ? { ok: true, message: "" }
            : { ok: false, message: `HTTP probe failed with statuscode: ${code}` },
        );
      },
    );
    req.on("timeout", () => {
      req.destroy();
      resolve({ ok: false, message: `Get "${url}": context deadline exceeded` });
    });
    req.on("error", (err) => resolve({ ok: false, message: `Get "${url}": ${err.message}` }));
  });
}

function tcpCheck(probe: NonNullable<Probe["tcpSocket"]>, target: ProbeTarget, timeoutMs: number) {
  const port = resolvePort(probe.port, target.ports);
  const host = probe.host || target.podIP;
  if (port === undefined)
    return Promise.resolve({ ok: false, message: `port "${probe.port}" is not a container port` });
  return new Promise<ProbeOutcome>((resolve) => {
    const socket = net.connect({ host, port, timeout: timeoutMs });
    socket.once("connect", () => {
      socket.destroy();
      resolve({ ok: true, message: "" });
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve({ ok: false, message: `dial tcp ${host}:${port}: i/o timeout` });
    });
    socket.once("error", (err) =>
      resolve({ ok: false, message: `dial tcp ${host}:${port}: ${err.message}` }),
    );
  });
}

function grpcCheck(probe: NonNullable<Probe["grpc"]>, target: ProbeTarget, timeoutMs: number) {
  const address = `${target.podIP}:${probe.port}`;
  const client = new HealthClient(address, credentials.createInsecure());
  const check = client["check"] as (
    request: { service: string },
    options: { deadline: number },
    callback: (err: ServiceError | null, response?: { status: string }) => void,
  ) => void;
  return new Promise<ProbeOutcome>((resolve) => {
    check.call(
      client,
      { service: probe.service ?? "" },
      { deadline: Date.now() + timeoutMs },
      (err, response) => {
        if (err)
          resolve({
            ok: false,
            message: `failed to connect service "${address}" within ${timeoutMs / 1000}s: ${err.details || err.message}`,
          });
        else if (response?.status === "SERVING") resolve({ ok: true, message: "" });
        else
          resolve({
            ok: false,
            message: `service unhealthy (responded with "${response?.status ?? "UNKNOWN"}")`,
          });
      },
    );
  }).finally(() => client.close());
}

function execCheck(probe: NonNullable<Probe["exec"]>, target: ProbeTarget, timeoutMs: number) {
  const [command, ...args] = (probe.command ?? []).map((part) => target.mapPath?.(part) ?? part);
  if (!command) return Promise.resolve({ ok: false, message: "exec probe has no command" });
  return new Promise<ProbeOutcome>((resolve) => {
    execFile(
      command,
      args,
      { env: target.env, cwd: target.cwd, timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 1024 * 1024 },
      (err, stdout, stderr) => {
        if (!err) return resolve({ ok: true, message: "" });
        const output = `${stdout}${stderr}`.trim();
        const failure = err as { killed?: boolean; code?: unknown };
        if (failure.killed)
          return resolve({ ok: false, message: `command timed out after ${timeoutMs / 1000}s` });
        const code = typeof failure.code === "number" ? failure.code : err.message;
        resolve({
          ok: false,
          message: `command "${[command, ...args].join(" ")}" exited with ${code}${output ? `: ${output}` : ""}`,
        });
      },
    );
  });
}

export const checkProbe: ProbeChecker = (probe, target) => {
  const timeoutMs = timeoutMsOf(probe);
  if (probe.httpGet) return httpCheck(probe.httpGet, target, timeoutMs);
  if (probe.tcpSocket) return tcpCheck(probe.tcpSocket, target, timeoutMs);
  if (probe.grpc) return grpcCheck(probe.grpc, target, timeoutMs);
  if (probe.exec) return execCheck(probe.exec, target, timeoutMs);
  return Promise.resolve({ ok: false, message: "probe has no handler (exec, httpGet, tcpSocket or grpc)" });
};
