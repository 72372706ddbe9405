// A TLS identity read from a folder laid out as a Kubernetes TLS Secret (or cert-manager's) mounts it:
// tls.crt (the certificate, chain after it), tls.key (its private key) and ca.crt (the CA that peers'
// certificates must chain to). Read and checked at start-up, so a bad file fails the process with its
// name (missing, unreadable, a key that does not match the certificate, a CA that is not a certificate);
// then watched, so a rotated Secret is picked up without a restart: kubelet writes the new files into a
// fresh `..<timestamp>` folder and swaps the `..data` symlink to it, which fires a watch event on the
// folder. A reload is checked the same way; until it passes (a writer that is not atomic may leave the
// key and certificate out of step for a moment) the last good identity stays in use.
// A TlsFolder is a grpc-js CertificateProvider (identity and CA from the one folder): credentials built
// on it (tls-credentials.ts) hand new connections the latest identity; open connections keep theirs.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { type FSWatcher, readFileSync, watch } from "node:fs";
import path from "node:path";
import type { experimental } from "@grpc/grpc-js";
import { Code, type Result, TesseraError } from "../kernel/errors.ts";
import type { Logger } from "../kernel/log.ts";

/** The file names of a Kubernetes TLS Secret (kubernetes.io/tls, plus cert-manager's ca.crt). */
export const TLS_FILES = { cert: "tls.crt", key: "tls.key", ca: "ca.crt" } as const;

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  /** Absent only where the folder was opened without needing a CA (a server that asks for no client certificate). */
  ca: Buffer | undefined;
  /** The certificate's serial number (hex, upper case), for logs: which certificate is in use. */
  serial: string;
}

/** Reads and checks a TLS folder; the error names the folder and the file at fault. */
export function readTlsFolder(dir: string, needCa: boolean): Result<TlsMaterial> {
  const problem = (file: string, what: string) => ({
    error: new TesseraError(Code.FAILED_PRECONDITION, `TLS folder ${dir}: ${file} ${what}`),
  });
  const files: Partial<Record<keyof typeof TLS_FILES, Buffer>> = {};
  for (const [name, file] of Object.entries(TLS_FILES) as [keyof typeof TLS_FILES, string][]) {
    try {
      files[name] = readFileSync(path.join(dir, file));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (name === "ca" && !needCa && code === "ENOENT") continue;
      return problem(file, code === "ENOENT" ? "is missing" : `is unreadable: ${(err as Error).message}`);
    }
  }
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(files.cert!);
  } catch (err) {
    return problem(TLS_FILES.cert, `is not a PEM certificate: ${(err as Error).message}`);
  }
  try {
    if (!cert.checkPrivateKey(createPrivateKey(files.key!)))
      return problem(TLS_FILES.key, `does not match ${TLS_FILES.cert} (another certificate's key)`);
  } catch (err) {
    return problem(TLS_FILES.key, `is not a PEM private key: ${(err as Error).message}`);
  }
  if (files.ca !== undefined) {
    const caProblem = certificatesProblem(files.ca);
    if (caProblem) return problem(TLS_FILES.ca, `is unreadable: ${caProblem}`);
  }
  return { value: { cert: files.cert!, key: files.key!, ca: files.ca, serial: cert.serialNumber } };
}

/** Why a CA bundle is not one or more PEM certificates, or undefined. */
function certificatesProblem(pem: Buffer): string | undefined {
  const blocks = pem.toString("utf8").match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks) return "no PEM certificate in it";
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (err) {
      return (err as Error).message;
    }
  }
  return undefined;
}

type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

export interface TlsFolderOptions {
  /** Require ca.crt (mutual TLS, or a client verifying its server against it). */
  needCa: boolean;
  /** Told when a reload of the folder fails its checks (the last good identity stays). */
  onReloadError?: (err: TesseraError) => void;
}

