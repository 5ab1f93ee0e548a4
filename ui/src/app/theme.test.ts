import { describe, expect, it } from "vitest";
import { ThemeSwitch } from "./theme";

describe("the theme switch", () => {
  it("applies the stored theme and shows the other one's symbol", () => {
    localStorage.setItem("lantern.theme", "light");
    const button = document.createElement("button");
    const theme = new ThemeSwitch(button);
    expect(document.documentElement.dataset.theme).toBe("light");
    expect(button.textContent).toBe("☾");
    theme.toggle();
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(localStorage.getItem("lantern.theme")).toBe("dark");
    expect(button.textContent).toBe("☀");
  });
});
