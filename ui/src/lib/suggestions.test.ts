import { describe, expect, it } from "vitest";
import { suggestionsFor } from "./suggestions";

describe("the empty chat's suggestions", () => {
  it("ask about this project's manifest, main language, biggest folder and one of its files", () => {
    const semver = [
      "LICENSE",
      "README.md",
      "bin/semver.js",
      "classes/comparator.js",
      "classes/range.js",
      "functions/clean.js",
      "functions/coerce.js",
      "functions/inc.js",
      "index.js",
      "package.json",
    ];
    expect(suggestionsFor(semver)).toEqual([
      "What version is in package.json?",
      "Which JavaScript files are in functions?",
      "What does functions/clean.js do?",
    ]);
  });

  it("name no TypeScript or cart where there is none", () => {
    const click = ["setup.cfg", "src/click/core.py", "src/click/utils.py", "tests/test_basic.py"];
    const asked = suggestionsFor(click).join(" ");
    expect(asked).toContain("setup.cfg");
    expect(asked).toContain("Python files are in src/click");
    expect(asked).not.toMatch(/TypeScript|cart/);
  });

  it("fall back to a question any folder can answer", () => {
    expect(suggestionsFor([])).toEqual(["What files are in this folder?"]);
    expect(suggestionsFor(["notes.txt"])).toEqual(["What files are in this folder?"]);
  });
});
