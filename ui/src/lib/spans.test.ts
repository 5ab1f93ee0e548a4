import { describe, expect, it } from "vitest";
import { byteToIndex, splitAround, splitAtSpan } from "./spans";

describe("byte spans", () => {
  it("maps UTF-8 byte offsets to string indices past multi-byte characters", () => {
    const text = "héllo → <TOOL_CALL>";
    // "h" 1 byte, "é" 2 bytes, "llo " 4, "→" 3, " " 1: the tag starts at byte 11.
    expect(byteToIndex(text, 11)).toBe(text.indexOf("<TOOL_CALL>"));
    expect(byteToIndex(text, 0)).toBe(0);
    expect(byteToIndex(text, 10_000)).toBe(text.length);
  });

  it("splits a response around the call's span", () => {
    const response = "Sure 👍 <TOOL_CALL>{}</TOOL_CALL> trailing";
    const start = new TextEncoder().encode("Sure 👍 ").length;
    const end = start + "<TOOL_CALL>{}</TOOL_CALL>".length;
    expect(splitAtSpan(response, { start, end })).toEqual(["Sure 👍 ", "<TOOL_CALL>{}</TOOL_CALL>", " trailing"]);
  });

  it("finds raw text when there is no span, or says it cannot", () => {
    expect(splitAround("a <tool>x</tool> b", "<tool>x</tool>")).toEqual(["a ", "<tool>x</tool>", " b"]);
    expect(splitAround("abc", "zzz")).toBeNull();
    expect(splitAround("abc", "")).toBeNull();
  });
});
