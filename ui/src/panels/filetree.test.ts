import { describe, expect, it } from "vitest";
import { indexNote } from "./filetree";

describe("the code index's note under the file tree", () => {
  const status = { done: 0, total: 0, files: 0, definitions: 0 };

  it("shows progress while the index is built, then what it holds", () => {
    expect(indexNote({ ...status, state: "building", done: 256, total: 500 })).toBe("indexing code 256/500…");
    expect(indexNote({ ...status, state: "building" })).toBe("indexing code…");
    expect(indexNote({ ...status, state: "ready", files: 500, definitions: 6810 })).toBe("code index: 500 files, 6810 definitions");
  });

  it("says why it failed, and nothing before it starts", () => {
    expect(indexNote({ ...status, state: "failed", error: "the folder is gone" })).toBe("code index failed: the folder is gone");
    expect(indexNote({ ...status, state: "not_built" })).toBeNull();
    expect(indexNote(null)).toBeNull();
  });
});
