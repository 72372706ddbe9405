import assert from "node:assert/strict";
import { type BoundObjects, ServiceAccountTokens } from "./service-account-tokens.ts";

const NOW = Date.UTC(2026, 0, 1);
const subject = { namespace: "team", serviceAccount: { name: "reader", uid: "sa-1" } };

function objects(sa: string | undefined = "sa-1", pod: string | undefined = "pod-1"): BoundObjects {
  return { serviceAccountUid: () => sa, podUid: () => pod };
}

describe("service-account-tokens", () => {
  it("issues a JWT that names the service account with its groups, valid until it expires", () => {
    const tokens = new ServiceAccountTokens();
    const { token, expiresAt } = tokens.issue(subject, { expirationSeconds: 600, now: NOW });
    assert.equal(expiresAt, NOW + 600_000);
    assert.deepEqual(tokens.verify(token, objects(), NOW), {
      name: "system:serviceaccount:team:reader",
      uid: "sa-1",
      groups: ["system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"],
    });
    assert.equal(tokens.verify(token, objects(), NOW + 600_000), undefined, "expired");
  });

  it("refuses a token of another key, another audience, a tampered one, or one whose objects are gone", () => {
    const tokens = new ServiceAccountTokens();
    const { token } = tokens.issue(subject, { now: NOW });
    assert.equal(new ServiceAccountTokens().verify(token, objects(), NOW), undefined);
    const [head, , sig] = token.split(".");
    const forged = Buffer.from(JSON.stringify({ sub: "system:serviceaccount:kube-system:admin" })).toString(
      "base64url",
    );
    assert.equal(tokens.verify(`${head}.${forged}.${sig}`, objects(), NOW), undefined);
    assert.equal(tokens.verify(token, objects("sa-2"), NOW), undefined, "account recreated");
    const other = tokens.issue(subject, { now: NOW, audiences: ["vault"] }).token;
    assert.equal(tokens.verify(other, objects(), NOW), undefined);
    const bound = tokens.issue({ ...subject, pod: { name: "p", uid: "pod-1" } }, { now: NOW }).token;
    assert.equal(
      tokens.verify(bound, objects(), NOW)?.extra?.["authentication.kubernetes.io/pod-name"]?.[0],
      "p",
    );
    assert.equal(tokens.verify(bound, objects("sa-1", "pod-2"), NOW), undefined, "pod replaced");
  });
});
