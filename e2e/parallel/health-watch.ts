// A grpc.health.v1 Watch on a server: the statuses it reports, in order, until the stream ends.
import { type ClientReadableStream, credentials, makeGenericClientConstructor } from "@grpc/grpc-js";
import { service as healthService, type ServingStatus } from "grpc-health-check";

const HealthClient = makeGenericClientConstructor(healthService, "grpc.health.v1.Health");

export interface HealthWatch {
  statuses: ServingStatus[];
  /** Resolves once the server reports `status` (or rejects if the stream ends first). */
  until(status: ServingStatus): Promise<void>;
  close(): void;
}

export function watchHealth(address: string): HealthWatch {
  const client = new HealthClient(address, credentials.createInsecure());
  const watch = client["watch"] as (request: {
    service: string;
  }) => ClientReadableStream<{ status: ServingStatus }>;
  const stream = watch.call(client, { service: "" });
  const statuses: ServingStatus[] = [];
  const waiters: { status: ServingStatus; resolve(): void; reject(err: Error): void }[] = [];
  let ended = false;
  stream.on("data", (m) => {
    statuses.push(m.status);
    for (const w of waiters.filter((w) => w.status === m.status)) w.resolve();
  });
  const end = () => {
    ended = true;
    for (const w of waiters.filter((w) => !statuses.includes(w.status)))
      w.reject(new Error(`health watch ended after ${statuses.join(", ")}`));
  };
  stream.on("error", end);
  stream.on("end", end);
  return {
    statuses,
    until: (status) =>
      statuses.includes(status)
        ? Promise.resolve()
        : ended
          ? Promise.reject(new Error(`health watch ended after ${statuses.join(", ")}`))
          : new Promise((resolve, reject) => waiters.push({ status, resolve, reject })),
    close: () => {
      stream.cancel();
      client.close();
    },
  };
}
