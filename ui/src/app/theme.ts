// The toolbar's theme switch: it shows the symbol of the theme a click switches to.

import { applyTheme, currentTheme, initialTheme } from "../lib/theme";

export class ThemeSwitch {
  /** Applies the stored (or the system's) theme. */
  constructor(private readonly button: HTMLButtonElement) {
    applyTheme(initialTheme());
    this.render();
  }

  toggle(): void {
    applyTheme(currentTheme() === "dark" ? "light" : "dark");
    this.render();
  }

  private render(): void {
    this.button.textContent = currentTheme() === "dark" ? "☀" : "☾";
  }
}
