import { createHash } from "node:crypto";
import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import type { ReceivedRequest, Verdict } from "./verifying-proxy.js";

const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;

/**
 * A `startVerifyingProxy` check that accepts only requests signed with AWS SigV4 by the given
 * credentials for `region` and `service`: it recomputes the signature with the AWS SDK's own
 * signer (`@smithy/signature-v4`, not the client's `aws4`) over the headers the request says it
 * signed, and checks the body against its `x-amz-content-sha256`. Anything else is refused 403,
 * as OpenSearch Service refuses it.
 *
 * @example
 * const proxy = await startVerifyingProxy({ target: openSearchUrl, check: sigV4Check({ accessKeyId: "AKID", secretAccessKey: "s", region: "eu-west-1", service: "es" }) });
 */
export function sigV4Check(c: { accessKeyId: string; secretAccessKey: string; region: string; service: string }): (r: ReceivedRequest) => Promise<Verdict> {
  const signer = new SignatureV4({ credentials: { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey }, region: c.region, service: c.service, sha256: Sha256 });
  const refuse = (reason: string): Verdict => ({ refuse: { status: 403, reason } });
  return async (r) => {
    const m = AUTHORIZATION.exec(String(r.headers.authorization ?? ""));
    if (!m) return refuse("missing or malformed SigV4 Authorization header");
    const [, keyId, day, region, service, signedHeaders, signature] = m;
    if (keyId !== c.accessKeyId) return refuse("The security token included in the request is invalid");
    if (region !== c.region || service !== c.service) return refuse(`signed for ${region}/${service}, not ${c.region}/${c.service}`);
    const amzDate = String(r.headers["x-amz-date"] ?? "");
    const when = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
    if (!when || amzDate.slice(0, 8) !== day) return refuse("missing or inconsistent X-Amz-Date");
    const bodyHash = createHash("sha256").update(r.body).digest("hex");
    if (r.headers["x-amz-content-sha256"] !== bodyHash) return refuse("the body does not match its x-amz-content-sha256");
    const names = signedHeaders!.split(";");
    const headers: Record<string, string> = {};
    for (const h of names) headers[h] = String(r.headers[h] ?? "");
    const url = new URL(r.url, "http://placeholder");
    const query: Record<string, string | string[]> = {};
    for (const [k, v] of url.searchParams) query[k] = k in query ? [...([] as string[]).concat(query[k]!), v] : v;
    const signed = await signer.sign(
      { method: r.method, protocol: "http:", hostname: headers.host ?? "", path: url.pathname, query, headers, body: r.body },
      { signingDate: new Date(Date.UTC(+when[1]!, +when[2]! - 1, +when[3]!, +when[4]!, +when[5]!, +when[6]!)), signableHeaders: new Set(names) },
    );
    const expected = /Signature=([0-9a-f]{64})/.exec(String(signed.headers.authorization ?? signed.headers.Authorization ?? ""))?.[1];
    if (expected !== signature) return refuse("The request signature we calculated does not match the signature you provided");
    return { forward: {} };
  };
}
