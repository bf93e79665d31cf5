export * from "./client-error.js";
export * from "./connection-error.js";
export * from "./error-contract.js";
export * from "./error-response.js";
export * from "./http-error.js";
export * from "./json-body.js";
