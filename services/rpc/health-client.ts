// grpc.health.v1 client calls: one Check, or polling until a server reports SERVING.
import { setTimeout as delay } from "node:timers/promises";
import { makeGenericClientConstructor, type ServiceError } from "@grpc/grpc-js";
import { service as healthService, type ServingStatus } from "grpc-health-check";
import { type ClientSecurity, PLAINTEXT } from "./grpc-client.ts";

export const HealthClient = makeGenericClientConstructor(healthService, "grpc.health.v1.Health");

/** The status a server reports for `service` ("" = the whole server); `security`: TLS, default plaintext. */
export function checkHealth(
  address: string,
  service = "",
  timeoutMs = 2_000,
  security: ClientSecurity = PLAINTEXT,
): Promise<ServingStatus> {
  const client = new HealthClient(address, security.credentials, security.options);
  return new Promise<ServingStatus>((resolve, reject) => {
    const check = client["check"] as (
      request: { service: string },
      options: { deadline: number },
      callback: (err: ServiceError | null, response?: { status: ServingStatus }) => void,
    ) => void;
    check.call(client, { service }, { deadline: Date.now() + timeoutMs }, (err, response) => {
      if (err || response === undefined) reject(err);
      else resolve(response.status);
    });
  }).finally(() => client.close());
}

/** Polls until the server reports SERVING; rejects with the last error after `timeoutMs`. */
export async function waitUntilServing(address: string, timeoutMs: number, intervalMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const status = await checkHealth(address, "", Math.min(1_000, timeoutMs));
      if (status === "SERVING") return;
      last = new Error(`health is ${status}`);
    } catch (err) {
      last = err;
    }
    await delay(intervalMs);
  }
  throw new Error(`${address} did not become SERVING within ${timeoutMs} ms`, { cause: last });
}
