import { describe, expect, it } from "vitest";
import { languageOf } from "./languages";

describe("languageOf", () => {
  it("picks the language from the extension", () => {
    expect(languageOf("src/cart.ts")).toBe("TypeScript");
    expect(languageOf("src/App.tsx")).toBe("TSX");
    expect(languageOf("lib.rs")).toBe("Rust");
    expect(languageOf("notes/app.py")).toBe("Python");
    expect(languageOf("README.MD")).toBe("Markdown");
    expect(languageOf("package.json")).toBe("JSON");
  });

  it("falls back to plain text", () => {
    expect(languageOf("Makefile")).toBe("Plain text");
    expect(languageOf(".gitignore")).toBe("Plain text");
    expect(languageOf("config.toml")).toBe("Plain text");
  });
});
