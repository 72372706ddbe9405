// Runs the dev cluster API server on its own:
//   node devtools/devcluster/apiserver/main.ts [--port 6443] [--state-file f.json] [--kubeconfig path]
//     [--token-auth-file tokens.csv]
// Prints the URL and how to point kubectl at it; stops on SIGINT/SIGTERM.
import { Command } from "commander";
import { startApiServer } from "./api-server.ts";

const program = new Command("devcluster-apiserver")
  .description("Kubernetes-API-compatible server of the Tessera dev cluster")
  .option("--host <host>", "address to listen on", "127.0.0.1")
  .option("--port <port>", "port (0 picks a free one)", "0")
  .option("--state-file <file>", "keep the cluster state in this file")
  .option("--kubeconfig <file>", "write a kubeconfig here", ".tessera/kubeconfig")
  .option("--graceful-pod-deletion", "let a kubelet finish pod deletion", false)
  .option("--token-auth-file <file>", 'static bearer tokens, one `token,user,uid,"group1,group2"` line each')
  .parse();

const opts = program.opts<{
  host: string;
  port: string;
  stateFile?: string;
  kubeconfig: string;
  gracefulPodDeletion: boolean;
  tokenAuthFile?: string;
}>();
const server = await startApiServer({
  host: opts.host,
  port: Number(opts.port),
  kubeconfigPath: opts.kubeconfig,
  gracefulPodDeletion: opts.gracefulPodDeletion,
  ...(opts.stateFile ? { stateFile: opts.stateFile } : {}),
  ...(opts.tokenAuthFile ? { tokenAuthFile: opts.tokenAuthFile } : {}),
});
const stop = () => {
  void server.close().then(() => process.exit(0));
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
process.stdout.write(`API server: ${server.url}\nexport KUBECONFIG=${opts.kubeconfig}\n`);
