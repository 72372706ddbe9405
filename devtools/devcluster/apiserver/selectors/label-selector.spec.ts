import assert from "node:assert/strict";
import {
  formatLabelSelector,
  fromStructuredSelector,
  matchesLabels,
  parseLabelSelector,
} from "./label-selector.ts";

const match = (text: string, labels: Record<string, string>) =>
  matchesLabels(parseLabelSelector(text).value!, labels);

describe("label-selector", () => {
  it("matches =, ==, !=, in, notin, exists and !exists", () => {
    const labels = { app: "web", tier: "front" };
    assert.ok(match("app=web", labels) && match("app==web", labels) && match("app!=db", labels));
    assert.ok(match("tier in (front, back)", labels) && !match("tier notin (front)", labels));
    assert.ok(match("app,!legacy", labels) && !match("legacy", labels));
    assert.ok(match("missing!=x", labels), "!= matches when the label is absent");
    assert.ok(match("", labels));
  });

  it("rejects malformed keys and round-trips through formatting", () => {
    assert.ok(parseLabelSelector("bad key=1").error);
    assert.equal(formatLabelSelector(parseLabelSelector("a=1,b in (x,y),!c").value!), "a=1,b in (x,y),!c");
  });

  it("compiles structured selectors", () => {
    const selector = fromStructuredSelector({
      matchLabels: { app: "web" },
      matchExpressions: [{ key: "env", operator: "NotIn", values: ["dev"] }],
    });
    assert.ok(matchesLabels(selector.value!, { app: "web", env: "prod" }));
    assert.ok(!matchesLabels(selector.value!, { app: "web", env: "dev" }));
    assert.ok(fromStructuredSelector({ matchExpressions: [{ key: "a", operator: "Near" }] }).error);
  });
});
