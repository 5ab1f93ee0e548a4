// Write a call by hand: pick a tool, edit its JSON arguments (prefilled with the tool's
// example), run it through the same validation, sandbox and policy as the model's calls.

import type { ToolSpec } from "../ipc/types";
import { h } from "../lib/dom";
import { openModal } from "./modal";

/** The arguments text, parsed: an object, or the reason it is not one. */
export function parseArgs(text: string): { args: Record<string, unknown> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() || "{}");
  } catch (e) {
    return { error: `Not valid JSON: ${(e as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { error: "The arguments must be a JSON object, e.g. {\"path\": \"README.md\"}." };
  }
  return { args: value as Record<string, unknown> };
}

export function openManualCall(
  host: HTMLElement,
  tools: ToolSpec[],
  run: (tool: string, args: Record<string, unknown>) => void,
  initial?: { tool: string; args: unknown },
): void {
  const select = h("select", { class: "manual-tool", attrs: { "aria-label": "tool" } });
  for (const tool of tools) {
    select.append(h("option", { text: `${tool.name} (${tool.risk})`, attrs: { value: tool.name } }));
  }
  const description = h("p", { class: "muted small manual-description" });
  const args = h("textarea", { class: "manual-args mono", attrs: { rows: "10", spellcheck: "false", "aria-label": "arguments" } });
  const error = h("p", { class: "error-text manual-error" });
  const fill = (useExample: boolean) => {
    const spec = tools.find((t) => t.name === select.value);
    description.textContent = spec?.description ?? "";
    if (useExample) args.value = JSON.stringify(spec?.example ?? {}, null, 2);
    error.textContent = "";
  };
  select.addEventListener("change", () => fill(true));
  if (initial) {
    select.value = initial.tool;
    fill(false);
    args.value = JSON.stringify(initial.args ?? {}, null, 2);
  } else {
    fill(true);
  }
  openModal(host, {
    title: "Write a call",
    className: "manual-dialog",
    body: h(
      "div",
      { class: "manual-call" },
      h("label", { class: "field" }, h("span", { text: "Tool" }), select),
      description,
      h("label", { class: "field" }, h("span", { text: "Arguments" }), args),
      error,
      h("p", { class: "muted small", text: "The call goes through the same validation, sandbox and permissions as the model's." }),
    ),
    actions: [
      {
        label: "Run",
        kind: "primary",
        run: () => {
          const parsed = parseArgs(args.value);
          if ("error" in parsed) {
            error.textContent = parsed.error;
            return false;
          }
          run(select.value, parsed.args);
          return true;
        },
      },
    ],
  });
}
