import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Pod } from "../objects/pod-types.ts";
import type { EnvSources } from "./env-resolver.ts";
import { containerMounts, mapPaths, prepareVolumes, refreshVolumes } from "./volume-paths.ts";

const sources: EnvSources = {
  configMap: (name) => (name === "cfg" ? { "app.conf": "x=1", other: "y" } : undefined),
  secret: (name) => (name === "creds" ? { token: "t" } : undefined),
};

describe("volume-paths", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), "tessera-volumes-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const pod = (volumes: NonNullable<Pod["spec"]["volumes"]>): Pod => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "ns" },
    spec: { containers: [], volumes },
  });
  const dirs = () => ({ podDir: path.join(root, "pod"), claimsDir: path.join(root, "claims") });

  it("makes a host folder per volume and writes configMap and secret keys as files", () => {
    const hostDir = path.join(root, "host", "data");
    const result = prepareVolumes(
      pod([
        { name: "scratch", emptyDir: {} },
        { name: "data", hostPath: { path: hostDir, type: "DirectoryOrCreate" } },
        { name: "store", persistentVolumeClaim: { claimName: "data-db-0" } },
        { name: "conf", configMap: { name: "cfg", items: [{ key: "app.conf", path: "etc/app.conf" }] } },
        { name: "secret", secret: { secretName: "creds" } },
      ]),
      dirs(),
      sources,
    );
    const paths = result.value;
    assert.ok(paths);
    assert.equal(paths.get("scratch"), path.join(root, "pod", "volumes", "scratch"));
    assert.equal(paths.get("data"), hostDir);
    assert.equal(paths.get("store"), path.join(root, "claims", "ns", "data-db-0"));
    assert.ok(existsSync(hostDir) && existsSync(paths.get("store") ?? ""));
    assert.equal(readFileSync(path.join(paths.get("conf") ?? "", "etc", "app.conf"), "utf8"), "x=1");
    assert.equal(existsSync(path.join(paths.get("conf") ?? "", "other")), false);
    assert.equal(readFileSync(path.join(paths.get("secret") ?? "", "token"), "utf8"), "t");
  });

  it("keeps configMap and secret files up to date with their objects while the pod runs", () => {
    let secret: Record<string, string> | undefined = { "api-keys.yaml": "keys: [a]", old: "o" };
    const live: EnvSources = { configMap: sources.configMap, secret: () => secret };
    const p = pod([
      { name: "keys", secret: { secretName: "router-keys" } },
      { name: "conf", configMap: { name: "cfg", items: [{ key: "app.conf", path: "etc/app.conf" }] } },
      { name: "scratch", emptyDir: {} },
    ]);
    const volumes = prepareVolumes(p, dirs(), live).value!;
    const file = (volume: string, ...rel: string[]) => path.join(volumes.get(volume)!, ...rel);
    assert.deepEqual(refreshVolumes(p, volumes, live), [], "nothing changed");
    // A kubelet's atomic writer layout: `..data` -> `..<timestamp>`, each name a link through `..data`.
    const firstData = readlinkSync(file("keys", "..data"));
    assert.match(firstData, /^\.\./);
    assert.equal(readlinkSync(file("keys", "api-keys.yaml")), path.join("..data", "api-keys.yaml"));
    assert.equal(lstatSync(file("conf", "etc")).isSymbolicLink(), true);

    secret = { "api-keys.yaml": "keys: [b]", added: "n" };
    assert.deepEqual(refreshVolumes(p, volumes, live), ["keys"]);
    const data = readlinkSync(file("keys", "..data"));
    assert.notEqual(data, firstData, "an update swaps ..data to a new folder");
    assert.deepEqual(
      readdirSync(volumes.get("keys")!).sort(),
      ["..data", data, "added", "api-keys.yaml"].sort(),
    );
    assert.equal(readFileSync(file("keys", "api-keys.yaml"), "utf8"), "keys: [b]");
    assert.equal(readFileSync(file("keys", "added"), "utf8"), "n");
    assert.equal(existsSync(file("keys", "old")), false, "a key gone from the Secret goes from the folder");
    assert.equal(readFileSync(file("conf", "etc", "app.conf"), "utf8"), "x=1");

    secret = undefined; // deleted: the files stay, as on a kubelet
    assert.deepEqual(refreshVolumes(p, volumes, live), []);
    assert.equal(readFileSync(file("keys", "api-keys.yaml"), "utf8"), "keys: [b]");
  });

  it("fails for a missing configMap unless optional", () => {
    const missing = prepareVolumes(pod([{ name: "c", configMap: { name: "nope" } }]), dirs(), sources);
    assert.equal(missing.error?.message, 'configmap "nope" not found');
    const optional = prepareVolumes(
      pod([{ name: "c", configMap: { name: "nope", optional: true } }]),
      dirs(),
      sources,
    );
    assert.ok(optional.value?.has("c"));
  });

  it("maps mount paths in arguments onto host folders, longest mount first", () => {
    const volumes = new Map([
      ["models", "/host/models"],
      ["cache", "/host/cache"],
    ]);
    const mounts = containerMounts(
      {
        name: "c",
        volumeMounts: [
          { name: "models", mountPath: "/models" },
          { name: "cache", mountPath: "/models/cache/" },
        ],
      },
      volumes,
    ).value;
    assert.ok(mounts);
    assert.equal(mapPaths("/models/llama", mounts), "/host/models/llama");
    assert.equal(mapPaths("/models/cache/x", mounts), "/host/cache/x");
    assert.equal(mapPaths("--model=/models", mounts), "--model=/host/models");
    assert.equal(mapPaths("/bin:/models/bin", mounts), "/bin:/host/models/bin");
    assert.equal(mapPaths("/modelsx/y", mounts), "/modelsx/y");
    assert.equal(
      mapPaths('{"tokenizer":"/models/llama","url":"redis://r:6379/0","other":"/modelsx"}', mounts),
      '{"tokenizer":"/host/models/llama","url":"redis://r:6379/0","other":"/modelsx"}',
    );
    assert.match(
      containerMounts({ name: "c", volumeMounts: [{ name: "ghost", mountPath: "/g" }] }, volumes).error
        ?.message ?? "",
      /volume "ghost"/,
    );
  });
});
