import { describe, expect, it } from "vitest";
import { configuredLanes, NotFoundError, resolveLaneName, UnknownLaneError, ValidationError } from "../src/internal.js";

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

describe("a collection's fan-out lane", () => {
  const withFanout = [...collections, { name: "product", jobName: "sync_product", fanoutJobName: "fanout_product" }];

  it("is listed beside its sync lane, and resolves by its job name (the collection name stays the sync lane)", () => {
    expect(configuredLanes(withFanout).filter((l) => l.collection === "product")).toEqual([
      { name: "sync_product", collection: "product", kind: "sync" },
      { name: "fanout_product", collection: "product", kind: "fanout" },
    ]);
    expect(resolveLaneName(withFanout, "fanout_product")).toBe("fanout_product");
    expect(resolveLaneName(withFanout, "product")).toBe("sync_product");
  });

  it("exists only for a collection with fan-out embeds: another collection's is refused, and the error lists the fan-out lanes there are", () => {
    expect(() => resolveLaneName(withFanout, "fanout_annotation")).toThrow(
      'unknown lane "fanout_annotation"; configured: sync_annotation (annotation), sync_widget (widget), sync_product (product), fanout_product (product fan-out)',
    );
  });
});
