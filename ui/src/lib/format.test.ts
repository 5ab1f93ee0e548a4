import { describe, expect, it } from "vitest";
import { describeMatch } from "./format";

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
