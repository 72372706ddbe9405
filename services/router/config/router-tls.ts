import type { Logger } from "../../kernel/log.ts";
import { PLAINTEXT } from "../../rpc/grpc-client.ts";
import { clientSecurity } from "../../rpc/tls-credentials.ts";
import { TlsFolder } from "../../rpc/tls-folder.ts";
import type { RouterConfig } from "./router-config.ts";

export class RouterTls {
  readonly workers: TlsFolder | undefined;
  readonly frontDoor: TlsFolder | undefined;
  readonly #config: RouterConfig["tls"];

  private constructor(config: RouterConfig["tls"], workers?: TlsFolder, frontDoor?: TlsFolder) {
    this.#config = config;
    this.workers = workers;
    this.frontDoor = frontDoor;
  }

  /** Opens the configured folders; a bad one fails with its config field, flag and file. */
  static open(config: RouterConfig["tls"], log: Logger): RouterTls {
    const open = (dir: string, needCa: boolean, field: string) =>
      TlsFolder.openSetting(dir, field, needCa, log);
    const workers = config.workers && open(config.workers.dir, true, "tls.workers.dir (--tls-dir)");
    try {
      const { frontDoor } = config;
      const front =
        frontDoor && open(frontDoor.dir, frontDoor.clientAuth, "tls.frontDoor.dir (--front-tls-dir)");
      return new RouterTls(config, workers, front);
    } catch (err) {
      workers?.close();
      throw err;
    }
  }

  /** How the router's channels to workers are secured. */
  get workerSecurity() {
    return this.workers ? clientSecurity(this.workers, this.#config.workers?.serverName) : PLAINTEXT;
  }

  /** The front doors' (gRPC and HTTPS) folder and client authentication, or undefined for plaintext. */
  get frontDoorTls() {
    const clientAuth = this.#config.frontDoor?.clientAuth ?? false;
    return this.frontDoor && { folder: this.frontDoor, clientAuth };
  }

  close(): void {
    this.workers?.close();
    this.frontDoor?.close();
  }
}
