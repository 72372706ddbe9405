// grpc-js credentials on a TLS folder (tls-folder.ts), or plaintext where there is none (the default,
// and the dev cluster's). Between our own components TLS is mutual: the server asks for the client's
// certificate and verifies it against ca.crt, the client presents its own and verifies the server's
// against the same CA. A front door may ask for no client certificate (clientAuth false).
// Both sides follow the folder: a reload reaches new connections, open ones keep the identity they
// started with.
import type { SecureContextOptions, TlsOptions } from "node:tls";
import {
  type ChannelCredentials,
  type ChannelOptions,
  credentials,
  experimental,
  ServerCredentials,
} from "@grpc/grpc-js";
import type { ClientSecurity } from "./grpc-client.ts";
import type { TlsFolder, TlsMaterial } from "./tls-folder.ts";

/** What a process needs to speak TLS, from its flags or environment (plain data: it crosses threads). */
export interface TlsSettings {
  /** The mounted Secret: tls.crt, tls.key, ca.crt. */
  dir: string;
  /**
   * A client: the name the server's certificate must carry (its SAN), where it differs from the host
   * dialled (peers dialled by pod IP while the certificate names a Service). Unset: the host dialled.
   */
  serverName?: string | undefined;
}

/** A server's credentials: plaintext without a folder; else TLS, asking for a client certificate if `clientAuth`. */
export function serverCredentials(folder: TlsFolder | undefined, clientAuth = true): ServerCredentials {
  return folder === undefined
    ? ServerCredentials.createInsecure()
    : new FolderServerCredentials(folder, clientAuth);
}

/** A client's credentials: plaintext without a folder; else TLS presenting the folder's certificate. */
export function channelCredentials(folder: TlsFolder | undefined): ChannelCredentials {
  if (folder === undefined) return credentials.createInsecure();
  // One provider for both roles: grpc-js 1.14 names the parameters (ca, identity) in one order and
  // reads them in the other in places; with the same object the order cannot matter.
  return experimental.createCertificateProviderChannelCredentials(folder, folder);
}

/** A client's credentials with the channel options they need (the server name to verify). */
export function clientSecurity(folder: TlsFolder | undefined, serverName?: string): ClientSecurity {
  const options: ChannelOptions =
    folder === undefined || serverName === undefined ? {} : { "grpc.ssl_target_name_override": serverName };
  return { credentials: channelCredentials(folder), options };
}

/**
 * TLS server credentials that follow a TlsFolder: each reload becomes the secure context of the http2
 * servers grpc-js created with them (grpc-js calls setSecureContext), so new connections get it.
 * Written on grpc-js' public ServerCredentials base class rather than its experimental certificate
 * provider credentials, which (1.14) cannot ask for no client certificate without the CA and identity
 * arguments that it swaps.
 */
class FolderServerCredentials extends ServerCredentials {
  constructor(folder: TlsFolder, clientAuth: boolean) {
    super(
      { requestCert: clientAuth, rejectUnauthorized: clientAuth },
      secureContextOf(folder.current, clientAuth),
    );
    folder.onReload((m) => this.updateSecureContextOptions(secureContextOf(m, clientAuth)));
  }

  override _equals(other: ServerCredentials): boolean {
    return other === this;
  }
}

/** A TLS server's secure context from a folder's identity: the CA only where it verifies clients. */
export function secureContextOf(m: TlsMaterial, clientAuth: boolean): SecureContextOptions {
  return { cert: m.cert, key: m.key, ...(clientAuth && m.ca !== undefined && { ca: m.ca }) };
}

/**
 * Options of a Node TLS server (https.createServer) on a folder, and a hook that keeps it on the latest
 * identity: call it with the server once created (https.Server.setSecureContext on each reload).
 */
export function followFolder(
  folder: TlsFolder,
  clientAuth: boolean,
): { options: TlsOptions; follow(server: { setSecureContext(o: SecureContextOptions): void }): () => void } {
  return {
    options: {
      ...secureContextOf(folder.current, clientAuth),
      requestCert: clientAuth,
      rejectUnauthorized: clientAuth,
    },
    follow: (server) => folder.onReload((m) => server.setSecureContext(secureContextOf(m, clientAuth))),
  };
}
