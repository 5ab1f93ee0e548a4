// The only code that talks to the backend. Every command is a typed function here; streams
// (agent events, confirmations, load progress) arrive over Tauri channels created here too.

import { Channel, invoke } from "@tauri-apps/api/core";
import type {
  AgentEvent,
  Answer,
  AppError as AppErrorPayload,
  ChatOpened,
  ChatSummary,
  Checkpoint,
  CodeMapInfo,
  DefinitionPlace,
  ErrorCode,
  ExportedTranscript,
  Grant,
  IndexStatus,
  LoadProgress,
  McpEdit,
  McpScope,
  McpView,
  ModelInfo,
  ModelList,
  OutlineEntry,
  ProbeReport,
  RulesInfo,
  SavedFile,
  ServerForm,
  ServerReport,
  Settings,
  Startup,
  TextFile,
  ToolResult,
  ToolSpec,
  Tree,
  UndoOutcome,
  Update,
  WorkspaceInfo,
} from "./types";

export type * from "./types";

/**
 * A failed command: the backend's `{code, message, details}` (the generated `AppError`
 * payload, which this class stands for wherever `AppError` is imported from here).
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, details: unknown = null) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.details = details;
  }

  /** Whatever a command rejected with, as an AppError. */
  static from(error: unknown): AppError {
    if (error instanceof AppError) return error;
    if (typeof error === "object" && error !== null && "code" in error && "message" in error) {
      const e = error as AppErrorPayload;
      return new AppError(e.code, String(e.message), e.details ?? null);
    }
    // IPC failures (a missing permission, a dead backend) reject with a plain string.
    return new AppError("internal", typeof error === "string" ? error : String(error));
  }
}

/** The backend commands, by name, exactly as `src-tauri/src/command_list.rs` lists them. */
export const COMMANDS = [
  "startup",
  "pick_workspace",
  "list_tree",
  "code_index_status",
  "go_to_definition",
  "read_file",
  "save_file",
  "send_message",
  "cancel",
  "answer_confirmation",
  "list_models",
  "pick_model_file",
  "load_model",
  "server_models",
  "test_server",
  "connect_server",
  "probe_model",
  "list_tools",
  "run_call",
  "list_grants",
  "revoke_grant",
  "list_checkpoints",
  "undo",
  "export_transcript",
  "new_chat",
  "list_chats",
  "open_chat",
  "continue_chat",
  "delete_chat",
  "update_settings",
  "file_outline",
  "complete_symbols",
  "project_rules",
  "code_map",
  "mcp_servers",
  "change_mcp",
  "restart_mcp",
] as const;

export type Command = (typeof COMMANDS)[number];

async function call<T>(command: Command, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    throw AppError.from(error);
  }
}

function updates(onUpdate: (update: Update) => void): Channel<Update> {
  const channel = new Channel<Update>();
  channel.onmessage = onUpdate;
  return channel;
}

export const backend = {
  startup: () => call<Startup>("startup"),
  /** Resolves with `null` when the user closes the folder dialog. */
  pickWorkspace: () => call<WorkspaceInfo | null>("pick_workspace"),
  listTree: () => call<Tree>("list_tree"),
  codeIndexStatus: () => call<IndexStatus>("code_index_status"),
  /** Where a name is defined in the open folder's code, the surest first. */
  goToDefinition: (name: string) => call<DefinitionPlace[]>("go_to_definition", { name }),
  /** Names the code defines that begin with `prefix`, for `@` mentions. */
  completeSymbols: (prefix: string) => call<string[]>("complete_symbols", { prefix }),
  /** What a file defines, in order, from the code index (empty for an unindexed language). */
  fileOutline: (path: string) => call<OutlineEntry[]>("file_outline", { path }),
  readFile: (path: string) => call<TextFile>("read_file", { path }),
  saveFile: (path: string, content: string) => call<SavedFile>("save_file", { path, content }),
  /** Runs a message to the end; resolves with the `turn_finished` event. */
  sendMessage: (message: string, onUpdate: (update: Update) => void) =>
    call<Extract<AgentEvent, { event: "turn_finished" }>>("send_message", {
      message,
      onUpdate: updates(onUpdate),
    }),
  cancel: () => call<void>("cancel"),
  answerConfirmation: (id: number, answer: Answer) =>
    call<void>("answer_confirmation", { id, answer }),
  listModels: () => call<ModelList>("list_models"),
  /** Resolves with `null` when the user closes the file dialog. */
  pickModelFile: () => call<string | null>("pick_model_file"),
  /** `path` null loads the remembered or default model. */
  loadModel: (path: string | null, onProgress: (progress: LoadProgress) => void) => {
    const progress = new Channel<LoadProgress>();
    progress.onmessage = onProgress;
    return call<ModelInfo>("load_model", { path, onProgress: progress });
  },
  probeModel: () => call<ProbeReport>("probe_model"),
  serverModels: (form: ServerForm) => call<string[]>("server_models", { form }),
  testServer: (form: ServerForm) => call<ServerReport>("test_server", { form }),
  connectServer: (form: ServerForm) => call<ModelInfo>("connect_server", { form }),
  listTools: () => call<ToolSpec[]>("list_tools"),
  runCall: (tool: string, args: unknown, onUpdate: (update: Update) => void) =>
    call<ToolResult>("run_call", { tool, args, onUpdate: updates(onUpdate) }),
  listGrants: () => call<Grant[]>("list_grants"),
  revokeGrant: (id: string) => call<Grant>("revoke_grant", { id }),
  listCheckpoints: () => call<Checkpoint[]>("list_checkpoints"),
  /** `checkpoint` null undoes the newest write. */
  undo: (checkpoint: string | null) => call<UndoOutcome>("undo", { checkpoint }),
  /** Resolves with `null` when the user closes the save dialog. */
  exportTranscript: () => call<ExportedTranscript | null>("export_transcript"),
  newChat: () => call<WorkspaceInfo>("new_chat"),
  listChats: () => call<ChatSummary[]>("list_chats"),
  openChat: (path: string) => call<AgentEvent[]>("open_chat", { path }),
  continueChat: (path: string) => call<ChatOpened>("continue_chat", { path }),
  deleteChat: (path: string) => call<void>("delete_chat", { path }),
  updateSettings: (settings: Settings) => call<Settings>("update_settings", { settings }),
  /** The open project's AGENTS.md (or the like) and what it costs; null when it has none. */
  projectRules: () => call<RulesInfo | null>("project_rules"),
  codeMap: () => call<CodeMapInfo>("code_map"),
  /** The MCP servers of the user and of the open project, with their state and tools. */
  mcpServers: () => call<McpView>("mcp_servers"),
  /** Changes a server's definition, then starts the servers again. */
  changeMcp: (name: string, scope: McpScope, edit: McpEdit) =>
    call<McpView>("change_mcp", { name, scope, edit }),
  restartMcp: () => call<McpView>("restart_mcp"),
};

export type Backend = typeof backend;
