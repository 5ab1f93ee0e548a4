import { describe, expect, it } from "vitest";
import { ancestors, buildTree } from "./tree";

describe("buildTree", () => {
  it("nests paths into folders, folders first and sorted", () => {
    const root = buildTree(["src/z.ts", "README.md", "src/app/main.ts", "package.json", "src/a.ts"]);
    expect(root.folders.map((f) => f.name)).toEqual(["src"]);
    expect(root.files.map((f) => f.name)).toEqual(["package.json", "README.md"]);
    const src = root.folders[0]!;
    expect(src.folders.map((f) => f.path)).toEqual(["src/app"]);
    expect(src.files.map((f) => f.path)).toEqual(["src/a.ts", "src/z.ts"]);
    expect(src.folders[0]!.files[0]!.path).toBe("src/app/main.ts");
  });

  it("lists the folders above a path", () => {
    expect(ancestors("a/b/c.txt")).toEqual(["a", "a/b"]);
    expect(ancestors("top.txt")).toEqual([]);
  });
});
