// Server reflection (grpcurl, grpcui) for the Inference and Health services. grpc-js reflection
// needs a proto-loader package definition, so the .proto files are loaded here for that alone.
import path from "node:path";
import type { Server } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { protoPath as healthProtoPath } from "grpc-health-check";

const protoRoot = path.resolve(import.meta.dirname, "../../../proto");

export function addReflection(server: Server): void {
  const definition = loadSync(
    [
      path.join(protoRoot, "tessera/v1/inference.proto"),
      path.join(protoRoot, "tessera/v1/load.proto"),
      healthProtoPath,
    ],
    {
      includeDirs: [protoRoot],
    },
  );
  new ReflectionService(definition).addToServer(server);
}
