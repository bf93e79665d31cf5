import { describe, expect, it } from "vitest";
import { NotFoundError, resolveLaneName, UnknownLaneError, ValidationError } from "../src/internal.js";

const collections = [
  { name: "annotation", jobName: "sync_annotation" },
  { name: "widget", jobName: "sync_widget" },
];

describe("resolveLaneName, the one lane rule of `tether pause` and the console", () => {
  it("takes a job name or a collection name and answers the job name", () => {
    expect(resolveLaneName(collections, "sync_annotation")).toBe("sync_annotation");
    expect(resolveLaneName(collections, "annotation")).toBe("sync_annotation");
    expect(resolveLaneName(collections, " widget ")).toBe("sync_widget");
  });

  it("refuses a name no collection handles, naming it and the configured lanes, as a not-found error", () => {
    const err = (() => {
      try {
        resolveLaneName(collections, "sync_anotation");
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(UnknownLaneError);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as UnknownLaneError).message).toBe('unknown lane "sync_anotation"; configured: sync_annotation (annotation), sync_widget (widget)');
    expect((err as UnknownLaneError).lane).toBe("sync_anotation");
  });

  it("accepts any name when forced, and refuses a blank or overlong one even then", () => {
    expect(resolveLaneName(collections, "sync_other_app", { force: true })).toBe("sync_other_app");
    expect(() => resolveLaneName(collections, "   ", { force: true })).toThrow(ValidationError);
    expect(() => resolveLaneName(collections, "x".repeat(201), { force: true })).toThrow(ValidationError);
  });
});
