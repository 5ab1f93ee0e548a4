import { describe, expect, it } from "vitest";
import type { ModelInfo } from "../ipc/types";
import { chipLabel } from "./model";

describe("the model chip", () => {
  it("names the loaded model, with its file and context as the tooltip", () => {
    const info = { facts: { path: "/models/qwen.gguf", name: "qwen", context: 8192 }, is_default: true } as ModelInfo;
    expect(chipLabel({ kind: "ready", info })).toEqual({ text: "qwen", title: "/models/qwen.gguf — 8192 tokens of context" });
  });

  it("shows loading progress, then calibration, without a tooltip of its own", () => {
    expect(chipLabel({ kind: "loading", path: "m", progress: { stage: "reading", fraction: 0.426 } })).toEqual({ text: "Loading 43%" });
    expect(chipLabel({ kind: "loading", path: "m", progress: { stage: "calibrating" } })).toEqual({ text: "Calibrating…" });
  });

  it("says when there is no model or it failed", () => {
    expect(chipLabel({ kind: "error", message: "bad file" })).toEqual({ text: "Model failed to load" });
    expect(chipLabel({ kind: "none", reason: "not downloaded" })).toEqual({ text: "No model" });
  });
});
