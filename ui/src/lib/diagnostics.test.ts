import { Text } from "@codemirror/state";
import { describe, expect, it } from "vitest";
import { DiagnosticsStore, type Finding, reportFromResult, toCodeMirror } from "./diagnostics";

function finding(over: Partial<Finding>): Finding {
  return {
    path: "src/lib.rs",
    line: 1,
    column: 1,
    end_line: null,
    end_column: null,
    severity: "error",
    code: null,
    message: "m",
    source: "cargo",
    ...over,
  };
}

const doc = Text.of(["fn main() {", "    let discount = 5;", "    let shown: String = sum;", "}"]);

describe("toCodeMirror", () => {
  it("maps 1-based lines and columns with an end to offsets", () => {
    const [d] = toCodeMirror(doc, [
      finding({ line: 3, column: 25, end_line: 3, end_column: 28, code: "E0308", message: "mismatched types" }),
    ]);
    const line3 = doc.line(3).from;
    expect(d).toEqual({ from: line3 + 24, to: line3 + 27, severity: "error", message: "mismatched types", source: "cargo E0308" });
    expect(doc.sliceString(d!.from, d!.to)).toBe("sum");
  });

  it("underlines the word when there is no end", () => {
    const [d] = toCodeMirror(doc, [finding({ line: 2, column: 9, severity: "warning", code: "unused_variables" })]);
    expect(doc.sliceString(d!.from, d!.to)).toBe("discount");
    expect(d!.severity).toBe("warning");
  });

  it("clamps positions past the end of an edited document", () => {
    const [d] = toCodeMirror(doc, [finding({ line: 40, column: 90, end_line: 50, end_column: 1 })]);
    expect(d!.from).toBe(doc.length);
    expect(d!.to).toBe(doc.length);
  });

  it("counts columns in characters, not UTF-16 units", () => {
    const emoji = Text.of(["const s = '😀'; x"]);
    const [d] = toCodeMirror(emoji, [finding({ line: 1, column: 16, source: "ruff" })]);
    expect(emoji.sliceString(d!.from, d!.to)).toBe("x");
  });
});

describe("reportFromResult", () => {
  it("groups findings by file and skips malformed entries", () => {
    const report = reportFromResult({
      diagnostics: [finding({ path: "a.py", line: 3 }), { path: "b.py" }, finding({ path: "a.py", line: 1 })],
      errors: 2,
    });
    expect(report?.file).toBeNull();
    expect(report?.byPath.get("a.py")?.map((f) => f.line)).toEqual([3, 1]);
    expect(report?.byPath.has("b.py")).toBe(false);
  });

  it("is null for other results", () => {
    expect(reportFromResult({ content: "x" })).toBeNull();
    expect(reportFromResult(null)).toBeNull();
  });
});

describe("DiagnosticsStore", () => {
  it("a whole-workspace check replaces everything, a narrowed one only its file", () => {
    const store = new DiagnosticsStore();
    const all = reportFromResult({ diagnostics: [finding({ path: "a.rs" }), finding({ path: "b.rs" })] })!;
    expect(store.apply(all).sort()).toEqual(["a.rs", "b.rs"]);
    const narrowed = reportFromResult({ diagnostics: [], file: "a.rs" })!;
    expect(store.apply(narrowed)).toEqual(["a.rs"]);
    expect(store.for("a.rs")).toEqual([]);
    expect(store.for("b.rs")).toHaveLength(1);
    const clean = reportFromResult({ diagnostics: [] })!;
    expect(store.apply(clean)).toEqual(["b.rs"]);
    expect(store.for("b.rs")).toEqual([]);
  });
});
