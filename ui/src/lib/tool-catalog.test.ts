import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../ipc/types";
import { ToolCatalog } from "./tool-catalog";

function spec(name: string, preview_kind: ToolSpec["preview_kind"], result_kind: ToolSpec["result_kind"]): ToolSpec {
  return { name, description: "", risk: "read", input_schema: {}, example: {}, preview_kind, result_kind };
}

describe("the tool catalog", () => {
  it("answers each tool's declared kinds, and nothing for a tool it does not know", () => {
    const catalog = new ToolCatalog();
    expect(catalog.resultKind("write_file")).toBeUndefined();
    catalog.set([spec("write_file", "diff", "write"), spec("read_file", "none", "file_content")]);
    expect(catalog.specs.map((s) => s.name)).toEqual(["write_file", "read_file"]);
    expect(catalog.resultKind("write_file")).toBe("write");
    expect(catalog.resultKind("read_file")).toBe("file_content");
    expect(catalog.resultKind("no_such_tool")).toBeUndefined();
  });
});
