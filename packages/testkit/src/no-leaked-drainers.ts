/**
 * vitest setup file: a test file that leaves a drainer loop running fails.
 */
import { afterAll, expect } from "vitest";
import { Drainer } from "@tether/core";

afterAll(async () => {
  const leaked = Drainer.active.size;
  for (const d of [...Drainer.active]) await d.stop();
  expect(leaked, "a test left a drainer running: stop it in afterAll/afterEach").toBe(0);
});
