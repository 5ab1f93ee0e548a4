// Settings: how the agent runs (max steps, grammar, temperature, context, tool choice), the MCP
// tool servers, the standing grants with revoke, and the list of writes with undo.

import type { Checkpoint, Grant, McpView, Settings, ToolChoice } from "../ipc/types";
import { button, clear, h } from "../lib/dom";
import { formatTime } from "../lib/format";
import { McpSection, type McpActions } from "./mcp-servers";

export interface SettingsActions {
  save: (settings: Settings) => Promise<string | null>;
  reloadModel: () => void;
  revoke: (id: string) => void;
  undo: (id: string) => void;
  refresh: () => void;
  mcp: McpActions;
}

/** What a grant covers, in words. */
export function describeScope(grant: Grant): string {
  switch (grant.scope.kind) {
    case "tool":
      return "every call";
    case "path":
      return grant.scope.value;
    case "glob":
      return `files matching ${grant.scope.value}`;
    case "command":
      return `the command ${grant.scope.value}`;
    case "server":
      return "every tool of its server";
  }
}

export class SettingsPanel {
  private settings: Settings | null = null;
  private readonly form = h("form", { class: "settings-form" });
  private readonly formError = h("p", { class: "error-text small" });
  private readonly grants = h("div", { class: "grants" });
  private readonly writes = h("div", { class: "writes" });
  readonly mcp: McpSection;

  constructor(
    readonly root: HTMLElement,
    private readonly actions: SettingsActions,
  ) {
    root.classList.add("settings-panel", "side-page");
    this.form.addEventListener("submit", (e) => e.preventDefault());
    this.mcp = new McpSection(actions.mcp);
    root.append(
      h("section", {}, h("h3", { text: "Assistant" }), this.form, this.formError),
      this.mcp.root,
      h("section", {}, h("div", { class: "section-header" }, h("h3", { text: "Grants" }), h("span", { class: "spacer" }), button("↻", actions.refresh, { class: "icon-button", title: "Refresh" })), this.grants),
      h("section", {}, h("h3", { text: "Writes (newest first)" }), this.writes),
    );
  }

  setSettings(settings: Settings): void {
    this.settings = settings;
    this.renderForm();
  }

  setMcp(view: McpView | string): void {
    this.mcp.setView(view);
  }

  setGrants(grants: Grant[] | string): void {
    clear(this.grants);
    if (typeof grants === "string") {
      this.grants.append(h("p", { class: "muted small", text: grants }));
      return;
    }
    if (grants.length === 0) {
      this.grants.append(h("p", { class: "muted small", text: "No standing grants. Writes ask every time." }));
      return;
    }
    for (const grant of grants) {
      this.grants.append(
        h(
          "div",
          { class: "grant-row", data: { id: grant.id } },
          h("span", { class: `status-chip ${grant.effect === "allow" ? "status-ok" : "status-denied"}`, text: grant.effect }),
          h("span", { class: "mono", text: grant.tool }),
          h("span", { class: "grant-scope", text: describeScope(grant) }),
          h("span", { class: "muted small", text: grant.lifetime === "always" ? "always" : "this session" }),
          h("span", { class: "spacer" }),
          button("Revoke", () => this.actions.revoke(grant.id), { class: "small" }),
        ),
      );
    }
  }

  setCheckpoints(checkpoints: Checkpoint[] | string): void {
    clear(this.writes);
    if (typeof checkpoints === "string") {
      this.writes.append(h("p", { class: "muted small", text: checkpoints }));
      return;
    }
    if (checkpoints.length === 0) {
      this.writes.append(h("p", { class: "muted small", text: "No writes yet in this folder." }));
      return;
    }
    for (const checkpoint of [...checkpoints].reverse()) {
      this.writes.append(
        h(
          "div",
          { class: `write-row${checkpoint.undone ? " undone" : ""}`, data: { id: checkpoint.id } },
          h("span", { class: "muted small", text: checkpoint.id }),
          h("span", { class: "mono write-path", text: checkpoint.path }),
          h("span", { class: "muted small", text: `${checkpoint.origin} · ${formatTime(checkpoint.time_ms)}` }),
          h("span", { class: "spacer" }),
          checkpoint.undone
            ? h("span", { class: "muted small", text: "undone" })
            : checkpoint.evicted
              ? h("span", { class: "muted small", text: "not kept", title: "Dropped to keep the saved contents under their size limit: it can no longer be undone." })
              : button("Undo", () => this.actions.undo(checkpoint.id), { class: "small undo-button" }),
        ),
      );
    }
  }

  private renderForm(): void {
    const s = this.settings;
    clear(this.form);
    if (!s) return;
    const number = (name: keyof Settings, value: number | null, attrs: Record<string, string>, placeholder = "") => {
      const input = h("input", { attrs: { type: "number", name, ...attrs, placeholder } });
      input.value = value === null ? "" : String(value);
      input.addEventListener("change", () => void this.submit());
      return input;
    };
    const grammar = h("input", { attrs: { type: "checkbox", name: "grammar" } });
    grammar.checked = s.grammar;
    grammar.addEventListener("change", () => void this.submit());
    const choice = h("select", { attrs: { name: "tool_choice" } });
    for (const [value, label] of [["auto", "auto (the model decides)"], ["required", "required (always call)"], ["none", "none (never call)"]] as const) {
      choice.append(h("option", { text: label, attrs: { value } }));
    }
    choice.value = s.tool_choice;
    choice.addEventListener("change", () => void this.submit());
    this.form.append(
      field("Max steps per message", number("max_steps", s.max_steps, { min: "1", max: "100", step: "1" })),
      field("Constrain calls with the grammar", grammar),
      field("Temperature (0 = greedy)", number("temperature", s.temperature, { min: "0", max: "2", step: "0.1" })),
      field("Tool choice", choice),
      field("Thinking budget of a local reasoning model (tokens; 0 = none)", number("thinking_budget", s.thinking_budget, { min: "0", max: "8192", step: "64" })),
      field("Context size (tokens)", number("context", s.context, { min: "1024", step: "256" }, "model default")),
      field("Map of the project's code (characters; 0 = none)", number("repo_map", s.repo_map, { min: "0", max: "200000", step: "500" }, "sized to a server model's context, none locally")),
      h("div", { class: "button-row" }, h("span", { class: "muted small", text: "A new context size applies when the model is loaded again." }), button("Reload the model", this.actions.reloadModel, { class: "small" })),
    );
  }

  private async submit(): Promise<void> {
    const data = new FormData(this.form);
    const contextText = String(data.get("context") ?? "").trim();
    const mapText = String(data.get("repo_map") ?? "").trim();
    const next: Settings = {
      max_steps: Number(data.get("max_steps")),
      grammar: data.get("grammar") === "on",
      temperature: Number(data.get("temperature")),
      context: contextText ? Number(contextText) : null,
      tool_choice: String(data.get("tool_choice")) as ToolChoice,
      thinking_budget: Number(data.get("thinking_budget")),
      repo_map: mapText ? Number(mapText) : null,
    };
    const error = await this.actions.save(next);
    this.formError.textContent = error ?? "";
    if (!error) this.settings = next;
  }
}

function field(label: string, control: HTMLElement): HTMLElement {
  return h("label", { class: "field" }, h("span", { text: label }), control);
}
