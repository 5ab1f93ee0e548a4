import { describe, expect, it } from "vitest";
import { ARRAY_LIMIT, shorten, STRING_LIMIT } from "./json";

describe("shorten", () => {
  it("cuts long strings and arrays and says so", () => {
    const long = "x".repeat(STRING_LIMIT + 25);
    const many = Array.from({ length: ARRAY_LIMIT + 3 }, (_, i) => i);
    const { value, cut } = shorten({ content: long, files: many, ok: true });
    const v = value as { content: string; files: unknown[]; ok: boolean };
    expect(cut).toBe(true);
    expect(v.content).toContain("(25 more characters)");
    expect(v.files).toHaveLength(ARRAY_LIMIT + 1);
    expect(v.files.at(-1)).toBe("… 3 more items");
    expect(v.ok).toBe(true);
  });

  it("leaves small values alone", () => {
    expect(shorten({ a: "short", b: [1, 2] })).toEqual({ value: { a: "short", b: [1, 2] }, cut: false });
  });
});
