// The worker's public entry: what the CLI needs to run a model (`tessera serve`, `tessera generate`).
// Nothing else outside services/worker imports the worker (scripts/import-direction.ts).
export { Engine } from "./engine/engine.ts";
