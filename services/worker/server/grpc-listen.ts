// What every Tessera gRPC server does to go live: listen on host:port (IPv6 hosts bracketed), and give
// grpc.health.v1 one status for the server ("") and for its main service.
import { type Server, ServerCredentials } from "@grpc/grpc-js";
import type { ServingStatus } from "grpc-health-check";
import { Code, TesseraError } from "../../common/errors.ts";

/** Listens without TLS; resolves with the bound port (useful with port 0). */
export function bind(server: Server, host: string, port: number): Promise<number> {
  const address = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, bound) => {
      if (err) {
        reject(
          new TesseraError(Code.UNAVAILABLE, `cannot listen on ${address}: ${err.message}`, { cause: err }),
        );
      } else resolve(bound);
    });
  });
}

/** The health statuses of a server: the server as a whole ("") and `service`. */
export function servingStatuses(status: ServingStatus, service: string): Record<string, ServingStatus> {
  return { "": status, [service]: status };
}
