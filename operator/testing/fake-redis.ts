// An in-process Redis stand-in for specs: AUTH, SELECT, SCAN (MATCH with a literal prefix + "*"),
// UNLINK, SET and DBSIZE over RESP, with keys per database.
import net from "node:net";
import { parseReply, type RespValue } from "../reconcile/resp-client.ts";

function encode(value: RespValue | Error): string {
  if (value instanceof Error) return `-${value.message}\r\n`;
  if (value === null) return "$-1\r\n";
  if (typeof value === "number") return `:${value}\r\n`;
  if (typeof value === "string") return `$${Buffer.byteLength(value)}\r\n${value}\r\n`;
  return `*${value.length}\r\n${value.map(encode).join("")}`;
}

export class FakeRedis {
  readonly dbs = new Map<number, Map<string, string>>();
  readonly commands: string[][] = [];
  password: string | undefined;
  #server: net.Server | undefined;

  db(n: number): Map<string, string> {
    const db = this.dbs.get(n) ?? new Map<string, string>();
    this.dbs.set(n, db);
    return db;
  }

  async start(): Promise<string> {
    this.#server = net.createServer((socket) => this.#serve(socket));
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", () => resolve()));
    return `127.0.0.1:${(this.#server.address() as net.AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  #serve(socket: net.Socket): void {
    let buffer = Buffer.alloc(0);
    let db = 0;
    let authed = this.password === undefined;
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (let reply = parseReply(buffer); reply; reply = parseReply(buffer)) {
        buffer = buffer.subarray(reply.end);
        const args = (reply.value as string[]).map(String);
        this.commands.push(args);
        const [name = "", ...rest] = args;
        let answer: RespValue | Error;
        if (name === "AUTH") {
          authed = rest[0] === this.password;
          answer = authed ? "OK" : new Error("WRONGPASS invalid password");
        } else if (!authed) answer = new Error("NOAUTH Authentication required.");
        else answer = this.#run(name, rest, db, (n) => (db = n));
        socket.write(encode(answer));
      }
    });
  }

  #run(name: string, args: string[], db: number, select: (n: number) => void): RespValue | Error {
    const keys = this.db(db);
    switch (name) {
      case "SELECT":
        select(Number(args[0]));
        return "OK";
      case "SET":
        keys.set(args[0] ?? "", args[1] ?? "");
        return "OK";
      case "DBSIZE":
        return keys.size;
      case "SCAN": {
        const prefix = (args[2] ?? "*").replace(/\*$/, "").replace(/\\(.)/g, "$1");
        return ["0", [...keys.keys()].filter((k) => k.startsWith(prefix))];
      }
      case "UNLINK":
        return args.filter((k) => keys.delete(k)).length;
      default:
        return new Error(`ERR unknown command '${name}'`);
    }
  }
}
