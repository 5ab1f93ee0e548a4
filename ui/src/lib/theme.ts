// Dark and light themes: the choice is a data attribute on <html>; every colour is a CSS
// variable, so the editor and all panels follow without reconfiguration.

export type Theme = "dark" | "light";

const STORE_KEY = "lantern.theme";

export function initialTheme(): Theme {
  const stored = localStorage.getItem(STORE_KEY);
  if (stored === "dark" || stored === "light") return stored;
  return window.matchMedia?.("(prefers-color-scheme: light)").matches ? "light" : "dark";
}

export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  localStorage.setItem(STORE_KEY, theme);
}

export function currentTheme(): Theme {
  return document.documentElement.dataset.theme === "light" ? "light" : "dark";
}
