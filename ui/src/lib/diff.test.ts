import { describe, expect, it } from "vitest";
import { diffLines } from "./diff";

describe("diffLines", () => {
  it("classifies every line of a unified diff", () => {
    const unified = "--- a/x.ts\n+++ b/x.ts\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n… diff cut: 10 more bytes\n";
    expect(diffLines(unified).map((l) => l.kind)).toEqual(["header", "header", "hunk", "context", "removed", "added", "note"]);
  });

  it("gives nothing for an empty diff", () => {
    expect(diffLines("")).toEqual([]);
  });
});
