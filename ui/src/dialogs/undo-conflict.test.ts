import { describe, expect, it } from "vitest";
import { AppError } from "../ipc";
import { renderUndoConflict, undoConflictOf } from "./undo-conflict";

const conflict = {
  checkpoint: "cp-1",
  path: "src/cart.ts",
  before: { exists: true, sha256: "aaaaaaaaaaaaaaaa", bytes: 24, file: null },
  agent: { exists: true, sha256: "bbbbbbbbbbbbbbbb", bytes: 24, file: null },
  now: { exists: true, sha256: "cccccccccccccccc", bytes: 24, file: null },
  agent_changes: "--- a\n+++ b\n@@ -1 +1 @@\n-export const total = 1;\n+export const total = 3;\n",
  later_changes: null,
};

describe("a refused undo", () => {
  it("is recognised by the conflict in its details, and nothing else is", () => {
    expect(undoConflictOf(new AppError("invalid", "changed", { undo_conflict: conflict, hint: "x" }))?.path).toBe("src/cart.ts");
    expect(undoConflictOf(new AppError("invalid", "no details"))).toBeNull();
    expect(undoConflictOf(new AppError("invalid", "other", { hint: "x" }))).toBeNull();
    expect(undoConflictOf(new AppError("invalid", "partial", { undo_conflict: { path: "a" } }))).toBeNull();
  });

  it("shows the three versions and both diffs", () => {
    const view = renderUndoConflict(conflict);
    const labels = [...view.querySelectorAll("dt")].map((dt) => dt.textContent);
    expect(labels).toEqual(["Before the assistant's write", "The assistant's version", "Now"]);
    expect(view.querySelector("dd")?.textContent).toContain("24 bytes");
    expect(view.textContent).toContain("+export const total = 3;");
    expect(view.querySelector(".diff-removed")?.textContent).toBe("-export const total = 1;");
    // A diff that could not be made says so.
    expect(view.textContent).toContain("Not shown");
  });
});
