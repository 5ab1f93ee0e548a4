import { describe, expect, it } from "vitest";
import { describeContext, describeEvaluated, describeMatch, describeOpening } from "./format";

describe("describeMatch", () => {
  it("says how and where an edit found its old text", () => {
    expect(describeMatch({ matched_by: "exact", line: 3 })).toBe("exactly, at line 3");
    expect(describeMatch({ matched_by: "indentation", line: 12 })).toBe("with a different indentation, at line 12");
  });

  it("names a matcher it does not know instead of hiding it", () => {
    expect(describeMatch({ matched_by: "fuzzy" })).toBe("by fuzzy");
  });

  it("is null for results that are not an edit's", () => {
    expect(describeMatch({ path: "a.txt", bytes_written: 3 })).toBeNull();
    expect(describeMatch(null)).toBeNull();
  });
});

describe("describeContext", () => {
  it("says how many tokens of the context are used, and how much that is", () => {
    expect(describeContext(1240, 8192)).toEqual({ text: "Context: 1,240 of 8,192 tokens (15 %)", fraction: 1240 / 8192 });
  });

  it("never shows more than full, nor divides by nothing", () => {
    expect(describeContext(9000, 8192).fraction).toBe(1);
    expect(describeContext(10, 0)).toEqual({ text: "Context: 10 of 0 tokens (0 %)", fraction: 0 });
  });
});

describe("describeOpening", () => {
  it("says whether the opening came from the saved cache or was evaluated", () => {
    expect(describeOpening({ how: "loaded", tokens: 1615, seconds: 0.054 })).toMatch(/^1,615 tokens loaded from the saved prompt cache in /);
    expect(describeOpening({ how: "saved", tokens: 1615, seconds: 16.4 })).toMatch(/^1,615 tokens evaluated in .* and saved for the next start$/);
    expect(describeOpening(null)).toMatch(/^not kept/);
  });
});

describe("describeEvaluated", () => {
  it("counts the prompt tokens the last step evaluated", () => {
    expect(describeEvaluated(15)).toBe("last step evaluated 15 new tokens");
    expect(describeEvaluated(1)).toBe("last step evaluated 1 new token");
  });
});
