// The assistant's Markdown as safe HTML: marked renders, DOMPurify removes anything active
// (scripts, handlers, styles, foreign URLs), and links never navigate the app's own window.

import DOMPurify from "dompurify";
import { Marked } from "marked";

const marked = new Marked({ gfm: true, breaks: true, async: false });

const ALLOWED_URL = /^(?:https?:|mailto:|#)/i;

let hooked = false;

function installHooks(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node instanceof HTMLAnchorElement) {
      const href = node.getAttribute("href") ?? "";
      if (!ALLOWED_URL.test(href)) node.removeAttribute("href");
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
}

export function renderMarkdown(text: string): string {
  installHooks();
  const html = marked.parse(text) as string;
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ["style", "img", "iframe", "form", "input", "svg", "math"],
    FORBID_ATTR: ["style"],
  });
}
