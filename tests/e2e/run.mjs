// End-to-end tests of the real Lantern window: the app binary (built with its UI embedded) is
// driven through WebDriver (tauri-driver + WebKitWebDriver) on a real display (Xvfb in CI),
// with the real default model, on fresh copies of a fixture workspace.
//
//   LANTERN_APP=/path/to/lantern-app node tests/e2e/run.mjs [name filter]
//
// Screenshots of the main states go to tests/e2e/screenshots/. The last line is
// "N passed, N failed"; the exit code is 1 if anything failed.

import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Keys, Session, sleep, waitForServer } from "./webdriver.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const fixtures = join(repo, "tests/fixtures");
const screenshots = join(here, "screenshots");
const app = process.env.LANTERN_APP;
/** A port nothing listens on now, so that runs side by side do not meet. */
function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

const port = await freePort();
const nativePort = await freePort();
const driverUrl = `http://127.0.0.1:${port}`;
const filter = process.argv[2] ?? "";

/** How long the real model may take to load (with its first calibration) or to answer one
 * question, on a slow, shared machine. */
const MODEL_MS = 600_000;

if (!app) {
  console.error("LANTERN_APP must name the app binary (built with the UI embedded).");
  process.exit(2);
}

// Lantern's own state (grants, checkpoints, settings, transcripts) for this run only. The
// exceptions are what the app keeps for a user between runs: the model's calibration and its
// saved prompt openings, each measured once per model and prompt (an empty cache is slower).
// Both are the folders the Rust model tests keep (a calibration file per model, named as the
// app names it; an opening per model, context and prompt, named by them): what those tests
// measured is not measured again here.
const home = mkdtempSync(join(tmpdir(), "lantern-e2e-home-"));
const userCache = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "lantern");
// Each is copied back over after the run, never replaced: what the Rust tests keep there stays.
// Copies keep the files' times, by which the prompt cache drops its least recently used
// openings past its cap, and leave out a save a killed process did not finish.
const keptBetweenRuns = [
  { kept: join(userCache, "test-calibration"), used: join(home, "data", "calibration") },
  { kept: join(userCache, "test-prompt-openings"), used: join(home, "cache", "prompt-cache") },
];
const keptCopy = { recursive: true, force: true, preserveTimestamps: true, filter: (path) => !/\.partial-[\d-]+$/.test(path) };
for (const { kept, used } of keptBetweenRuns) if (existsSync(kept)) cpSync(kept, used, keptCopy);
mkdirSync(screenshots, { recursive: true });

const driver = spawn("tauri-driver", ["--port", String(port), "--native-port", String(nativePort)], {
  env: { ...process.env, LANTERN_HOME: home },
  stdio: ["ignore", "ignore", "pipe"],
});
let driverLog = "";
let driverExit = null;
driver.stderr.on("data", (chunk) => (driverLog += chunk));
driver.on("exit", (code, signal) => (driverExit = `tauri-driver exited (${signal ?? code})\n${driverLog}`));

// ---- helpers the tests share ----

const workspaces = [];

/** A fresh copy of a fixture project: the small shop by default, or a real package. */
function freshWorkspace(fixture = "node-shop") {
  const dir = mkdtempSync(join(tmpdir(), `lantern-e2e-${fixture}-`));
  cpSync(join(fixtures, fixture), dir, { recursive: true });
  workspaces.push(dir);
  return dir;
}

/** The window of the running test, for a screenshot when it fails. */
let current = null;

async function launch(workspace) {
  if (driverExit) throw new Error(driverExit);
  const session = await Session.start(driverUrl, {
    "tauri:options": { application: app, args: [workspace] },
  });
  current = session;
  // The window is ready when the tree lists the folder and the model has loaded.
  await session.waitForElement('.tree-row[data-path="package.json"]', 30_000);
  await session.waitFor("the model to load", () => session.execute("return document.querySelector('.model-chip').dataset.state === 'ready';"), MODEL_MS);
  await useTheme(session, "dark");
  return session;
}

async function shot(session, name) {
  await session.painted();
  writeFileSync(join(screenshots, `${name}.png`), await session.screenshot());
}

async function policyViolations(session) {
  return session.execute("return window.lanternPolicyViolations;");
}

/** Opens the manual call dialog and runs `tool` with `args`. */
async function writeCall(session, tool, args) {
  await session.click(".write-call");
  await session.waitForElement(".manual-dialog");
  await session.execute(
    `const select = document.querySelector('.manual-tool');
     select.value = arguments[0];
     select.dispatchEvent(new Event('change'));
     document.querySelector('.manual-args').value = arguments[1];`,
    tool,
    JSON.stringify(args, null, 2),
  );
  const run = await session.waitFor("the Run button", async () => {
    const buttons = await session.findAll(".manual-dialog .dialog-footer button");
    return buttons.at(-1);
  });
  await run.click();
}

async function waitForConfirmation(session) {
  await session.waitForElement(".confirm-dialog");
}

async function dialogGone(session) {
  await session.waitFor("the dialog to close", async () => (await session.findAll(".confirm-dialog")).length === 0);
}

/** The status chip of the selected call in the inspector. */
function selectedStatus(session) {
  return session.text(".inspector-detail .detail-header .status-chip");
}

