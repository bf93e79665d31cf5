import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, maskUrl } from "../src/index.js";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      cb();
    },
  });
  return { lines, logger: createLogger({ level: "info", destination }) };
}

describe("the services' logger", () => {
  it("masks the password of a connection string and keeps the rest", () => {
    expect(maskUrl("postgres://tether:s3cret@db.internal:5432/tether")).toBe("postgres://tether:***@db.internal:5432/tether");
    expect(maskUrl("http://elastic:changeme@es:9200")).toBe("http://elastic:***@es:9200/");
    expect(maskUrl("http://127.0.0.1:9200")).toBe("http://127.0.0.1:9200/");
  });

  it("never writes tokens, authorization headers or passwords, even inside error messages", () => {
    const { lines, logger } = capture();
    logger.info({ token: "tok-123", headers: { authorization: "Bearer abc.def" }, req: { headers: { authorization: "Bearer xyz" } } }, "request");
    logger.info({ DATABASE_URL: "postgres://u:pw-1@h/db", config: { password: "pw-2" } }, "config");
    logger.error({ err: "connect ECONNREFUSED for postgres://u:pw-3@h:5432/db" }, "drain pass failed");
    logger.warn({}, "retrying http://elastic:pw-4@es:9200 soon");
    const out = lines.join("\n");
    for (const secret of ["tok-123", "abc.def", "xyz", "pw-1", "pw-2", "pw-3", "pw-4"]) expect(out).not.toContain(secret);
    expect(out).toContain("postgres://u:***@h:5432/db");
    expect(out).toContain("[redacted]");
    expect(lines.every((l) => typeof JSON.parse(l) === "object")).toBe(true);
  });
});

describe("request URLs in the log", () => {
  it("redact the values of token-like query parameters and keep the others", () => {
    const { lines, logger } = capture();
    logger.info({ req: { url: "/admin/queue?token=tok-9&limit=5&access_token=at-1&api_key=k-2&q=x%22y&password=p\"w" } }, "incoming request");
    const out = lines.join("\n");
    for (const secret of ["tok-9", "at-1", "k-2", 'p\\"w']) expect(out).not.toContain(secret);
    expect(out).toContain("limit=5");
    expect(out).toContain("q=x%22y");
    expect(JSON.parse(lines[0]!).req.url).toBe("/admin/queue?token=[redacted]&limit=5&access_token=[redacted]&api_key=[redacted]&q=x%22y&password=[redacted]");
  });
});
