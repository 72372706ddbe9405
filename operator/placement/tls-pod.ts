// What spec.tls adds to the pods the operator creates: the Secret mounted read-only (kubelet swaps the
// `..data` link when the Secret is renewed, and our processes reload it), the variables that point
// `tessera serve` and `tessera router` at it, and probes that still work. The kubelet's gRPC probe
// speaks no TLS, so a port that serves TLS is probed by TCP: a worker listens once its model is loaded
// (and the router watches every worker's health itself, over mutual TLS), so the TCP check keeps the
// startup probe's meaning; readiness then no longer follows a draining server's NOT_SERVING.
import type { InferenceModelSpec } from "../../services/api/inference-model-spec.ts";
import type { EnvVar } from "./shard-env.ts";

/** Where the model's TLS Secret (spec.tls.secretName) is mounted. */
export const TLS_MOUNT = "/etc/tessera/tls";
/** Where the router's front door Secret (spec.tls.frontDoor.secretName) is mounted. */
export const FRONT_TLS_MOUNT = "/etc/tessera/front-tls";

type Tls = InferenceModelSpec["tls"];

/** The Secret volumes of a worker pod (internal TLS) or a router pod (internal and front door). */
export function tlsVolumes(tls: Tls, pod: "worker" | "router") {
  const internal = tls?.secretName;
  const front = pod === "router" ? tls?.frontDoor?.secretName : undefined;
  return [
    ...(internal ? [{ name: "tls", secret: { secretName: internal } }] : []),
    ...(front ? [{ name: "front-tls", secret: { secretName: front } }] : []),
  ];
}

export function tlsVolumeMounts(tls: Tls, pod: "worker" | "router") {
  const front = pod === "router" && tls?.frontDoor;
  return [
    ...(tls?.secretName ? [{ name: "tls", mountPath: TLS_MOUNT, readOnly: true }] : []),
    ...(front ? [{ name: "front-tls", mountPath: FRONT_TLS_MOUNT, readOnly: true }] : []),
  ];
}

/** TESSERA_TLS_DIR (and the server name) for workers and routers; the front door's for routers. */
export function tlsEnv(tls: Tls, pod: "worker" | "router"): EnvVar[] {
  const env: EnvVar[] = [];
  if (tls?.secretName) {
    env.push({ name: "TESSERA_TLS_DIR", value: TLS_MOUNT });
    if (tls.serverName) env.push({ name: "TESSERA_TLS_SERVER_NAME", value: tls.serverName });
  }
  if (pod === "router" && tls?.frontDoor) {
    env.push({ name: "TESSERA_FRONT_TLS_DIR", value: FRONT_TLS_MOUNT });
    if (tls.frontDoor.clientAuth) env.push({ name: "TESSERA_FRONT_TLS_CLIENT_AUTH", value: "true" });
  }
  return env;
}

/** The probe handler of a gRPC port: grpc.health.v1 in plaintext, a TCP check where it serves TLS. */
export function grpcPortProbe(port: number, servesTls: boolean) {
  return servesTls ? { tcpSocket: { port } } : { grpc: { port, service: "" } };
}
