// The shapes the backend sends and accepts. Every Rust type that crosses IPC is generated into
// ./generated/ from its JSON Schema (regenerate with the command in those files' header), so
// a change on the Rust side that the UI does not follow fails the type check. Written here by
// hand: the names the UI knows some of them by, and what Rust sends as untyped JSON.

import type { Event } from "./generated/events";
import type { Version } from "./generated/tools";

export type * from "./generated/tools";
export type * from "./generated/events";
export type * from "./generated/app";

/** The agent's events (`Event` in Rust), named apart from the DOM's `Event`. */
export type AgentEvent = Event;
/** The agent event of one kind, by its `event` tag. */
export type AgentEventOf<K extends AgentEvent["event"]> = Extract<AgentEvent, { event: K }>;

/** One of the three versions of a refused undo (`Version` in Rust). */
export type UndoVersion = Version;

/**
 * What a write's confirmation shows: the diff of old and new content. Rust builds it as a JSON
 * value (`PermissionRequest.preview` is any JSON, whose shape depends on the tool), so it has
 * no schema to generate from; the confirmation checks for it before using it.
 */
export interface WritePreview {
  path: string;
  created: boolean;
  lines_added: number;
  lines_removed: number;
  unified: string;
  old_content: string | null;
}
