// The tools the backend offers (`list_tools`), by name: what the window knows of a call's tool
// beyond its name — what kind of result it declares — so that results are routed by the kind
// their tool declares rather than by recognising tool names. (A confirmation carries its own
// preview kind.)

import type { ResultKind, ToolSpec } from "../ipc/types";

export class ToolCatalog {
  private byName = new Map<string, ToolSpec>();

  /** Replaces what is known with the backend's list. */
  set(specs: ToolSpec[]): void {
    this.byName = new Map(specs.map((spec) => [spec.name, spec]));
  }

  /** Every tool, in the backend's order; empty until the list has been loaded. */
  get specs(): ToolSpec[] {
    return [...this.byName.values()];
  }

  /** What the tool's result holds; undefined for a tool the list does not (yet) name. */
  resultKind(tool: string): ResultKind | undefined {
    return this.byName.get(tool)?.result_kind;
  }
}