/** The editor's text (CodeMirror sits in the editor's shadow root). */
function editorText(session) {
  return session.execute(
    "const c = document.querySelector('.editor-surface').shadowRoot.querySelector('.cm-content'); return c ? c.innerText : null;",
  );
}

/** Switches the theme with its button, if it is not `theme` already. */
async function useTheme(session, theme) {
  const current = await session.execute("return document.documentElement.dataset.theme;");
  if (current !== theme) await session.click(".theme-button");
}

/** Sends `question` in the chat and waits until the model has made a call and the turn ended. */
async function askAndWaitForACall(session, question) {
  const input = await session.find(".chat-input");
  await input.type(question);
  await input.type(Keys.Enter);
  await session.waitForElement(".call-card", MODEL_MS);
  await session.waitFor(
    "the turn to finish",
    async () => (await session.findAll(".msg.assistant .thinking")).length === 0 && (await session.findAll(".stop-button.hidden")).length === 1,
    MODEL_MS,
  );
}

/** Asks `question`, waits for its first call to have run (ok or failed), then presses Stop and
 * waits for the turn to end: for a test about the call, not about how a model goes on after it. */
async function askAndStopAfterTheCall(session, question) {
  const input = await session.find(".chat-input");
  await input.type(question);
  await input.type(Keys.Enter);
  await session.waitFor("the call to have run", async () => (await session.findAll(".call-card.status-ok, .call-card.status-failed")).length > 0, MODEL_MS);
  await stopTheTurn(session);
}

/** Presses Stop while a turn runs, and waits for it to have ended. */
async function stopTheTurn(session) {
  await session.execute("const stop = document.querySelector('.stop-button'); if (stop && !stop.classList.contains('hidden')) stop.click();");
  await session.waitFor(
    "the turn to end",
    async () => (await session.findAll(".msg.assistant .thinking")).length === 0 && (await session.findAll(".stop-button.hidden")).length === 1,
    MODEL_MS,
  );
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/** llama.cpp's own server with `model` (a file of the models folder) and the tool-aware test
 * template, on a free port; resolves with its base URL once it is healthy, and is stopped at
 * the end of the run. scripts/build-llama-tools.sh builds it (npm test does). */
const servers = [];
async function startLlamaServer(model) {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  const binary = join(cache, "lantern", "llama-tools", "bin", "llama-server");
  const modelFile = join(process.env.LANTERN_MODEL_DIR || join(cache, "lantern", "models"), model);
  assert(existsSync(binary), `no llama-server at ${binary} (scripts/build-llama-tools.sh builds it)`);
  assert(existsSync(modelFile), `no model at ${modelFile} (scripts/fetch-model.sh fetches it)`);
  const serverPort = await freePort();
  const template = join(repo, "tests/templates/chatml-tools.jinja");
  const args = ["-m", modelFile, "--alias", model.replace(/\.gguf$/, ""), "--host", "127.0.0.1", "--port", String(serverPort), "-c", "8192", "-t", "1", "-np", "1", "--jinja", "--chat-template-file", template];
  const server = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  server.stderr.on("data", (chunk) => (log = (log + chunk).slice(-4000)));
  servers.push(server);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    assert(server.exitCode === null, `llama-server exited: ${log}`);
    const healthy = await fetch(`http://127.0.0.1:${serverPort}/health`).then((r) => r.ok, () => false);
    if (healthy) return `http://127.0.0.1:${serverPort}/v1`;
    await sleep(250);
  }
  throw new Error(`llama-server was not healthy within 60 s: ${log}`);
}

const NEW_CART = `import { withTax } from "./pricing";\n\n// Totals include tax.\nexport const CART_VERSION = 2;\n`;

// ---- the tests ----

