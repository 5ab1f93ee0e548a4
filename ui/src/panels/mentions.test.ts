import { afterEach, describe, expect, it } from "vitest";
import { MentionMenu, matchingFiles, mentionAt } from "./mentions";

afterEach(() => document.body.replaceChildren());

describe("@ mentions", () => {
  it("finds the @ word the caret ends, and only that", () => {
    expect(mentionAt("Why does @src/ca", 16)).toEqual({ start: 9, prefix: "src/ca" });
    expect(mentionAt("(@Ca", 4)).toEqual({ start: 1, prefix: "Ca" });
    expect(mentionAt("@", 1)).toEqual({ start: 0, prefix: "" });
    expect(mentionAt("mail me@example.com", 19)).toBeNull();
    expect(mentionAt("@src/cart.ts done", 17)).toBeNull();
  });

  it("offers files whose name starts with the prefix first", () => {
    const files = ["docs/scart.md", "src/cart.ts", "src/cartesian.ts", "README.md"];
    expect(matchingFiles(files, "cart")).toEqual(["src/cart.ts", "src/cartesian.ts", "docs/scart.md"]);
  });

  it("completes files and definitions, and Enter writes the choice in", async () => {
    const input = document.createElement("textarea");
    const menu = new MentionMenu(input, {
      files: () => ["src/cart.ts", "README.md"],
      symbols: async (prefix) => ["Cart", "CartItem"].filter((n) => n.startsWith(prefix)),
    });
    document.body.append(menu.root, input);
    input.value = "Explain @Ca";
    input.setSelectionRange(11, 11);
    input.dispatchEvent(new Event("input"));
    await new Promise((r) => setTimeout(r, 0));
    const shown = [...menu.root.querySelectorAll(".mention-choice")].map((c) => [c.querySelector(".mono")!.textContent, c.getAttribute("data-kind")]);
    expect(shown).toEqual([["src/cart.ts", "file"], ["Cart", "symbol"], ["CartItem", "symbol"]]);
    menu.key(new KeyboardEvent("keydown", { key: "ArrowDown" }));
    menu.key(new KeyboardEvent("keydown", { key: "Enter" }));
    expect(input.value).toBe("Explain @Cart ");
    expect(menu.open).toBe(false);
  });
});
