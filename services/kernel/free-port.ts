// A loopback port for a process that needs its number before it listens (a shard group's peers list
// names every member's port up front; Prometheus and redis-server take theirs on the command line).
import net from "node:net";

/** A port that was free a moment ago: the kernel's pick for port 0 on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
