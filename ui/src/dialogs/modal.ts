// A plain modal dialog for questions that are not confirmations (discard changes?, write a
// call by hand). Esc or × cancels.

import { button, h } from "../lib/dom";

export interface ModalAction {
  label: string;
  kind?: "primary" | "danger";
  /** Return false to keep the dialog open (e.g. the input is not valid yet). */
  run: () => boolean | void;
}

export interface Modal {
  close(): void;
  root: HTMLElement;
}

export function openModal(
  host: HTMLElement,
  options: { title: string; body: Node; actions: ModalAction[]; onCancel?: () => void; className?: string },
): Modal {
  const close = () => {
    document.removeEventListener("keydown", onKey, true);
    root.remove();
  };
  const cancel = () => {
    close();
    options.onCancel?.();
  };
  const onKey = (event: KeyboardEvent) => {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      cancel();
    }
  };
  const actions = options.actions.map((action) =>
    button(
      action.label,
      () => {
        if (action.run() !== false) close();
      },
      { class: action.kind ?? "" },
    ),
  );
  const root = h(
    "div",
    { class: "overlay" },
    h(
      "div",
      { class: `dialog ${options.className ?? ""}`, attrs: { role: "dialog", "aria-modal": "true", "aria-label": options.title } },
      h(
        "header",
        { class: "dialog-header" },
        h("h2", { text: options.title }),
        h("span", { class: "spacer" }),
        button("×", cancel, { class: "icon-button", title: "Close", attrs: { "aria-label": "Close" } }),
      ),
      h("div", { class: "dialog-body" }, options.body),
      h("footer", { class: "dialog-footer" }, h("span", { class: "spacer" }), ...actions),
    ),
  );
  document.addEventListener("keydown", onKey, true);
  host.append(root);
  (root.querySelector("textarea, select, input") as HTMLElement | null)?.focus() ?? actions.at(-1)?.focus();
  return { close, root };
}
