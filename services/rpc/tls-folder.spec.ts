import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, type TesseraError } from "../kernel/errors.ts";
import { createLogger, type Logger } from "../kernel/log.ts";
import { type Pem, secretFiles, testCa, testLeaf, writeSecretVolume } from "./testing/test-pki.ts";
import { readTlsFolder, TlsFolder } from "./tls-folder.ts";

describe("TLS folders (tls.crt, tls.key, ca.crt)", () => {
  const root = mkdtempSync(path.join(tmpdir(), "tessera-tls-folder-"));
  let ca: Pem;
  let leaf: Pem;
  let other: Pem;
  let n = 0;
  const folder = (files: Record<string, string>) => {
    const dir = path.join(root, `f${n++}`);
    writeSecretVolume(dir, files);
    return dir;
  };
  const problem = (dir: string, needCa = true) => readTlsFolder(dir, needCa).error?.message;

  before(async () => {
    ca = await testCa();
    leaf = await testLeaf(ca);
    other = await testLeaf(ca);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("reads a Secret volume and reports the certificate's serial", () => {
    const read = readTlsFolder(folder(secretFiles(leaf, ca)), true);
    assert.equal(read.error, undefined);
    assert.match(read.value!.serial, /^[0-9A-F]+$/);
  });

  it("names the folder and the file at fault", () => {
    const noKey = folder({ "tls.crt": leaf.cert, "ca.crt": ca.cert });
    assert.equal(problem(noKey), `TLS folder ${noKey}: tls.key is missing`);
    assert.match(problem(folder(secretFiles(leaf, undefined)))!, /: ca\.crt is missing$/);
    assert.equal(problem(folder(secretFiles(leaf, undefined)), false), undefined);
    const mismatch = folder({ "tls.crt": leaf.cert, "tls.key": other.key, "ca.crt": ca.cert });
    assert.match(problem(mismatch)!, /: tls\.key does not match tls\.crt/);
    const badCa = folder({ "tls.crt": leaf.cert, "tls.key": leaf.key, "ca.crt": "not a certificate" });
    assert.match(problem(badCa)!, /: ca\.crt is unreadable: no PEM certificate in it$/);
    const badCert = folder({ "tls.crt": "garbage", "tls.key": leaf.key, "ca.crt": ca.cert });
    assert.match(problem(badCert)!, /: tls\.crt is not a PEM certificate/);
    assert.throws(() => TlsFolder.open(noKey, { needCa: true }), /tls\.key is missing/);
  });

  it("opened from a setting, names the setting first and logs a failed reload", () => {
    const noKey = folder({ "tls.crt": leaf.cert, "ca.crt": ca.cert });
    const log = createLogger("tls-folder-spec", "silent");
    assert.throws(
      () => TlsFolder.openSetting(noKey, "--tls-dir", true, log),
      (err: TesseraError) =>
        err.code === Code.FAILED_PRECONDITION &&
        err.message === `--tls-dir: TLS folder ${noKey}: tls.key is missing`,
    );
    const dir = folder(secretFiles(leaf, ca));
    const logged: string[] = [];
    const watched = TlsFolder.openSetting(dir, "tls.workers.dir", true, {
      error: (fields: object, message: string) => logged.push(`${message} ${JSON.stringify(fields)}`),
    } as unknown as Logger);
    try {
      writeFileSync(path.join(dir, "..data", "tls.key"), other.key);
      assert.equal(watched.reload(), false);
      assert.match(logged[0] ?? "", /^TLS folder not reloaded.*tls\.key does not match/);
    } finally {
      watched.close();
    }
  });

  it("keeps the last good identity while the folder holds a key that does not match", async () => {
    const dir = folder(secretFiles(leaf, ca));
    const errors: string[] = [];
    const watched = TlsFolder.open(dir, { needCa: true, onReloadError: (e) => errors.push(e.message) });
    try {
      const serial = watched.current.serial;
      writeFileSync(path.join(dir, "..data", "tls.key"), other.key);
      assert.equal(watched.reload(), false);
      assert.equal(watched.current.serial, serial);
      assert.match(errors[0]!, /tls\.key does not match tls\.crt/);
      writeFileSync(path.join(dir, "..data", "tls.crt"), other.cert);
      assert.equal(watched.reload(), true);
      assert.notEqual(watched.current.serial, serial);
    } finally {
      watched.close();
    }
  });
});