const tests = [
  [
    "opens the folder from the command line with the default model loaded",
    async () => {
      const session = await launch(freshWorkspace());
      const files = await session.execute("return [...document.querySelectorAll('.tree-file')].map(e => e.dataset.path);");
      assert(files.includes("src/cart.ts"), `the tree lists src/cart.ts: ${files}`);
      assert(!files.some((f) => f.startsWith("dist/")), "dist/ is git-ignored and not listed");
      const chip = await session.text(".model-chip");
      assert(/smollm2/i.test(chip), `the model chip names the model: ${chip}`);
      // The code index is built in the background and says what it holds under the tree.
      await session.waitFor("the code index's note", async () => /code index: \d+ files, [1-9]\d* definitions/.test(await session.text(".tree-footer")));
      await session.click('.tree-row[data-path="package.json"]');
      await session.waitFor("package.json in the editor", async () => (await editorText(session))?.includes("corner-shop-api"));
      await shot(session, "01-start");
      // F12 on a name goes to its definition, found by the code index.
      await session.click('.tree-row[data-path="src/cart.ts"]');
      await session.waitFor("src/cart.ts in the editor", async () => (await editorText(session))?.includes("withTax"));
      await session.press(...Array(11).fill(Keys.ArrowRight), Keys.F12);
      await session.waitFor("src/pricing.ts shown by F12", async () => (await session.text(".tab.active"))?.includes("pricing.ts"));
      // The status bar's outline lists what the file shown defines.
      await session.waitFor("the outline of pricing.ts", async () =>
        (await session.execute("return [...document.querySelectorAll('.editor-outline option')].map(o => o.textContent);")).some((o) => /^function withTax · \d+$/.test(o)),
      );
      await shot(session, "01b-go-to-definition");
      // Ctrl+click on a name does the same.
      await session.click('.tree-row[data-path="src/cart.ts"]');
      await session.waitFor("src/cart.ts shown again", async () => (await session.text(".tab.active"))?.includes("cart.ts"));
      const [x, y] = await session.execute(`
        const content = document.querySelector('.editor-surface').shadowRoot.querySelector('.cm-content');
        const walker = document.createTreeWalker(content, NodeFilter.SHOW_TEXT);
        while (walker.nextNode()) {
          const at = walker.currentNode.textContent.indexOf('withTax');
          if (at < 0) continue;
          const range = document.createRange();
          range.setStart(walker.currentNode, at);
          range.setEnd(walker.currentNode, at + 'withTax'.length);
          const box = range.getBoundingClientRect();
          return [box.left + box.width / 2, box.top + box.height / 2];
        }
        return [null, null];`);
      assert(x !== null, "src/cart.ts shows the name withTax");
      await session.ctrlClickAt(x, y);
      await session.waitFor("src/pricing.ts shown by Ctrl+click", async () => (await session.text(".tab.active"))?.includes("pricing.ts"));
      await session.click('.side-tab[data-page="model"]');
      await session.waitForElement(".model-panel .facts");
      await shot(session, "02-model");
      const violations = await policyViolations(session);
      assert(violations.length === 0, `no content-security-policy violations: ${violations.join("; ")}`);
    },
  ],
  [
    "a question is answered through a tool call the inspector shows with its raw text and decision",
    async () => {
      const session = await launch(freshWorkspace());
      await session.click('.tree-row[data-path="package.json"]');
      await session.waitFor("package.json in the editor", async () => (await editorText(session))?.includes("corner-shop-api"));
      await askAndWaitForACall(session, "What version is in package.json?");
      await session.click(".call-card");
      const tool = await session.text(".inspector-detail .detail-tool");
      assert(tool === "read_file", `the call is read_file: ${tool}`);
      const raw = await session.text(".inspector-detail mark.raw-call");
      assert(raw && raw.includes("read_file") && raw.includes("package.json"), `the raw call is highlighted: ${raw}`);
      const detail = await session.text(".inspector-detail");
      assert(detail.includes("Allowed — default: reading inside the workspace is allowed"), "the decision and its rule are shown");
      assert(detail.includes("valid against the tool's schema"), "the validation result is shown");
      assert((await selectedStatus(session)) === "ok", "the call succeeded");
      // How Lantern read the message is said under it.
      const reading = await session.text(".msg.user + .msg-reading");
      assert(reading === "Read as a fact of the project", `the message's reading is shown: ${reading}`);
      // The context meter says how much of the model's context the conversation fills.
      const meter = await session.text(".context-meter-text");
      const used = /^Context: ([\d,]+) of ([\d,]+) tokens \(\d+ %\)$/.exec(meter ?? "");
      assert(used, `the context meter is shown: ${meter}`);
      const [tokens, size] = [used[1], used[2]].map((n) => Number(n.replaceAll(",", "")));
      assert(tokens > 1000 && tokens < size, `the meter counts the prompt, the call and its result: ${meter}`);
      await shot(session, "03-answer");
      // A new chat leaves this one saved: it is in the list, and can be taken up again.
      await session.click(".new-chat");
      await session.waitFor("an empty chat", async () => (await session.findAll(".msg.user")).length === 0);
      await session.click(".show-chats");
      await session.waitForElement(".chat-row");
      const listed = await session.text(".chat-row .chat-first");
      assert(listed === "What version is in package.json?", `the chat list names the conversation by its first message: ${listed}`);
      await shot(session, "04-chats");
      await session.click(".chat-row .chat-continue");
      await session.waitFor("the conversation back in the chat", async () => (await session.text(".msg.user")) === "What version is in package.json?");
      const cards = await session.findAll(".call-card");
      assert(cards.length >= 1, "its call is back, for the inspector");
      assert((await session.text(".msg.user + .msg-reading")) === "Read as a fact of the project", "its reading is back");
      await shot(session, "05-continued");
    },
  ],
  [
    "after a restart the opening comes from the saved prompt cache and the first answer evaluates only the message",
    async () => {
      const workspace = freshWorkspace();
      const openingFact = async (session) => {
        await session.click('.side-tab[data-page="model"]');
        await session.waitForElement(".model-panel .facts dd.opening");
        return session.text(".model-panel .facts dd.opening");
      };
      // The first process evaluates the opening and saves it (or finds it saved by an earlier
      // test of this run: the cache outlives the window, as it does for a user).
      const first = await launch(workspace);
      const before = await openingFact(first);
      assert(/tokens (evaluated in .* and saved for the next start|loaded from the saved prompt cache)/.test(before), `the Model page says how the opening was made ready: ${before}`);
      await first.end();
      const session = await launch(workspace);
      const after = await openingFact(session);
      assert(/^[\d,]+ tokens loaded from the saved prompt cache in /.test(after), `after a restart the opening is loaded, not evaluated: ${after}`);
      const attention = await session.text(".model-panel .facts dd.attention");
      assert(attention.startsWith("plain"), `on the CPU the model computes attention without flash attention: ${attention}`);
      await shot(session, "06-restart-model");
      await session.click('.side-tab[data-page="chat"]');
      const input = await session.find(".chat-input");
      await input.type("What does HTTP stand for?");
      await input.type(Keys.Enter);
      await session.waitFor(
        "the first answer",
        async () => (await session.findAll(".msg.assistant .msg-text")).length > 0 && (await session.findAll(".stop-button.hidden")).length === 1,
        MODEL_MS,
      );
      const meter = await session.text(".context-meter-text");
      const used = Number(/^Context: ([\d,]+) of/.exec(meter ?? "")?.[1].replaceAll(",", ""));
      const evaluated = await session.text(".context-evaluated");
      const count = Number(/last step evaluated ([\d,]+) new tokens?$/.exec(evaluated ?? "")?.[1].replaceAll(",", ""));
      assert(used > 1000, `the prompt holds the whole opening: ${meter}`);
      assert(count > 0 && count < 60, `the first answer of the restarted app evaluated only the message's tokens: ${evaluated} (${meter})`);
      await shot(session, "07-restart-first-answer");
    },
  ],
  [
    "on a real package, a question is answered in the chat after a call shown in the inspector, and a file the answer names is given by a path that exists",
    async () => {
      // npm's semver 7.6.3, as published: a project nobody here wrote. Whether the default
      // model's answers are right is the eval's to measure; here, what the window shows.
      const workspace = freshWorkspace("semver");
      const session = await launch(workspace);
      await askAndWaitForACall(session, "What's this package's version number?");
      const answers = await session.execute("return [...document.querySelectorAll('.msg.assistant .msg-text')].map(e => e.textContent);");
      assert((answers.at(-1) ?? "").trim().length > 0, `the answer is shown: ${answers}`);
      const soup = await session.execute("return [...document.querySelectorAll('.msg-text')].some(e => /<\\/?(tool_|TOOL_)/.test(e.textContent));");
      assert(!soup, "no call text is shown as an answer");
      await session.click(".call-card");
      const tool = await session.text(".inspector-detail .detail-tool");
      assert(["read_file", "search_code", "list_files"].includes(tool), `the call reads: ${tool}`);
      await shot(session, "10-answer-after-a-call");
      // Asked where a class is, the model may name the file by its name alone; when it does,
      // the answer gives the path the turn's results showed, and says so.
      await session.click(".new-chat");
      await session.waitFor("an empty chat", async () => (await session.findAll(".msg.user")).length === 0);
      await askAndWaitForACall(session, "Which file holds the Comparator class?");
      const note = await session.execute("return document.querySelector('.answer-paths')?.textContent ?? null;");
      if (note !== null) {
        const given = [...note.matchAll(/is ([\w./-]+\.js)/g)].map((m) => m[1]);
        assert(given.length > 0 && given.every((p) => existsSync(join(workspace, p))), `the note gives paths that exist: ${note}`);
      }
      await shot(session, "10-answer-path");
    },
  ],
  [
    "the model's edit_file asks with its diff, Allow once changes the file and the open editor, and Undo restores it",
    async () => {
      const workspace = freshWorkspace("semver");
      const file = join(workspace, "internal/lrucache.js");
      const before = readFileSync(file, "utf8");
      const session = await launch(workspace);
      await session.click('.tree-row[data-path="internal/lrucache.js"]');
      await session.waitFor("lrucache.js in the editor", async () => (await editorText(session))?.includes("this.max = 1000"));
      const input = await session.find(".chat-input");
      await input.type("Lower this.max in internal/lrucache.js from 1000 to 250.");
      await input.type(Keys.Enter);
      await session.waitForElement(".confirm-dialog", MODEL_MS);
      const title = await session.text(".confirm-dialog .diff-title");
      assert(title.includes("internal/lrucache.js") && title.includes("old text found exactly"), `the diff names the file and the matcher: ${title}`);
      const added = await session.execute("return [...document.querySelectorAll('.confirm-dialog .diff-added')].map(e => e.textContent);");
      const removed = await session.execute("return [...document.querySelectorAll('.confirm-dialog .diff-removed')].map(e => e.textContent);");
      assert(added.includes("+    this.max = 250") && removed.includes("-    this.max = 1000"), `the diff shows the edit: ${removed} → ${added}`);
      await shot(session, "11-edit-confirm");
      await session.click('.confirm-dialog [data-action="once"]');
      await dialogGone(session);
      await session.waitFor("the edit on disk", () => readFileSync(file, "utf8") === before.replace("this.max = 1000", "this.max = 250"));
      await session.waitFor("the editor to show the edit", async () => (await editorText(session))?.includes("this.max = 250"));
      await session.waitFor(
        "the turn to finish",
        async () => (await session.findAll(".msg.assistant .thinking")).length === 0 && (await session.findAll(".stop-button.hidden")).length === 1,
        MODEL_MS,
      );
      await session.click(".call-card");
      const detail = await session.text(".inspector-detail");
      assert(detail.includes("edit_file") && detail.includes("exactly, at line 3"), "the inspector says how the old text was found");
      await shot(session, "12-edited");
      await session.click('.side-tab[data-page="settings"]');
      await session.click(".write-row .undo-button");
      await session.waitFor("the file restored on disk", () => readFileSync(file, "utf8") === before);
      await session.waitFor("the editor to show the old content", async () => (await editorText(session))?.includes("this.max = 1000"));
    },
  ],
  [
    "a manual write asks with a diff, and Deny leaves the file untouched",
    async () => {
      const workspace = freshWorkspace();
      const before = readFileSync(join(workspace, "src/cart.ts"), "utf8");
      const session = await launch(workspace);
      await writeCall(session, "write_file", { path: "src/cart.ts", content: NEW_CART });
      await waitForConfirmation(session);
      const added = await session.execute("return [...document.querySelectorAll('.diff-added')].map(e => e.textContent);");
      const removed = await session.execute("return [...document.querySelectorAll('.diff-removed')].map(e => e.textContent);");
      assert(added.includes("+export const CART_VERSION = 2;"), `the diff shows the new line: ${added}`);
      assert(removed.includes("-export function cartTotal(items: Item[]): number {"), "the diff shows removed lines");
      await shot(session, "04-confirm");
      await session.click('.confirm-dialog [data-action="deny"]');
      await dialogGone(session);
      await session.waitFor("the call to show as denied", async () => (await selectedStatus(session)) === "denied");
      assert(readFileSync(join(workspace, "src/cart.ts"), "utf8") === before, "the file is untouched");
    },
  ],
  [
    "Allow writes the file, the open editor shows it, and Undo restores it",
    async () => {
      const workspace = freshWorkspace();
      const before = readFileSync(join(workspace, "src/cart.ts"), "utf8");
      const session = await launch(workspace);
      await session.click('.tree-row[data-path="src/cart.ts"]');
      await session.waitFor("cart.ts in the editor", async () => (await editorText(session))?.includes("cartTotal"));
      await writeCall(session, "write_file", { path: "src/cart.ts", content: NEW_CART });
      await waitForConfirmation(session);
      await session.click('.confirm-dialog [data-action="once"]');
      await dialogGone(session);
      await session.waitFor("the write on disk", () => readFileSync(join(workspace, "src/cart.ts"), "utf8") === NEW_CART);
      await session.waitFor("the editor to show the new content", async () => (await editorText(session))?.includes("CART_VERSION"));
      assert((await selectedStatus(session)) === "ok", "the call shows as ok");
      await shot(session, "05-written");
      await session.click('.side-tab[data-page="settings"]');
      await session.click(".write-row .undo-button");
      await session.waitFor("the file restored on disk", () => readFileSync(join(workspace, "src/cart.ts"), "utf8") === before);
      await session.waitFor("the editor to show the old content", async () => !(await editorText(session))?.includes("CART_VERSION"));
      await session.waitForElement(".write-row.undone");
      await shot(session, "06-undone");
    },
  ],
  [
    "an undo after a later edit is refused and shows the three versions",
    async () => {
      const workspace = freshWorkspace();
      const session = await launch(workspace);
      await writeCall(session, "write_file", { path: "src/cart.ts", content: NEW_CART });
      await waitForConfirmation(session);
      await session.click('.confirm-dialog [data-action="once"]');
      await dialogGone(session);
      await session.waitFor("the write on disk", () => readFileSync(join(workspace, "src/cart.ts"), "utf8") === NEW_CART);
      // The user changes the file after the assistant's write.
      const edited = `${NEW_CART}export const EDITED = true;\n`;
      writeFileSync(join(workspace, "src/cart.ts"), edited);
      await session.click('.side-tab[data-page="settings"]');
      await session.click(".write-row .undo-button");
      await session.waitForElement(".undo-conflict-dialog");
      const labels = await session.execute("return [...document.querySelectorAll('.undo-versions dt')].map(e => e.textContent);");
      assert(labels.length === 3, `three versions are shown: ${labels}`);
      const later = await session.execute("return [...document.querySelectorAll('.undo-conflict .diff-added')].map(e => e.textContent);");
      assert(later.includes("+export const EDITED = true;"), `the later change is shown: ${later}`);
      await shot(session, "08-undo-refused");
      assert(readFileSync(join(workspace, "src/cart.ts"), "utf8") === edited, "the user's edit is kept");
    },
  ],
  [
    "Esc denies a confirmation",
    async () => {
      const workspace = freshWorkspace();
      const session = await launch(workspace);
      await writeCall(session, "write_file", { path: "notes.md", content: "# Notes\n" });
      await waitForConfirmation(session);
      await session.press(Keys.Escape);
      await dialogGone(session);
      await session.waitFor("the call to show as denied", async () => (await selectedStatus(session)) === "denied");
      const files = readdirSync(workspace);
      assert(!files.includes("notes.md"), "nothing was written");
    },
  ],
  [
    "the model probe shows the prompt's fit, the calibrated call decision and three quick tasks",
    async () => {
      const session = await launch(freshWorkspace());
      await session.click('.side-tab[data-page="model"]');
      await session.click(".probe-button");
      const verdict = await session.waitFor("the probe's verdict", () => session.text(".probe-verdict"), MODEL_MS);
      assert(/quick tasks decided right/.test(verdict), `the verdict counts the quick tasks: ${verdict}`);
      const lines = await session.execute("return [...document.querySelectorAll('.model-panel li')].map(e => e.textContent);");
      const first = lines.find((l) => l.startsWith("Call decision, first step"));
      assert(/threshold -?\d+\.\d\d nats/.test(first ?? ""), `the first-step calibration is shown: ${lines.join(" | ")}`);
      assert(lines.some((l) => /^System prompt: \d+ of \d+ tokens/.test(l)), `the prompt's size is shown: ${lines.join(" | ")}`);
      const tasks = await session.execute("return document.querySelectorAll('.probe-tasks tbody tr').length;");
      assert(tasks === 3, `three quick tasks are listed: ${tasks}`);
      await shot(session, "09-probe");
    },
  ],
  [
    "the light theme",
    async () => {
      const session = await launch(freshWorkspace());
      await useTheme(session, "light");
      const theme = await session.execute("return document.documentElement.dataset.theme;");
      assert(theme === "light", `the theme switched: ${theme}`);
      await session.click('.tree-row[data-path="README.md"]');
      await session.waitFor("README.md in the editor", async () => (await editorText(session))?.length > 0);
      await writeCall(session, "read_file", { path: "README.md", start_line: 1, end_line: 5 });
      await session.waitFor("the read to finish", async () => (await selectedStatus(session)) === "ok");
      await shot(session, "07-light");
    },
  ],
  [
    "the app connected to a real llama-server takes a native tool call, runs it, and the inspector marks it native",
    async () => {
      // Gemma 3 270M makes the call natively; the default model answers in prose instead.
      const baseUrl = await startLlamaServer("gemma-3-270m-q4_k_m.gguf");
      const session = await launch(freshWorkspace());
      await session.click('.side-tab[data-page="model"]');
      await session.click('.provider-tab[data-provider="server"]');
      await session.execute(
        `document.querySelector('.server-url').value = arguments[0];
         document.querySelector('.server-calls').value = 'native';`,
        baseUrl,
      );
      await session.click(".server-test");
      await session.waitFor("the test's report", async () => /models? listed/.test((await session.text(".server-status")) ?? ""), 60_000);
      const report = await session.text(".server-status");
      assert(/^1 model listed; tool calls: /.test(report), `the test lists the model and says how calls travel: ${report}`);
      await session.click(".server-connect");
      await session.waitFor("the server's model in use", () => session.execute("return document.querySelector('.model-chip').dataset.state === 'ready' && !!document.querySelector('.tool-calls-path');"), 60_000);
      const path = await session.text(".tool-calls-path");
      assert(path.startsWith("native"), `the Model page says calls are native: ${path}`);
      await shot(session, "12-server-model");
      await session.click('.side-tab[data-page="chat"]');
      // A 270M base model goes on calling after the result for as many steps as it may, slowly
      // on one thread; the call is what this test is about, so the turn is stopped after it.
      await askAndStopAfterTheCall(session, "What is in package.json?");
      await session.click(".call-card");
      const detail = await session.text(".inspector-detail");
      assert(detail.includes("native tool call (the server's tool_calls)"), `the inspector marks the call native: ${detail.slice(0, 300)}`);
      assert(detail.includes("pieces streamed by the server"), "the raw pieces are there to open");
      const marked = await session.execute("return document.querySelector('.inspector-detail .raw-call')?.textContent ?? '';");
      assert(marked.includes('"name"') && marked.includes('"arguments"'), `the server's call is shown after the reply's text, as it came: ${marked}`);
      await session.click(".native-deltas summary");
      await shot(session, "13-native-call");
      // What a 270M base model makes of the result is its own affair; the turn must end in the
      // chat, and no refused reply may be left there as text.
      const ended = await session.execute("return !!document.querySelector('.msg.assistant .guard, .msg.assistant .msg-text');");
      assert(ended, "the turn ended in the chat");
      const soup = await session.execute("return [...document.querySelectorAll('.msg-text')].some(e => /<\\/?tool_/.test(e.textContent));");
      assert(!soup, "no refused reply is shown as text");
      // The window remembers the provider: back to the local model, for the windows after this.
      await session.click('.side-tab[data-page="model"]');
      await session.click('.provider-tab[data-provider="local"]');
      await session.execute("[...document.querySelectorAll('.provider-local button')].find(b => b.textContent === 'Load the default model').click();");
      await session.waitFor("the default model back", async () => /smollm2/i.test((await session.text(".model-chip")) ?? "") && (await session.execute("return document.querySelector('.model-chip').dataset.state === 'ready';")), MODEL_MS);
    },
  ],
  [
    "a local model whose own template takes tools is prompted natively, and the inspector says its call came in its own form",
    async () => {
      // The default model with a tool-aware template written into a copy
      // (scripts/tool-template-model.sh, which npm test runs), listed on the Model page.
      const session = await launch(freshWorkspace());
      await session.click('.side-tab[data-page="model"]');
      const loaded = await session.execute(
        `const row = [...document.querySelectorAll('.model-row')].find(r => /\\.tools\\./.test(r.textContent) && !/thinking/.test(r.textContent));
         if (!row) return false;
         row.querySelector('button').click();
         return true;`,
      );
      assert(loaded, "the Model page lists the copy with the tool-aware template");
      await session.waitFor(
        "the copy loaded and calibrated",
        async () => /tool-aware/.test((await session.text(".model-chip")) ?? "") && (await session.execute("return document.querySelector('.model-chip').dataset.state === 'ready' && !!document.querySelector('.tool-calls-path');")),
        MODEL_MS,
      );
      const path = await session.text(".tool-calls-path");
      assert(path.startsWith("native") && path.includes("<tool_call>"), `the Model page says the model is prompted natively, and why: ${path}`);
      await shot(session, "14-local-native-model");
      await session.click('.side-tab[data-page="chat"]');
      await askAndStopAfterTheCall(session, "What version is declared in package.json?");
      await session.click(".call-card");
      const detail = await session.text(".inspector-detail");
      assert(detail.includes("native tool call (the model's own form, through its chat template)"), `the inspector marks the call native: ${detail.slice(0, 400)}`);
      assert(detail.includes("hermes") && detail.includes("constrained by the grammar"), `its dialect and grammar are shown: ${detail.slice(0, 400)}`);
      await shot(session, "15-local-native-call");
      const soup = await session.execute("return [...document.querySelectorAll('.msg-text')].some(e => /<\\/?tool_/.test(e.textContent));");
      assert(!soup, "no call text is shown as an answer");
      await session.click('.side-tab[data-page="model"]');
      await session.execute("[...document.querySelectorAll('.provider-local button')].find(b => b.textContent === 'Load the default model').click();");
      await session.waitFor("the default model back", async () => !/tool-aware/.test((await session.text(".model-chip")) ?? "") && (await session.execute("return document.querySelector('.model-chip').dataset.state === 'ready';")), MODEL_MS);
    },
  ],
  [
    "an @ mention completes from the project and attaches that file or definition, shown as a chip and in the inspector",
    async () => {
      const session = await launch(freshWorkspace());
      const input = await session.find(".chat-input");
      await input.type("Summarise @pric");
      await session.waitForElement('.mention-choice[data-kind="file"]');
      const offered = await session.text(".mention-menu");
      assert(offered.includes("src/pricing.ts"), `the menu offers the file: ${offered}`);
      await shot(session, "19-mention-menu");
      await input.type(Keys.Enter);
      const written = await session.execute("return document.querySelector('.chat-input').value;");
      assert(written === "Summarise @src/pricing.ts ", `the choice is written in: ${written}`);
      await input.type("for me.");
      await input.type(Keys.Enter);
      await session.waitForElement(".msg.user .attachment-chip");
      const chip = await session.text(".msg.user .attachment-chip");
      assert(chip === "@src/pricing.ts", `the message shows what it attached: ${chip}`);
      const row = await session.text(".inspector-list");
      assert(row.includes("@context") && row.includes("you attached"), `the inspector lists the context: ${row}`);
      await stopTheTurn(session);
      await shot(session, "20-mention-attached");
      // A name the code defines is offered too, and attaches its definition.
      await input.type("Explain the arithmetic inside @withT");
      await session.waitForElement('.mention-choice[data-kind="symbol"]');
      const names = await session.text(".mention-menu");
      assert(names.includes("withTax") && names.includes("definition"), `the menu offers the definition: ${names}`);
      await input.type(Keys.Enter);
      await input.type("please.");
      await input.type(Keys.Enter);
      await session.waitFor("the definition's chip", async () =>
        (await session.execute("return [...document.querySelectorAll('.msg.user .attachment-chip')].map(c => c.textContent + ' ' + c.title);")).some((c) => /^@withTax src\/pricing\.ts, lines \d+-\d+/.test(c)),
      );
      await stopTheTurn(session);
      await shot(session, "20b-mention-symbol-attached");
    },
  ],
  [
    "the project's instructions and the map of its code are shown on the Model page with what they cost",
    async () => {
      const workspace = freshWorkspace();
      writeFileSync(join(workspace, "AGENTS.md"), "# Shop API\n\nRun `npm test` before every commit. Prices are in cents.\n");
      const session = await launch(workspace);
      await session.click('.side-tab[data-page="model"]');
      await session.waitFor("the instructions' cost", async () => /AGENTS\.md · \d+ tokens/.test((await session.text(".rules-summary")) ?? ""));
      await session.click(".rules-text summary");
      await shot(session, "18-model-rules");
      // The default local model is given no map; the page shows what it would be and cost.
      await session.waitFor("the map's cost", async () => /Not given to this model.* it would cost \d+ tokens \(\d+ characters\)/.test((await session.text(".code-map-summary")) ?? ""));
      await session.click(".code-map-text summary");
      const map = (await session.text(".code-map-text pre")) ?? "";
      assert(map.startsWith("MAP OF THE PROJECT'S CODE") && map.includes("src/"), `the map lists the code's files: ${map}`);
      await session.execute("document.querySelector('.code-map-section').scrollIntoView();");
      await shot(session, "18b-model-code-map");
    },
  ],
  [
    "a project's MCP servers are approved in Settings, a tool runs through the confirmation into the inspector, and Stop cancels a running one",
    async () => {
      const workspace = freshWorkspace();
      const time = { command: join(mcpServers(), "venv/bin/mcp-server-time"), args: ["--local-timezone", "UTC"] };
      const every = { command: join(mcpServers(), "npm/node_modules/.bin/mcp-server-everything"), args: ["stdio"] };
      mkdirSync(join(workspace, ".lantern"), { recursive: true });
      writeFileSync(join(workspace, ".lantern/mcp.json"), JSON.stringify({ mcpServers: { time, every } }));
      const session = await launch(workspace);
      await session.click('.side-tab[data-page="settings"]');
      // The project wrote the definitions: each waits for the user's yes.
      for (const name of ["time", "every"]) {
        await session.waitForElement(`.mcp-server[data-name="${name}"][data-state="needs_approval"]`);
        await session.click(`.mcp-server[data-name="${name}"] .mcp-approve`);
        await session.waitForElement(`.mcp-server[data-name="${name}"][data-state="ready"]`, 60_000);
      }
      const row = await session.text('.mcp-server[data-name="time"]');
      assert(row.includes("time.get_current_time") && row.includes("sandboxed"), `the server's tools and sandbox are listed: ${row}`);
      await shot(session, "15-mcp-servers");
      // The window learns the new tools after the approval; the call dialog offers them then.
      await session.waitFor("the server's tool in the call dialog", async () => {
        await session.click(".write-call");
        await session.waitForElement(".manual-dialog");
        const offered = await session.execute(
          "const names = [...document.querySelectorAll('.manual-tool option')].map(o => o.value); return names.includes('time.get_current_time') && names.includes('every.trigger-long-running-operation');",
        );
        await session.press(Keys.Escape);
        await session.waitFor("the call dialog to close", async () => (await session.findAll(".manual-dialog")).length === 0);
        return offered;
      });
      await writeCall(session, "time.get_current_time", { timezone: "Asia/Tokyo" });
      await waitForConfirmation(session);
      const source = await session.text(".confirm-source");
      assert(source.includes("MCP server time") && source.includes("stdio"), `the confirmation names the server: ${source}`);
      await shot(session, "16-mcp-confirm");
      await session.click('.confirm-dialog [data-action="once"]');
      await dialogGone(session);
      await session.waitFor("the call to show as ok", async () => (await selectedStatus(session)) === "ok", 60_000);
      const detail = await session.text(".inspector-detail");
      assert(detail.includes("MCP exchange with time") && detail.includes("tools/call") && detail.includes("Asia/Tokyo"), `the inspector shows the exchange: ${detail}`);
      await session.execute("document.querySelector('.mcp-request').scrollIntoView();");
      await shot(session, "17-mcp-inspector");

      // A call that would run for an hour: the chat's Stop cancels it and the server is told.
      await writeCall(session, "every.trigger-long-running-operation", { duration: 3600, steps: 1 });
      await waitForConfirmation(session);
      await session.click('.confirm-dialog [data-action="once"]');
      await dialogGone(session);
      await session.waitFor("the call to run", async () => (await selectedStatus(session)) === "running");
      await session.click(".inspector-detail .stop-call");
      await session.waitFor("the call to stop", async () => (await selectedStatus(session)) === "failed", 30_000);
      const stopped = await session.text(".inspector-detail");
      assert(stopped.includes("stopped by the user"), `the inspector says the call was stopped: ${stopped}`);
      await shot(session, "21-mcp-stopped");
      // The conversation is free again.
      await session.click('.side-tab[data-page="chat"]');
      await session.waitForElement(".stop-button.hidden");
    },
  ],
];

