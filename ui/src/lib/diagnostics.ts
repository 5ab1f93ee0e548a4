// get_diagnostics results → CodeMirror diagnostics: which files a result speaks for, and where
// each finding sits in a document (1-based line and character column → offsets, clamped to the
// text the editor holds, which may have changed since the check).

import type { Diagnostic as CmDiagnostic } from "@codemirror/lint";
import type { Text } from "@codemirror/state";

export type Severity = "error" | "warning" | "info" | "hint";

/** One finding, as lantern-core's `Diagnostic` serialises it. */
export interface Finding {
  path: string;
  line: number;
  column: number;
  end_line: number | null;
  end_column: number | null;
  severity: Severity;
  code: string | null;
  message: string;
  source: string;
}

/** What a successful get_diagnostics call says about the files. */
export interface DiagnosticsReport {
  /** The findings, by workspace-relative path. */
  byPath: Map<string, Finding[]>;
  /** The one file the call was narrowed to; null when it covered the whole workspace, so that
   * files without findings are now clean. */
  file: string | null;
}

const SEVERITIES: readonly string[] = ["error", "warning", "info", "hint"];

function isFinding(value: unknown): value is Finding {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.path === "string" &&
    typeof v.line === "number" &&
    typeof v.column === "number" &&
    typeof v.message === "string" &&
    typeof v.severity === "string" &&
    SEVERITIES.includes(v.severity)
  );
}

/** Reads a get_diagnostics result's `data`; null when it is not one. */
export function reportFromResult(data: unknown): DiagnosticsReport | null {
  if (typeof data !== "object" || data === null) return null;
  const d = data as Record<string, unknown>;
  if (!Array.isArray(d.diagnostics)) return null;
  const byPath = new Map<string, Finding[]>();
  for (const item of d.diagnostics) {
    if (!isFinding(item)) continue;
    const list = byPath.get(item.path) ?? [];
    list.push(item);
    byPath.set(item.path, list);
  }
  return { byPath, file: typeof d.file === "string" ? d.file : null };
}

/** Offset of a 1-based line and 1-based character column in `doc`, clamped to the line. */
function offset(doc: Text, line: number, column: number): number {
  const clampedLine = Math.min(Math.max(1, Math.floor(line)), doc.lines);
  const info = doc.line(clampedLine);
  // Columns count characters (code points); the document counts UTF-16 units.
  let pos = info.from;
  let remaining = Math.max(1, Math.floor(column)) - 1;
  while (remaining > 0 && pos < info.to) {
    const code = doc.sliceString(pos, pos + 1).charCodeAt(0);
    pos += code >= 0xd800 && code <= 0xdbff && pos + 1 < info.to ? 2 : 1;
    remaining -= 1;
  }
  return pos;
}

/** The end of the word at `from` (at least one character), for findings without an end. */
function wordEnd(doc: Text, from: number): number {
  const line = doc.lineAt(from);
  const rest = doc.sliceString(from, line.to);
  const match = /^[\w$]+/u.exec(rest);
  return Math.min(line.to, from + Math.max(1, match ? match[0].length : 1));
}

/** CodeMirror diagnostics for the findings of one file in the document `doc`. */
export function toCodeMirror(doc: Text, findings: readonly Finding[]): CmDiagnostic[] {
  return findings.map((f) => {
    const from = offset(doc, f.line, f.column);
    let to =
      f.end_line !== null && f.end_line !== undefined && f.end_column !== null && f.end_column !== undefined
        ? offset(doc, f.end_line, f.end_column)
        : wordEnd(doc, from);
    if (to < from) to = from;
    const source = f.code ? `${f.source} ${f.code}` : f.source;
    return { from, to, severity: f.severity, message: f.message, source };
  });
}

/** Keeps per-file findings across calls: a whole-workspace result replaces everything, a
 * narrowed one only its file. */
export class DiagnosticsStore {
  private readonly byPath = new Map<string, Finding[]>();

  apply(report: DiagnosticsReport): string[] {
    const touched = new Set<string>(report.byPath.keys());
    if (report.file === null) {
      for (const path of this.byPath.keys()) touched.add(path);
      this.byPath.clear();
    } else {
      touched.add(report.file);
      this.byPath.delete(report.file);
    }
    for (const [path, list] of report.byPath) {
      if (report.file === null || path === report.file) this.byPath.set(path, list);
    }
    return [...touched];
  }

  for(path: string): Finding[] {
    return this.byPath.get(path) ?? [];
  }

  clear(): void {
    this.byPath.clear();
  }
}
