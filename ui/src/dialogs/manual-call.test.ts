import { describe, expect, it } from "vitest";
import { parseArgs } from "./manual-call";

describe("parseArgs", () => {
  it("accepts a JSON object, and an empty text as no arguments", () => {
    expect(parseArgs('{"path": "a.ts"}')).toEqual({ args: { path: "a.ts" } });
    expect(parseArgs("  ")).toEqual({ args: {} });
  });

  it("says why other text is refused", () => {
    expect(parseArgs("{path: a}")).toMatchObject({ error: expect.stringContaining("Not valid JSON") });
    expect(parseArgs("[1, 2]")).toMatchObject({ error: expect.stringContaining("must be a JSON object") });
    expect(parseArgs("null")).toMatchObject({ error: expect.stringContaining("must be a JSON object") });
  });
});
