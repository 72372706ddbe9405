// The operator's public entry: what the CLI (`tessera operator`) needs to start it. Nothing else outside
// operator/ imports the operator (scripts/import-direction.ts).
export { type OperatorConfig, parseOperatorConfig } from "./operator-config.ts";
export { startOperatorProcess } from "./run-operator.ts";
