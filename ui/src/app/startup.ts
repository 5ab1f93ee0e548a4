// Start-up: the backend's start-up state (version, settings, the folder given on the command
// line, the model) shown, the window marked interactive, then the model list, the tools and the
// model loaded.

import { AppError, backend } from "../ipc";
import type { ToolSpec } from "../ipc/types";
import type { Toasts } from "../lib/toasts";
import type { ModelPanel } from "../panels/model";
import type { SettingsPanel } from "../panels/settings";
import type { Folder } from "./folder";
import type { ModelControl } from "./model";

export interface StartupParts {
  toasts: Toasts;
  settings: SettingsPanel;
  folder: Folder;
  model: ModelControl;
  modelPanel: ModelPanel;
  setTools: (tools: ToolSpec[]) => void;
}

export async function startUp(parts: StartupParts): Promise<void> {
  const { toasts, folder, model } = parts;
  let startup;
  try {
    startup = await backend.startup();
  } catch (error) {
    toasts.show(`Lantern could not start: ${AppError.from(error).message}`, "error");
    return;
  }
  document.title = `Lantern ${startup.version}`;
  parts.settings.setSettings(startup.settings);
  if (startup.workspace) {
    await folder.open(startup.workspace);
  } else if (startup.workspace_error) {
    toasts.show(startup.workspace_error, "error");
  }
  markInteractive();
  void model.refreshList();
  void backend.listTools().then((tools) => parts.setTools(tools));
  parts.modelPanel.fillServer(startup.last_server);
  if (startup.model) {
    model.set({ kind: "ready", info: startup.model });
  } else if (startup.server_to_connect) {
    await model.reconnect(startup.server_to_connect);
  } else if (startup.model_to_load_exists) {
    await model.load(null, startup.model_to_load);
  } else {
    model.set({ kind: "none", reason: `No model yet: ${startup.model_to_load} is not downloaded. Run bash scripts/fetch-model.sh, or choose a GGUF file.` });
  }
}

/** Records when the window first shows the folder and can be used (the model may still be
 * loading): epoch milliseconds, after the next frame is painted. scripts/bench-app.mjs reads it
 * through WebDriver to time start to interactive. */
function markInteractive(): void {
  requestAnimationFrame(() =>
    setTimeout(() => {
      (window as unknown as { lanternInteractiveAt: number }).lanternInteractiveAt = performance.timeOrigin + performance.now();
    }, 0),
  );
}
