import assert from "node:assert/strict";
import { templateHash } from "./template-hash.ts";

describe("template-hash", () => {
  it("is stable across key order, differs for different templates, and is DNS-safe", () => {
    const a = templateHash({
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "c", image: "i" }] },
    });
    const b = templateHash({
      spec: { containers: [{ image: "i", name: "c" }] },
      metadata: { labels: { app: "web" } },
    });
    const c = templateHash({
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "c", image: "j" }] },
    });
    assert.equal(a, b);
    assert.notEqual(a, c);
    assert.match(a, /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    assert.notEqual(templateHash({ x: 1 }, 1), templateHash({ x: 1 }, 0));
  });
});
