// Which CodeMirror language mode a file gets, by its name.

import { css } from "@codemirror/lang-css";
import { html } from "@codemirror/lang-html";
import { javascript } from "@codemirror/lang-javascript";
import { json } from "@codemirror/lang-json";
import { markdown } from "@codemirror/lang-markdown";
import { python } from "@codemirror/lang-python";
import { rust } from "@codemirror/lang-rust";
import type { Extension } from "@codemirror/state";

export type LanguageName =
  | "TypeScript"
  | "TSX"
  | "JavaScript"
  | "JSX"
  | "JSON"
  | "Rust"
  | "Python"
  | "Markdown"
  | "HTML"
  | "CSS"
  | "Plain text";

const BY_EXTENSION: Record<string, LanguageName> = {
  ts: "TypeScript",
  mts: "TypeScript",
  cts: "TypeScript",
  tsx: "TSX",
  js: "JavaScript",
  mjs: "JavaScript",
  cjs: "JavaScript",
  jsx: "JSX",
  json: "JSON",
  jsonc: "JSON",
  rs: "Rust",
  py: "Python",
  pyi: "Python",
  md: "Markdown",
  markdown: "Markdown",
  html: "HTML",
  htm: "HTML",
  css: "CSS",
};

export function languageOf(path: string): LanguageName {
  const name = path.split("/").pop() ?? "";
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return "Plain text";
  return BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? "Plain text";
}

export function languageExtension(language: LanguageName): Extension {
  switch (language) {
    case "TypeScript":
      return javascript({ typescript: true });
    case "TSX":
      return javascript({ typescript: true, jsx: true });
    case "JavaScript":
      return javascript();
    case "JSX":
      return javascript({ jsx: true });
    case "JSON":
      return json();
    case "Rust":
      return rust();
    case "Python":
      return python();
    case "Markdown":
      return markdown();
    case "HTML":
      return html();
    case "CSS":
      return css();
    case "Plain text":
      return [];
  }
}
