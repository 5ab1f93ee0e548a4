// Asks before unsaved edits are lost: closing a tab, or opening another folder.

import { h } from "../lib/dom";
import { openModal } from "./modal";

/** `paths`: the file, or the files joined, as the question names them. Closing the dialog keeps
 * the edits. */
export function confirmDiscard(host: HTMLElement, paths: string): Promise<boolean> {
  return new Promise((resolve) => {
    openModal(host, {
      title: "Discard unsaved changes?",
      body: h("p", {}, "Close ", h("code", { text: paths }), " and lose the edits you have not saved?"),
      actions: [
        { label: "Keep editing", run: () => resolve(false) },
        { label: "Discard", kind: "danger", run: () => resolve(true) },
      ],
      onCancel: () => resolve(false),
    });
  });
}
