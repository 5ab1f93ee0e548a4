import { afterEach, describe, expect, it } from "vitest";
import { confirmDiscard } from "./discard";

function answer(label: string): void {
  const buttons = [...document.querySelectorAll<HTMLButtonElement>(".dialog button")];
  buttons.find((b) => b.textContent === label)!.click();
}

afterEach(() => document.body.replaceChildren());

describe("the discard question", () => {
  it("names the files and resolves with the answer; closing it keeps the edits", async () => {
    const host = document.createElement("div");
    document.body.append(host);
    const discard = confirmDiscard(host, "a.ts, b.ts");
    expect(host.querySelector("code")?.textContent).toBe("a.ts, b.ts");
    answer("Discard");
    expect(await discard).toBe(true);
    expect(host.childElementCount).toBe(0);

    const keep = confirmDiscard(host, "a.ts");
    answer("Keep editing");
    expect(await keep).toBe(false);

    const closed = confirmDiscard(host, "a.ts");
    answer("×");
    expect(await closed).toBe(false);
  });
});
