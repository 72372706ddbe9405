// Server reflection (grpcurl, grpcui) for the Inference, WorkerLoad and Health services. grpc-js
// reflection needs a proto-loader package definition, so the .proto files are loaded here for that alone.
import path from "node:path";
import type { Server } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { protoPath as healthProtoPath } from "grpc-health-check";

const protoRoot = path.resolve(import.meta.dirname, "../../proto");

/** Reflects the services of `protos` (paths under proto/) and grpc.health.v1. */
export function addReflection(
  server: Server,
  protos: readonly string[] = [
    "tessera/v1/inference.proto",
    "tessera/v1/load.proto",
    "tessera/v1/relay.proto",
  ],
): void {
  const definition = loadSync([...protos.map((p) => path.join(protoRoot, p)), healthProtoPath], {
    includeDirs: [protoRoot],
  });
  new ReflectionService(definition).addToServer(server);
}
