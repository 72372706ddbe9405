// The router's public entry: what the CLI (`tessera router`) needs to start it. Nothing else outside
// services/router imports the router (scripts/import-direction.ts).
export { loadRouterConfig, parseRouterConfigJson, type RouterConfig } from "./config/router-config.ts";
export { runRouter } from "./run-router.ts";
