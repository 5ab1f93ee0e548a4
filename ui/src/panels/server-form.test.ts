import { afterEach, describe, expect, it } from "vitest";
import type { ServerForm, ServerReport } from "../ipc/types";
import { describeModel } from "./model";
import { describeReport, ServerFormView } from "./server-form";

afterEach(() => document.body.replaceChildren());

const frame = () => new Promise((resolve) => setTimeout(resolve, 0));

function view(report: ServerReport, connected: ServerForm[] = []) {
  const form = new ServerFormView({
    listModels: async () => report.models,
    test: async () => report,
    connect: async (f) => {
      connected.push(f);
    },
  });
  document.body.append(form.root);
  return form;
}

const click = (label: string) =>
  [...document.querySelectorAll("button")].find((b) => b.textContent === label)!.click();

describe("the server form", () => {
  it("sends no key unless one is typed, and forgets the typed key once connected", async () => {
    const connected: ServerForm[] = [];
    const form = view({ models: ["qwen"], model: "qwen", model_listed: true, calls: "native", why: "it returned a call" }, connected);
    form.fill({ base_url: "http://127.0.0.1:11434/v1/", model: "qwen", calls: "text" });
    expect(form.form()).toEqual({ base_url: "http://127.0.0.1:11434/v1/", model: "qwen", api_key: null, calls: "text" });
    document.querySelector<HTMLInputElement>(".server-key")!.value = " sk-1 ";
    click("Connect");
    await frame();
    expect(connected[0]?.api_key).toBe("sk-1");
    expect(document.querySelector<HTMLInputElement>(".server-key")!.value).toBe("");
  });

  it("says what a test found, and offers the server's models", async () => {
    view({ models: ["a", "b"], model: "a", model_listed: true, calls: "native", why: "the server returned a native tool call" });
    click("Test connection");
    await frame();
    expect(document.querySelector(".server-status")?.textContent).toBe("2 models listed; tool calls: native tool calls — the server returned a native tool call.");
    expect(document.querySelector<HTMLInputElement>(".server-model")!.value).toBe("a");
    expect([...document.querySelectorAll("#server-models option")].map((o) => o.getAttribute("value"))).toEqual(["a", "b"]);
  });

  it("refuses to connect without a model, in words", async () => {
    const connected: ServerForm[] = [];
    view({ models: [], model: "", model_listed: false, calls: null, why: "" }, connected);
    click("Connect");
    await frame();
    expect(connected).toEqual([]);
    expect(document.querySelector(".server-status")?.textContent).toContain("Name the model");
  });
});

describe("a server's model", () => {
  it("shows which path its tool calls take and why, and never a key", () => {
    const shown = describeModel({ kind: "server", server: { base_url: "http://h:8080/v1", model: "qwen", calls: "native", why: "the server returned a native tool call", has_key: true } });
    const text = shown.map((e) => e.textContent).join(" ");
    expect(text).toContain("native — the server returned a native tool call");
    expect(text).toContain("sent (kept apart from the settings)");
    expect(describeReport({ models: ["x"], model: "y", model_listed: false, calls: null, why: "The server does not offer a model named \"y\"." })).toBe('1 model listed. The server does not offer a model named "y".');
  });
});
