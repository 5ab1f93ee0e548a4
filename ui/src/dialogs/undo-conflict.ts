// A refused undo: the file changed after the assistant wrote it, so nothing was overwritten.
// The three versions are shown instead — before the write, what the write left, and now — with
// what the write changed and what changed since.

import type { AppError } from "../ipc";
import type { UndoConflict, UndoVersion } from "../ipc/types";
import { diffLines } from "../lib/diff";
import { h } from "../lib/dom";

/** The conflict a refused undo carries in its details, if `error` is one. */
export function undoConflictOf(error: AppError): UndoConflict | null {
  const details = error.details;
  if (typeof details !== "object" || details === null) return null;
  const conflict = (details as { undo_conflict?: unknown }).undo_conflict;
  if (typeof conflict !== "object" || conflict === null) return null;
  const c = conflict as Partial<UndoConflict>;
  if (typeof c.path !== "string" || !c.before || !c.agent || !c.now) return null;
  return conflict as UndoConflict;
}

function describe(version: UndoVersion): string {
  if (!version.exists) return "did not exist";
  const size = version.bytes === null ? "" : `${version.bytes} bytes`;
  const hash = version.sha256 ? `sha256 ${version.sha256.slice(0, 12)}` : "";
  return [size, hash].filter(Boolean).join(" · ");
}

function diffBlock(title: string, unified: string | null): HTMLElement {
  const body =
    unified === null
      ? h("div", { class: "diff-line diff-note", text: "Not shown: a version is not text or is larger than 1 MiB." })
      : h(
          "pre",
          { class: "diff-body" },
          ...diffLines(unified)
            .filter((line) => line.kind !== "header")
            .map((line) => h("div", { class: `diff-line diff-${line.kind}`, text: line.text || " " })),
        );
  return h("div", { class: "diff" }, h("div", { class: "diff-title" }, h("span", { text: title })), body);
}

/** The body of the dialog: the three versions, then the two diffs between them. */
export function renderUndoConflict(conflict: UndoConflict): HTMLElement {
  const versions: [string, UndoVersion][] = [
    ["Before the assistant's write", conflict.before],
    ["The assistant's version", conflict.agent],
    ["Now", conflict.now],
  ];
  return h(
    "div",
    { class: "undo-conflict" },
    h("p", {
      text: `${conflict.path} changed after the assistant wrote it, so undo left it as it is now. Copy what you need from the versions below.`,
    }),
    h(
      "dl",
      { class: "undo-versions" },
      ...versions.flatMap(([label, version]) => [h("dt", { text: label }), h("dd", { class: "mono", text: describe(version) })]),
    ),
    diffBlock("What the assistant's write changed", conflict.agent_changes),
    diffBlock("What changed since", conflict.later_changes),
  );
}
