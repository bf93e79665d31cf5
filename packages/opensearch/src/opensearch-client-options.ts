import { createRequire } from "node:module";
import type { ClientOptions } from "@opensearch-project/opensearch";
import type * as AwsSigner from "@opensearch-project/opensearch/aws";
import type * as CredentialProviderNode from "@aws-sdk/credential-provider-node";
import { readConnectionFiles, type ResolvedConnection } from "@tether/core";

const requireHere = createRequire(import.meta.url);

/**
 * The client options of a decided connection (`resolveConnection`): nodes without credentials
 * (the client's own error texts quote node URLs), basic auth as the client's `auth`, a bearer
 * token as each node's own header (a node's headers stay out of the request objects errors
 * carry), the CA and client certificate read from their files, and for SigV4 the client's own
 * AWS signer with the standard AWS credential chain (environment, shared files, SSO, web
 * identity, ECS or EC2 roles), loaded only when signing is asked for.
 */
export function openSearchClientOptions(c: ResolvedConnection): ClientOptions {
  const files = readConnectionFiles(c);
  const auth = c.auth;
  const headers = auth?.kind === "bearer" ? { authorization: `Bearer ${auth.token}` } : undefined;
  const signer =
    auth?.kind === "aws"
      ? (requireHere("@opensearch-project/opensearch/aws") as typeof AwsSigner).AwsSigv4Signer({
          region: auth.region,
          service: auth.service,
          getCredentials: (requireHere("@aws-sdk/credential-provider-node") as typeof CredentialProviderNode).defaultProvider(),
        })
      : undefined;
  return {
    nodes: c.nodes.map((url) => ({ url: new URL(url), ...(headers ? { headers } : {}) })),
    ...(auth?.kind === "basic" ? { auth: { username: auth.username, password: auth.password } } : {}),
    ...(files.ca || files.cert ? { ssl: { ...(files.ca ? { ca: files.ca } : {}), ...(files.cert ? { cert: files.cert, key: files.key } : {}) } } : {}),
    ...(signer ? { Connection: signer.Connection, Transport: signer.Transport } : {}),
    maxRetries: 0,
    requestTimeout: c.requestTimeoutMs,
  };
}
