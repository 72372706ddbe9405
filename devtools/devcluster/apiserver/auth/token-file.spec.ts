import assert from "node:assert/strict";
import { parseTokenFile } from "./token-file.ts";

describe("token-file", () => {
  it('reads kube-apiserver\'s token,user,uid,"groups" lines, skipping blanks and comments', () => {
    const tokens = parseTokenFile('# users\nt1,alice,1001,"dev,qa"\n\nt2,bob,1002\nt3,carol,,ops\n');
    assert.deepEqual(tokens.get("t1"), { name: "alice", uid: "1001", groups: ["dev", "qa"] });
    assert.deepEqual(tokens.get("t2"), { name: "bob", uid: "1002", groups: [] });
    assert.deepEqual(tokens.get("t3"), { name: "carol", groups: ["ops"] });
  });

  it("refuses a line without a user, or a repeated token, naming the line", () => {
    assert.throws(
      () => parseTokenFile("t1,alice,1\nt2\n", "tokens.csv"),
      /tokens.csv line 2: needs at least/,
    );
    assert.throws(() => parseTokenFile("t1,alice,1\nt1,bob,2\n"), /line 2: repeats a token/);
  });
});
