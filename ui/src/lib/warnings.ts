// A write's loss of lines in words, as the confirmation and the inspector both show it.

import type { DroppedLines } from "../ipc/types";
import { h } from "./dom";

/** "4 of the 5 non-blank lines of `notes.md`" for each file, how many of them live on changed,
 * and how many lines were written over where the user asked to change nothing there. */
export function lossList(drops: DroppedLines[]): (string | HTMLElement)[] {
  return drops.flatMap((d, i) => {
    const notes = [
      d.dropped > d.lost ? `${d.dropped - d.lost} of them only changed` : "",
      d.asked_to_keep && d.lost > 0 ? `${d.lost} written over, though you asked to change nothing there` : "",
    ].filter(Boolean);
    return [i ? ", " : "", `${d.dropped} of the ${d.of} non-blank lines of `, h("code", { text: d.path }), notes.length ? ` (${notes.join("; ")})` : ""];
  });
}
