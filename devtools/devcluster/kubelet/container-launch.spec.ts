import assert from "node:assert/strict";
import os from "node:os";
import type { Container, Pod } from "../objects/pod-types.ts";
import { containerLaunch, type LaunchContext } from "./container-launch.ts";

const pod: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "w", namespace: "default" },
  spec: { containers: [] },
};
const ctx = (container: Container): LaunchContext => ({
  pod,
  container,
  facts: { podIP: "127.1.0.9", hostIP: "127.0.0.1", allocatable: {} },
  sources: { configMap: () => undefined, secret: () => undefined },
  baseEnv: { PATH: "/usr/bin" },
  volumes: new Map([["models", "/host/models"]]),
  defaultWorkingDir: os.tmpdir(),
});

describe("container-launch", () => {
  it("runs command + args with $(VAR) expanded and mount paths mapped to host folders", () => {
    const result = containerLaunch(
      ctx({
        name: "c",
        image: "tessera/worker:1",
        command: ["node", "serve.js"],
        args: ["--host", "$(POD_IP)", "--model=/models/llama"],
        env: [
          { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
          { name: "CACHE", value: "/models/cache" },
        ],
        volumeMounts: [{ name: "models", mountPath: "/models" }],
      }),
    );
    const { mapPath, ...launch } = result.value ?? {};
    assert.deepEqual(launch, {
      command: "node",
      args: ["serve.js", "--host", "127.1.0.9", "--model=/host/models/llama"],
      env: { PATH: "/usr/bin", POD_IP: "127.1.0.9", CACHE: "/host/models/cache" },
      cwd: os.tmpdir(),
    });
    assert.equal(mapPath?.("/models/ok"), "/host/models/ok");
  });

  it("uses args as the command when there is no command, and refuses a container with neither", () => {
    assert.equal(containerLaunch(ctx({ name: "c", args: ["sleep", "1"] })).value?.command, "sleep");
    const none = containerLaunch(ctx({ name: "c", image: "redis:7" }));
    assert.match(none.error?.message ?? "", /no command: .* ignores its image \(redis:7\)/);
  });
});