export class TlsFolder implements experimental.CertificateProvider {
  readonly dir: string;
  #material: TlsMaterial;
  readonly #options: TlsFolderOptions;
  readonly #caListeners = new Set<CaListener>();
  readonly #identityListeners = new Set<IdentityListener>();
  readonly #reloadListeners = new Set<(m: TlsMaterial) => void>();
  #watcher: FSWatcher | undefined;
  #pending: NodeJS.Timeout | undefined;

  /** Reads the folder (throws a TesseraError naming the file at fault) and starts watching it. */
  static open(dir: string, options: TlsFolderOptions): TlsFolder {
    const read = readTlsFolder(dir, options.needCa);
    if (read.error) throw read.error;
    return new TlsFolder(dir, read.value, options);
  }

  /**
   * The folder a process was configured with (`setting`: the config field or flag, which a start-up
   * error names before the file at fault); a reload that fails its checks is logged.
   */
  static openSetting(dir: string, setting: string, needCa: boolean, log: Logger): TlsFolder {
    try {
      return TlsFolder.open(dir, {
        needCa,
        onReloadError: (err) =>
          log.error({ err: err.message, dir }, "TLS folder not reloaded; the last good certificate stays"),
      });
    } catch (err) {
      throw new TesseraError(Code.FAILED_PRECONDITION, `${setting}: ${TesseraError.from(err).message}`);
    }
  }

  private constructor(dir: string, material: TlsMaterial, options: TlsFolderOptions) {
    this.dir = dir;
    this.#material = material;
    this.#options = options;
    this.#watcher = watch(dir, { persistent: false }, () => this.#scheduleReload());
    this.#watcher.on("error", () => {});
  }

  /** The identity new connections get. */
  get current(): TlsMaterial {
    return this.#material;
  }

  /** Calls `listener` with each identity a reload brings (not the current one). */
  onReload(listener: (m: TlsMaterial) => void): () => void {
    this.#reloadListeners.add(listener);
    return () => this.#reloadListeners.delete(listener);
  }

  /** Re-reads the folder now; true if it brought a new identity. Watch events call it. */
  reload(): boolean {
    const read = readTlsFolder(this.dir, this.#options.needCa);
    if (read.error) {
      this.#options.onReloadError?.(read.error);
      return false;
    }
    const next = read.value;
    const old = this.#material;
    if (next.cert.equals(old.cert) && next.key.equals(old.key) && sameCa(next.ca, old.ca)) return false;
    this.#material = next;
    for (const l of this.#caListeners) l(caUpdate(next));
    for (const l of this.#identityListeners) l(identityUpdate(next));
    for (const l of this.#reloadListeners) l(next);
    return true;
  }

  /** Stops watching the folder. */
  close(): void {
    clearTimeout(this.#pending);
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  // Several events arrive for one swap (new folder, temporary link, rename, old folder removed): read
  // once they have passed rather than at the first, which may come before the link moved.
  #scheduleReload(): void {
    clearTimeout(this.#pending);
    this.#pending = setTimeout(() => this.reload(), RELOAD_SETTLE_MS);
    this.#pending.unref();
  }

  addCaCertificateListener(listener: CaListener): void {
    this.#caListeners.add(listener);
    listener(caUpdate(this.#material));
  }
  removeCaCertificateListener(listener: CaListener): void {
    this.#caListeners.delete(listener);
  }
  addIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.add(listener);
    listener(identityUpdate(this.#material));
  }
  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.delete(listener);
  }
}

/** How long after the last watch event of a burst the folder is read again. */
const RELOAD_SETTLE_MS = 100;

function sameCa(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.equals(b);
}

function caUpdate(m: TlsMaterial): experimental.CaCertificateUpdate | null {
  return m.ca === undefined ? null : { caCertificate: m.ca };
}

function identityUpdate(m: TlsMaterial): experimental.IdentityCertificateUpdate {
  return { certificate: m.cert, privateKey: m.key };
}
