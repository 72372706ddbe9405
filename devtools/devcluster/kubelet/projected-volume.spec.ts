import assert from "node:assert/strict";
import type { Pod, VolumeProjection } from "../objects/pod-types.ts";
import { type ProjectionSources, projectedFiles, tokenNeedsRefresh } from "./projected-volume.ts";

const pod = {
  metadata: { name: "p", namespace: "team", uid: "u1" },
  spec: { containers: [] },
} as unknown as Pod;
const jwt = (iat: number, exp: number) =>
  `h.${Buffer.from(JSON.stringify({ iat, exp })).toString("base64url")}.s`;
const SOURCES: VolumeProjection[] = [
  { serviceAccountToken: { path: "token", expirationSeconds: 3600 } },
  { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
  { downwardAPI: { items: [{ path: "namespace", fieldRef: { fieldPath: "metadata.namespace" } }] } },
];

function sources(nowSeconds: number, issued: { expirationSeconds: number }[] = []): ProjectionSources {
  return {
    now: () => nowSeconds * 1000,
    configMap: (name) => (name === "kube-root-ca.crt" ? { "ca.crt": "CA" } : undefined),
    secret: () => undefined,
    serviceAccountToken: (request) => {
      issued.push(request);
      return jwt(nowSeconds, nowSeconds + request.expirationSeconds);
    },
  };
}

describe("projected-volume", () => {
  it("writes the service account's token, the cluster CA and the namespace", () => {
    const issued: { expirationSeconds: number }[] = [];
    const files = projectedFiles(pod, SOURCES, sources(1000, issued)).value;
    assert.deepEqual(Object.fromEntries(files ?? []), {
      token: jwt(1000, 4600),
      "ca.crt": "CA",
      namespace: "team",
    });
    assert.deepEqual(issued, [{ expirationSeconds: 3600 }]);
  });

  it("keeps a token until 80% of its lifetime has passed, then asks for a new one", () => {
    const current = new Map([["token", jwt(1000, 4600)]]);
    const issued: { expirationSeconds: number }[] = [];
    assert.equal(
      projectedFiles(pod, SOURCES, sources(3000, issued), current).value?.get("token"),
      jwt(1000, 4600),
    );
    assert.equal(issued.length, 0);
    assert.equal(
      projectedFiles(pod, SOURCES, sources(3880, issued), current).value?.get("token"),
      jwt(3880, 7480),
    );
    assert.equal(tokenNeedsRefresh("not a jwt", 0), true);
  });

  it("fails while the CA ConfigMap or the account is missing, and refuses fields it cannot project", () => {
    const none = { ...sources(0), configMap: () => undefined };
    assert.match(
      projectedFiles(pod, SOURCES, none).error?.message ?? "",
      /configmap "kube-root-ca.crt" not found/,
    );
    const noAccount = { ...sources(0), serviceAccountToken: () => undefined };
    assert.match(projectedFiles(pod, SOURCES, noAccount).error?.message ?? "", /cannot issue a token/);
    const podIp = [{ downwardAPI: { items: [{ path: "ip", fieldRef: { fieldPath: "status.podIP" } }] } }];
    assert.match(
      projectedFiles(pod, podIp, sources(0)).error?.message ?? "",
      /unsupported fieldPath "status.podIP"/,
    );
  });
});
