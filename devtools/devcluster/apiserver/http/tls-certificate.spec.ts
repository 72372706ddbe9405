import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { selfSignedCertificate } from "./tls-certificate.ts";

describe("tls-certificate", () => {
  it("makes a self-signed certificate valid for loopback names and addresses", async () => {
    const tls = await selfSignedCertificate(["127.0.0.1", "localhost"]);
    const cert = new X509Certificate(tls.cert);
    assert.ok(cert.checkIP("127.0.0.1"));
    assert.ok(cert.checkHost("localhost"));
    assert.ok(cert.verify(cert.publicKey), "it is its own issuer");
    assert.match(tls.key, /PRIVATE KEY/);
  });
});
