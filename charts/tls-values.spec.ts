// The chart's TLS values: the router's Secrets mounted read-only with the variables `tessera router`
// reads, its probes following the front door (HTTPS, or TCP where clients must present a certificate),
// the operator's Secret for the served-name check; and nothing of it by default.
import assert from "node:assert/strict";
import { containersOf, must, podOf, render } from "../e2e/helm/chart-tool.ts";

const ROUTER = [
  "--set",
  "router.enabled=true",
  "--set-json",
  'router.models=[{"id":"tiny-llama","tokenizer":"/models/tiny-llama"}]',
];

type Probe = Record<string, Record<string, unknown>>;
type Container = ReturnType<typeof containersOf>[number] & {
  readinessProbe: Probe;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
};
const env = (c: Container) =>
  Object.fromEntries((c.env ?? []).map((e) => [e.name, (e as { value?: string }).value]));
const volumes = (pod: ReturnType<typeof podOf>) =>
  ((pod["spec"] as { volumes?: { name: string; secret?: { secretName: string } }[] }).volumes ?? []).filter(
    (v) => v.secret,
  );

describe("the chart's TLS values", function () {
  this.timeout(60_000);

  it("renders plaintext by default: no Secret, no TLS variable, HTTP probes", async () => {
    const objects = await render(...ROUTER);
    for (const name of ["tessera-router", "tessera-operator"]) {
      const workload = must(objects, "Deployment", name);
      assert.deepEqual(volumes(podOf(workload)), []);
      assert.ok(!Object.keys(env(containersOf(workload)[0] as Container)).some((k) => k.includes("TLS")));
    }
    const router = containersOf(must(objects, "Deployment", "tessera-router"))[0] as Container;
    assert.deepEqual(router.readinessProbe["httpGet"], { path: "/ready", port: "http" });
  });

  it("mounts the router's Secrets, sets its TLS variables and probes its front door over HTTPS", async () => {
    const objects = await render(
      ...ROUTER,
      "--set",
      "router.tls.workers.secretName=router-mtls,router.tls.workers.serverName=tiny-workers.ns.svc",
      "--set",
      "router.tls.frontDoor.secretName=router-front",
    );
    const deployment = must(objects, "Deployment", "tessera-router");
    const c = containersOf(deployment)[0] as Container;
    assert.deepEqual(
      volumes(podOf(deployment)).map((v) => [v.name, v.secret?.secretName]),
      [
        ["tls", "router-mtls"],
        ["front-tls", "router-front"],
      ],
    );
    assert.deepEqual(
      c.volumeMounts?.filter((m) => m.name.includes("tls")),
      [
        { name: "tls", mountPath: "/etc/tessera/tls", readOnly: true },
        { name: "front-tls", mountPath: "/etc/tessera/front-tls", readOnly: true },
      ],
    );
    const vars = env(c);
    assert.equal(vars["TESSERA_TLS_DIR"], "/etc/tessera/tls");
    assert.equal(vars["TESSERA_TLS_SERVER_NAME"], "tiny-workers.ns.svc");
    assert.equal(vars["TESSERA_FRONT_TLS_DIR"], "/etc/tessera/front-tls");
    assert.equal(vars["TESSERA_FRONT_TLS_CLIENT_AUTH"], undefined);
    assert.equal(c.readinessProbe["httpGet"]?.["scheme"], "HTTPS");
  });

  it("probes a front door that requires client certificates by TCP", async () => {
    const objects = await render(
      ...ROUTER,
      "--set",
      "router.tls.frontDoor.secretName=router-front,router.tls.frontDoor.clientAuth=true",
    );
    const c = containersOf(must(objects, "Deployment", "tessera-router"))[0] as Container;
    assert.equal(env(c)["TESSERA_FRONT_TLS_CLIENT_AUTH"], "true");
    assert.deepEqual(c.readinessProbe, { tcpSocket: { port: "http" }, periodSeconds: 2 });
  });

  it("gives the operator its Secret for the served-name check", async () => {
    const objects = await render("--set", "operator.tls.secretName=operator-mtls");
    const deployment = must(objects, "Deployment", "tessera-operator");
    assert.deepEqual(
      volumes(podOf(deployment)).map((v) => [v.name, v.secret?.secretName]),
      [["tls", "operator-mtls"]],
    );
    assert.equal(env(containersOf(deployment)[0] as Container)["TESSERA_TLS_DIR"], "/etc/tessera/tls");
  });
});
