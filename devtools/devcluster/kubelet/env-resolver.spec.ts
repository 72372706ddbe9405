import assert from "node:assert/strict";
import type { Container, Pod } from "../objects/pod-types.ts";
import { type EnvSources, expandVars, type PodFacts, resolveEnv } from "./env-resolver.ts";

const pod: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web-1", namespace: "prod", uid: "u-1", labels: { app: "web" } },
  spec: { containers: [], nodeName: "node-a" },
};
const facts: PodFacts = { podIP: "127.1.0.7", hostIP: "127.0.0.1", allocatable: { cpu: 8, memory: 2 ** 34 } };
const sources: EnvSources = {
  configMap: (name) => (name === "cfg" ? { GREETING: "hello", MODE: "fast" } : undefined),
  secret: (name) => (name === "creds" ? { token: "s3cret" } : undefined),
};
const resolve = (container: Partial<Container>, base: Record<string, string> = {}) =>
  resolveEnv(pod, { name: "c", ...container }, facts, sources, base);

describe("env-resolver", () => {
  it("resolves fieldRef, configMapKeyRef, secretKeyRef and resourceFieldRef", () => {
    const result = resolve({
      resources: { limits: { memory: "1Gi" } },
      env: [
        { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
        { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
        { name: "NS", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
        { name: "APP", valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
        { name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
        { name: "GREETING", valueFrom: { configMapKeyRef: { name: "cfg", key: "GREETING" } } },
        { name: "TOKEN", valueFrom: { secretKeyRef: { name: "creds", key: "token" } } },
        { name: "MEM_MI", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
        { name: "CPUS", valueFrom: { resourceFieldRef: { resource: "limits.cpu" } } },
      ],
    });
    assert.deepEqual(result.value, {
      POD_IP: "127.1.0.7",
      POD_NAME: "web-1",
      NS: "prod",
      APP: "web",
      NODE: "node-a",
      GREETING: "hello",
      TOKEN: "s3cret",
      MEM_MI: "1024",
      CPUS: "8",
    });
  });

  it("applies base, then envFrom with prefixes, then env, expanding $(VAR) references", () => {
    const result = resolve(
      {
        envFrom: [{ configMapRef: { name: "cfg" }, prefix: "CFG_" }, { secretRef: { name: "creds" } }],
        env: [
          { name: "URL", value: "http://$(HOST):80/$(CFG_MODE)/$$(HOST)/$(UNKNOWN)" },
          { name: "PATH", value: "/opt/bin:$(PATH)" },
        ],
      },
      { PATH: "/usr/bin", HOST: "h" },
    );
    assert.deepEqual(result.value, {
      PATH: "/opt/bin:/usr/bin",
      HOST: "h",
      CFG_GREETING: "hello",
      CFG_MODE: "fast",
      token: "s3cret",
      URL: "http://h:80/fast/$(HOST)/$(UNKNOWN)",
    });
  });

  it("reports missing sources unless optional", () => {
    const missingMap = resolve({
      env: [{ name: "X", valueFrom: { configMapKeyRef: { name: "nope", key: "k" } } }],
    });
    assert.equal(missingMap.error?.message, 'configmap "nope" not found');
    const missingKey = resolve({
      env: [{ name: "X", valueFrom: { secretKeyRef: { name: "creds", key: "k" } } }],
    });
    assert.equal(missingKey.error?.message, "couldn't find key k in Secret prod/creds");
    const optional = resolve({
      env: [{ name: "X", valueFrom: { configMapKeyRef: { name: "nope", key: "k", optional: true } } }],
      envFrom: [{ secretRef: { name: "nope", optional: true } }],
    });
    assert.deepEqual(optional.value, {});
    assert.match(
      resolve({ envFrom: [{ secretRef: { name: "gone" } }] }).error?.message ?? "",
      /secret "gone"/,
    );
  });

  it("expands only known names", () => {
    assert.equal(expandVars("$(A)-$(B)-$$(A)-$A", { A: "1" }), "1-$(B)-$(A)-$A");
  });
});
