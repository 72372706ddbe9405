// Lists the services a server exposes through gRPC server reflection (grpc.reflection.v1).
import { createRequire } from "node:module";
import path from "node:path";
import { type ClientDuplexStream, credentials, loadPackageDefinition } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";

const reflectionPackage = path.dirname(
  createRequire(import.meta.url).resolve("@grpc/reflection/package.json"),
);

interface ReflectionResponse {
  list_services_response?: { service: { name: string }[] };
}
type ReflectionStream = ClientDuplexStream<{ list_services: string }, ReflectionResponse>;

export async function listServices(address: string): Promise<string[]> {
  const definition = loadSync("grpc/reflection/v1/reflection.proto", {
    keepCase: true,
    includeDirs: [path.join(reflectionPackage, "build", "proto")],
  });
  // biome-ignore lint/suspicious/noExplicitAny: proto-loader packages are untyped
  const grpcPackage = loadPackageDefinition(definition) as any;
  const client = new grpcPackage.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure());
  try {
    const stream: ReflectionStream = client.ServerReflectionInfo();
    const response = new Promise<string[]>((resolve, reject) => {
      stream.on("data", (message: ReflectionResponse) =>
        resolve(message.list_services_response?.service.map((s) => s.name) ?? []),
      );
      stream.on("error", reject);
    });
    stream.write({ list_services: "" });
    const names = await response;
    stream.end();
    return names;
  } finally {
    client.close();
  }
}
