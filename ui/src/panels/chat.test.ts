import { afterEach, describe, expect, it } from "vitest";
import { CallLog } from "../lib/calls";
import { ChatPanel } from "./chat";

const frame = () => new Promise((r) => requestAnimationFrame(() => r(null)));

function setup() {
  const root = document.createElement("div");
  document.body.append(root);
  const sent: string[] = [];
  const selected: string[] = [];
  const chat = new ChatPanel(root, {
    send: (m) => sent.push(m),
    stop: () => sent.push("<stop>"),
    selectCall: (k) => selected.push(k),
    newChat: () => sent.push("<new chat>"),
    showChats: () => sent.push("<chats>"),
    mentions: { files: () => ["src/cart.ts", "src/cartesian.ts", "README.md"], symbols: async (p: string) => ["Cart", "CartItem"].filter((n) => n.startsWith(p)) },
  });
  chat.setAvailability({ ready: true });
  return { root, chat, sent, selected };
}

afterEach(() => document.body.replaceChildren());

describe("ChatPanel", () => {
  it("shows how full the context is after each step, and forgets it with the chat", () => {
    const { root, chat } = setup();
    const meter = root.querySelector<HTMLElement>(".context-meter")!;
    expect(meter.classList.contains("hidden")).toBe(true);
    chat.startTurn("What version?");
    const finished = (used: number | null) => ({
      event: "response_finished" as const,
      step: 1,
      raw: "",
      constrained: false,
      call_confidence: null,
      tokens_evaluated: 20,
      tokens_generated: 5,
      context_used: used,
      context_size: 8192,
    });
    chat.event(finished(1240), null);
    expect(meter.classList.contains("hidden")).toBe(false);
    expect(meter.textContent).toBe("Context: 1,240 of 8,192 tokens (15 %) · last step evaluated 20 new tokens");
    expect(meter.getAttribute("aria-valuenow")).toBe("1240");
    chat.event(finished(7000), null);
    expect(meter.classList.contains("context-meter-high")).toBe(true);
    chat.event(finished(null), null);
    expect(meter.textContent).toBe("Context: 7,000 of 8,192 tokens (85 %) · last step evaluated 20 new tokens");
    chat.reset();
    expect(meter.classList.contains("hidden")).toBe(true);
  });

  it("sends on Enter and not while unavailable", () => {
    const { root, chat, sent } = setup();
    const input = root.querySelector("textarea")!;
    input.value = "hello";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    expect(sent).toEqual(["hello"]);
    chat.setAvailability({ ready: false, reason: "Open a folder to start." });
    input.value = "again";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    expect(sent).toEqual(["hello"]);
    expect(root.querySelector(".chat-hint")?.textContent).toBe("Open a folder to start.");
  });

  it("streams Markdown, shows a call card that opens the inspector, and a stop button while busy", async () => {
    const { root, chat, selected, sent } = setup();
    const log = new CallLog();
    chat.setBusy(true);
    expect(root.querySelector(".stop-button")?.classList.contains("hidden")).toBe(false);
    root.querySelector<HTMLButtonElement>(".stop-button")!.click();
    expect(sent).toEqual(["<stop>"]);
    chat.startTurn("What version?");
    chat.event({ event: "text_delta", step: 1, text: "Let me **check**" }, null);
    await frame();
    expect(root.querySelector(".msg.assistant strong")?.textContent).toBe("check");
    const parsed = {
      event: "call_parsed" as const,
      step: 1,
      call_id: "call-1",
      tool: "read_file",
      args: { path: "package.json" },
      reasoning: null,
      dialect: "lantern" as const,
      constrained: true,
      call_confidence: null,
      raw: "<TOOL_CALL>…</TOOL_CALL>",
      span: { start: 0, end: 10 },
      problems: [],
      via: "text" as const,
    };
    chat.event(parsed, log.apply(parsed));
    const card = root.querySelector<HTMLButtonElement>(".call-card")!;
    expect(card.textContent).toContain("read_file");
    expect(card.textContent).toContain("package.json");
    card.click();
    expect(selected).toEqual(["call-1"]);
    chat.event({ event: "text_delta", step: 2, text: "It is 1.4.2." }, null);
    chat.event({ event: "turn_finished", reason: "answer", text: "It is 1.4.2.", steps: 2, explanation: "The assistant answered." }, null);
    expect([...root.querySelectorAll(".msg-text")].map((e) => e.textContent?.trim())).toEqual(["Let me check", "It is 1.4.2."]);
    expect(root.querySelector(".thinking")).toBeNull();
  });

  it("drops the text of a refused reply and shows its card instead", async () => {
    const { root, chat } = setup();
    const log = new CallLog();
    chat.startTurn("What is in notes.txt?");
    chat.event({ event: "step_started", step: 1 }, null);
    chat.event({ event: "text_delta", step: 1, text: "<tool_response>{\"success\": false}</tool_response>" }, null);
    await frame();
    const rejected = { event: "call_rejected" as const, step: 1, error_type: "parse_error" as const, message: "Your reply looks like a tool call or result", feedback: "…", raw: null };
    chat.event(rejected, log.apply(rejected));
    chat.event({ event: "step_started", step: 2 }, null);
    chat.event({ event: "text_delta", step: 2, text: "It says buy milk." }, null);
    await frame();
    expect([...root.querySelectorAll(".msg-text")].map((e) => e.textContent?.trim())).toEqual(["It says buy milk."]);
    expect(root.querySelectorAll(".call-card").length).toBe(1);
  });

  it("shows an answer that began repeating itself without the repeats, and says it was ended", async () => {
    const { root, chat } = setup();
    chat.startTurn("Where is banner defined?");
    chat.event({ event: "step_started", step: 1 }, null);
    chat.event({ event: "text_delta", step: 1, text: "It is in utils.py.\n\nIt is in utils.py.\n\nIt is in utils." }, null);
    chat.event({ event: "answer_cut", step: 1, text: "It is in utils.py." }, null);
    chat.event({ event: "turn_finished", reason: "answer", text: "It is in utils.py.", steps: 1, explanation: "The assistant answered." }, null);
    expect([...root.querySelectorAll(".msg-text")].map((e) => e.textContent?.trim())).toEqual(["It is in utils.py."]);
    expect(root.querySelector(".answer-cut")?.textContent).toContain("repeating itself");
  });

  it("gives a file the answer named by its name alone by its path, and says so", async () => {
    const { root, chat } = setup();
    chat.startTurn("Which module holds the Invoice model?");
    chat.event({ event: "step_started", step: 2 }, null);
    chat.event({ event: "text_delta", step: 2, text: "It lives in invoice.py." }, null);
    const given = "It lives in billing/invoice.py.";
    chat.event({ event: "answer_paths_given", step: 2, text: given, paths: [{ name: "invoice.py", path: "billing/invoice.py" }] }, null);
    chat.event({ event: "turn_finished", reason: "answer", text: given, steps: 2, explanation: "The assistant answered." }, null);
    expect([...root.querySelectorAll(".msg-text")].map((e) => e.textContent?.trim())).toEqual([given]);
    expect(root.querySelector(".answer-paths")?.textContent).toContain("invoice.py is billing/invoice.py");
  });

  it("follows an answer that left out what the results say with notes set apart from the model's words", async () => {
    const { root, chat } = setup();
    chat.startTurn("How many JavaScript files are in models?");
    chat.event({ event: "step_started", step: 2 }, null);
    chat.event({ event: "text_delta", step: 2, text: "The files are models/a.js and models/b.js." }, null);
    const note = "The listing of `models` found 2 files.";
    const noted = `The files are models/a.js and models/b.js.\n\n${note}`;
    chat.event({ event: "answer_noted", step: 2, text: noted, notes: [{ kind: "count", text: note }] }, null);
    chat.event({ event: "turn_finished", reason: "answer", text: noted, steps: 2, explanation: "The assistant answered." }, null);
    expect([...root.querySelectorAll(".msg-text")].map((e) => e.textContent?.trim())).toEqual(["The files are models/a.js and models/b.js."]);
    expect(root.querySelector(".answer-note-count")?.textContent?.trim()).toBe("From the tool results: The listing of models found 2 files.");
    expect(root.querySelector(".answer-note-count code")?.textContent).toBe("models");
  });

  it("shows a reasoning model's thinking collapsed, before the reply it led to", async () => {
    const { root, chat } = setup();
    chat.startTurn("Hi");
    chat.event({ event: "step_started", step: 1 }, null);
    chat.event({ event: "text_delta", step: 1, text: "Hello!" }, null);
    chat.event({ event: "response_finished", step: 1, raw: "<think>A greeting.</think>Hello!", constrained: false, call_confidence: null, tokens_evaluated: null, tokens_generated: null, context_used: null, context_size: null, thinking: "A greeting." }, null);
    await frame();
    const reply = root.querySelector(".msg.assistant")!;
    const thought = reply.querySelector<HTMLDetailsElement>("details.thought")!;
    expect(thought.open).toBe(false);
    expect(thought.textContent).toContain("A greeting.");
    expect(thought.nextElementSibling?.textContent?.trim()).toBe("Hello!");
  });

  it("replays a saved conversation as it went, and starts a new one on request", async () => {
    const { root, chat, sent } = setup();
    const log = new CallLog();
    const parsed = { event: "call_parsed" as const, step: 1, call_id: "call-1", tool: "read_file", args: { path: "a.txt" }, reasoning: null, dialect: "lantern" as const, constrained: true, call_confidence: null, raw: "<TOOL_CALL>…</TOOL_CALL>", span: { start: 0, end: 10 }, problems: [], via: "text" as const };
    chat.replay(
      [
        { event: "turn_started", message: "What is in a.txt?", model: "smollm2", form: "look_up" },
        { event: "step_started", step: 1 },
        parsed,
        { event: "step_started", step: 2 },
        { event: "text_delta", step: 2, text: "It says hello." },
        { event: "turn_finished", reason: "answer", text: "It says hello.", steps: 2, explanation: "" },
      ],
      (event) => log.apply(event),
    );
    await frame();
    expect(root.querySelector(".msg.user")?.textContent).toBe("What is in a.txt?");
    expect(root.querySelector(".msg.user + .msg-reading")?.textContent).toBe("Read as a fact of the project");
    expect(root.querySelector(".call-card")?.textContent).toContain("read_file");
    expect(root.querySelector(".msg-text")?.textContent?.trim()).toBe("It says hello.");
    expect(root.querySelector(".thinking")).toBeNull();
    expect(log.all()).toHaveLength(1);
    root.querySelector<HTMLButtonElement>(".new-chat")!.click();
    root.querySelector<HTMLButtonElement>(".show-chats")!.click();
    expect(sent).toEqual(["<new chat>", "<chats>"]);
  });

  it("says when earlier steps were shortened or summarised, with the summary one click away", () => {
    const { root, chat } = setup();
    chat.startTurn("And the name?");
    chat.event({ event: "context_compacted", step: 1, results_shortened: 2, messages_summarised: 0 }, null);
    chat.event({ event: "context_compacted", step: 2, results_shortened: 0, messages_summarised: 4, summary: "The version is 2.4.1." }, null);
    const notes = [...root.querySelectorAll(".note")];
    expect(notes.map((n) => n.querySelector("summary")?.textContent ?? n.textContent)).toEqual([
      "Earlier tool results were shortened to one line each to fit the model's context (2); the transcript keeps them whole.",
      "Earlier steps were summarised to fit the model's context (4 messages); the transcript keeps them whole.",
    ]);
    expect(notes[1]?.textContent).toContain("The version is 2.4.1.");
  });

  it("says in plain words why a turn stopped", () => {
    const { root, chat } = setup();
    chat.startTurn("loop please");
    chat.event({ event: "turn_finished", reason: "repetition", text: "", steps: 3, explanation: "Stopped: the model made the same call 3 times in a row." }, null);
    expect(root.querySelector(".guard")?.textContent).toBe("Stopped: the model made the same call 3 times in a row.");
  });

  it("says so when the model's reply held no text", () => {
    const { root, chat } = setup();
    chat.startTurn("where is banner defined?");
    chat.event({ event: "text_delta", step: 1, text: "\n\n\n" }, null);
    const why = "The model gave no answer: its reply held no text. Ask again, perhaps in other words.";
    chat.event({ event: "turn_finished", reason: "answer", text: "", steps: 1, explanation: why }, null);
    expect(root.textContent).toContain(why);
  });
});

describe("ChatPanel attachments", () => {
  it("shows what a message attached with @ as chips, and the call log lists it as context", () => {
    const { root, chat } = setup();
    const log = new CallLog();
    chat.startTurn("Explain @Cart and @nothing");
    const event = {
      event: "context_attached" as const,
      attachments: [{ mention: "Cart", kind: "definition" as const, path: "src/cart.ts", start_line: 3, end_line: 9, text: "class Cart {}", cut: false }],
      problems: ["@nothing names no file of the project and nothing its code defines"],
    };
    chat.event(event, log.apply(event));
    const message = root.querySelector(".msg.user")!;
    const chip = message.querySelector<HTMLElement>(".attachment-chip")!;
    expect(chip.textContent).toBe("@Cart");
    expect(chip.title).toBe("src/cart.ts, lines 3-9");
    expect(message.textContent).toContain("@nothing names no file");
    const [record] = log.all();
    expect(record!.origin).toBe("context");
    expect(record!.args).toEqual({ "@Cart": "src/cart.ts lines 3-9" });
  });
});