/** The real MCP servers scripts/mcp-servers.sh installs (npm test does). */
function mcpServers() {
  const dir = process.env.LANTERN_MCP_SERVERS || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "lantern", "mcp-servers");
  assert(existsSync(join(dir, "venv/bin/mcp-server-time")), `no MCP test servers in ${dir} (scripts/mcp-servers.sh installs them)`);
  return dir;
}

// ---- runner ----

let passed = 0;
let failed = 0;
const started = Date.now();
try {
  await waitForServer(driverUrl, 20_000);
  for (const [name, run] of tests) {
    if (filter && !name.includes(filter)) continue;
    const t0 = Date.now();
    try {
      await run().catch(async (error) => {
        // The window as it was when the test failed, and what the chat said.
        const failedShot = `failed-${name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60)}`;
        await current?.painted().then(() => shot(current, failedShot)).catch(() => {});
        const chat = await current?.text(".chat-log").catch(() => null);
        if (chat) error.message += `\n     chat: ${chat.slice(0, 600)}`;
        throw error;
      });
      passed += 1;
      console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (error) {
      failed += 1;
      console.log(`FAIL ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n     ${error.message}`);
    }
    await current?.end().catch(() => {});
    current = null;
    // WebKitWebDriver needs a moment to let go of the previous window.
    await sleep(300);
  }
} catch (error) {
  failed += 1;
  console.log(`FAIL could not start: ${error.message}\n${driverLog}`);
} finally {
  driver.kill();
  for (const server of servers) server.kill();
  for (const { kept, used } of keptBetweenRuns) {
    if (existsSync(used)) cpSync(used, kept, keptCopy);
  }
  for (const dir of [home, ...workspaces]) rmSync(dir, { recursive: true, force: true });
}
console.log(`end-to-end: ${((Date.now() - started) / 1000).toFixed(1)} s, screenshots in ${screenshots}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
