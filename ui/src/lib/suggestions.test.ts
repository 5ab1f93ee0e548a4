import { describe, expect, it } from "vitest";
import { suggestionsFor } from "./suggestions";

describe("the empty chat's suggestions", () => {
  it("ask about this project's manifest, main language, biggest folder and one of its files", () => {
    const kit = [
      "LICENSE",
      "README.md",
      "bin/kit.js",
      "models/ledger.js",
      "models/tokenizer.js",
      "helpers/pad.js",
      "helpers/slugify.js",
      "helpers/trim.js",
      "index.js",
      "package.json",
    ];
    expect(suggestionsFor(kit)).toEqual([
      "What version is in package.json?",
      "Which JavaScript files are in helpers?",
      "What does helpers/pad.js do?",
    ]);
  });

  it("name no TypeScript or cart where there is none", () => {
    const quill = ["setup.cfg", "src/quill/core.py", "src/quill/utils.py", "tests/test_basic.py"];
    const asked = suggestionsFor(quill).join(" ");
    expect(asked).toContain("setup.cfg");
    expect(asked).toContain("Python files are in src/quill");
    expect(asked).not.toMatch(/TypeScript|cart/);
  });

  it("fall back to a question any folder can answer", () => {
    expect(suggestionsFor([])).toEqual(["What files are in this folder?"]);
    expect(suggestionsFor(["notes.txt"])).toEqual(["What files are in this folder?"]);
  });
});
