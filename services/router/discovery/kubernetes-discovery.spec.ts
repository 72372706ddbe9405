import assert from "node:assert/strict";
import { Code, type TesseraError } from "../../common/errors.ts";
import { KubernetesDiscovery } from "./kubernetes-discovery.ts";

describe("Kubernetes discovery (seam)", () => {
  it("refuses to start with UNIMPLEMENTED until the operator registers shards", async () => {
    const discovery = new KubernetesDiscovery({ namespace: "ml", inferenceModel: "llama" });
    await assert.rejects(
      discovery.start(() => {}),
      (err: TesseraError) => {
        assert.equal(err.code, Code.UNIMPLEMENTED);
        assert.match(err.message, /ml\/llama.*operator/);
        return true;
      },
    );
    await discovery.stop();
  });
});
