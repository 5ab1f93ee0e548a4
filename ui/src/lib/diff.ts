// Unified diffs, as the write tool produces them, turned into lines to colour.

export type DiffLineKind = "header" | "hunk" | "added" | "removed" | "context" | "note";

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

export function diffLines(unified: string): DiffLine[] {
  const lines = unified.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.map((text) => ({ kind: kindOf(text), text }));
}

function kindOf(line: string): DiffLineKind {
  if (line.startsWith("+++ ") || line.startsWith("--- ")) return "header";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "added";
  if (line.startsWith("-")) return "removed";
  // The tool's own notes ("… diff cut: N more bytes", "\ No newline at end of file").
  if (line.startsWith("…") || line.startsWith("\\")) return "note";
  return "context";
}
