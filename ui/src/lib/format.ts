// Numbers and values as people read them.

import type { PreparedOpening } from "../ipc/types";

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(0)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(0)}k`;
  return String(n);
}

export function formatTime(ms: number): string {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** How full the model's context is, in words and as a fraction (for the meter's bar). */
export function describeContext(used: number, size: number): { text: string; fraction: number } {
  const fraction = size > 0 ? Math.min(1, used / size) : 0;
  const percent = Math.round(fraction * 100);
  return {
    text: `Context: ${used.toLocaleString("en-US")} of ${size.toLocaleString("en-US")} tokens (${percent} %)`,
    fraction,
  };
}

/** What the last step had the model evaluate of its prompt; the rest came from the cache. */
export function describeEvaluated(evaluated: number): string {
  return `last step evaluated ${evaluated.toLocaleString("en-US")} new ${evaluated === 1 ? "token" : "tokens"}`;
}

/** How the conversations' opening was ready when the model loaded. */
export function describeOpening(opening: PreparedOpening | null): string {
  if (!opening || opening.how === "none") return "not kept (the template does not render the system prompt apart)";
  const tokens = `${opening.tokens.toLocaleString("en-US")} tokens`;
  const took = formatDuration(opening.seconds * 1000);
  switch (opening.how) {
    case "loaded":
      return `${tokens} loaded from the saved prompt cache in ${took}`;
    case "saved":
      return `${tokens} evaluated in ${took} and saved for the next start`;
    case "held":
      return `${tokens} already held`;
  }
}

/** A short one-line summary of a call's arguments: the path, pattern or query if there is one. */
export function summarizeArgs(args: unknown): string {
  if (typeof args !== "object" || args === null) return "";
  const record = args as Record<string, unknown>;
  for (const key of ["path", "directory", "query", "pattern", "command", "title", "file"]) {
    const value = record[key];
    if (typeof value === "string" && value) return value;
  }
  const keys = Object.keys(record);
  return keys.length ? keys.join(", ") : "";
}

/** How an edit found its old text, in words: which matcher (`exact`, `indentation`, …) placed it
 * and at which line; `null` for anything that is not an edit's report. */
export function describeMatch(data: unknown): string | null {
  if (typeof data !== "object" || data === null) return null;
  const { matched_by: matcher, line } = data as { matched_by?: unknown; line?: unknown };
  if (typeof matcher !== "string") return null;
  const words: Record<string, string> = {
    exact: "exactly",
    line_endings: "after matching line endings",
    trailing_whitespace: "ignoring trailing spaces",
    indentation: "with a different indentation",
    line_trimmed: "ignoring spaces around each line",
  };
  const how = words[matcher] ?? `by ${matcher}`;
  return typeof line === "number" ? `${how}, at line ${line}` : how;
}
