import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { admitServiceAccount, SERVICE_ACCOUNT_MOUNT } from "./service-account-admission.ts";

const pod = (spec: Record<string, unknown>): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", namespace: "team" },
  spec: { containers: [{ name: "a" }, { name: "b" }], ...spec },
});
type Spec = {
  serviceAccountName: string;
  volumes?: { name: string; projected?: { sources: object[] } }[];
  containers: { volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] }[];
};

describe("service-account-admission", () => {
  it("runs a pod as the default account and mounts its kube-api-access volume in every container", () => {
    const admitted = pod({});
    admitServiceAccount(admitted, { metadata: { name: "default" } });
    const spec = admitted["spec"] as Spec;
    assert.equal(spec.serviceAccountName, "default");
    const volume = spec.volumes?.[0];
    assert.match(volume?.name ?? "", /^kube-api-access-[a-z0-9]{5}$/);
    assert.deepEqual(volume?.projected?.sources, [
      { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
      { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
      {
        downwardAPI: {
          items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
        },
      },
    ]);
    for (const container of spec.containers)
      assert.deepEqual(container.volumeMounts, [
        { name: volume?.name, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT },
      ]);
  });

  it("mounts nothing when the pod or its account opts out, or where a container mounts the path itself", () => {
    const optedOut = pod({ serviceAccountName: "op", automountServiceAccountToken: false });
    admitServiceAccount(optedOut, { metadata: { name: "op" } });
    assert.equal((optedOut["spec"] as Spec).volumes, undefined);
    const accountOptedOut = pod({});
    admitServiceAccount(accountOptedOut, {
      metadata: { name: "default" },
      automountServiceAccountToken: false,
    });
    assert.equal((accountOptedOut["spec"] as Spec).volumes, undefined);
    const own = pod({
      containers: [
        { name: "a", volumeMounts: [{ name: "mine", mountPath: SERVICE_ACCOUNT_MOUNT }] },
        { name: "b" },
      ],
      volumes: [{ name: "mine", emptyDir: {} }],
    });
    admitServiceAccount(own, undefined);
    const spec = own["spec"] as Spec;
    assert.equal(spec.volumes?.length, 2);
    assert.deepEqual(spec.containers[0]?.volumeMounts, [{ name: "mine", mountPath: SERVICE_ACCOUNT_MOUNT }]);
    assert.equal(spec.containers[1]?.volumeMounts?.[0]?.name, spec.volumes?.[1]?.name);
  });
});
