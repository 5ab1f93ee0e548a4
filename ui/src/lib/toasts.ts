// Short notices in a corner: what happened (saved, undone, copied) and what went wrong.

import { h } from "./dom";

export type ToastKind = "info" | "error";

export class Toasts {
  constructor(private readonly host: HTMLElement) {}

  show(message: string, kind: ToastKind = "info"): void {
    const toast = h("div", { class: `toast toast-${kind}`, attrs: { role: kind === "error" ? "alert" : "status" }, text: message });
    toast.addEventListener("click", () => toast.remove());
    this.host.append(toast);
    // Errors stay longer: they usually say what to do.
    setTimeout(() => toast.remove(), kind === "error" ? 9000 : 3500);
    while (this.host.childElementCount > 5) this.host.firstElementChild?.remove();
  }
}
