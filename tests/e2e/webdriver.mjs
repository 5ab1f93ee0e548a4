// A small W3C WebDriver client over Node's fetch: just what the end-to-end tests use.

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

export const Keys = { Enter: "\uE007", Escape: "\uE00C", ArrowRight: "\uE014", F12: "\uE03C" };

async function request(url, method, body) {
  const response = await fetch(url, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const payload = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = payload.value ?? {};
    throw new Error(`WebDriver ${method} ${url}: ${error.error ?? response.status} ${error.message ?? ""}`.trim());
  }
  return payload.value;
}

export async function waitForServer(base, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      const status = await request(`${base}/status`, "GET");
      if (status?.ready !== false) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error(`no WebDriver server at ${base} after ${timeoutMs} ms`);
    await sleep(200);
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class Session {
  static async start(base, capabilities) {
    const value = await request(`${base}/session`, "POST", { capabilities: { alwaysMatch: capabilities } });
    return new Session(base, value.sessionId);
  }

  constructor(base, id) {
    this.url = `${base}/session/${id}`;
  }

  end() {
    return request(this.url, "DELETE");
  }

  /** Runs `script` (a function body) in the page and returns its value. */
  execute(script, ...args) {
    return request(`${this.url}/execute/sync`, "POST", { script, args });
  }

  async find(css) {
    const value = await request(`${this.url}/element`, "POST", { using: "css selector", value: css });
    return new Element(this, value[ELEMENT]);
  }

  async findAll(css) {
    const values = await request(`${this.url}/elements`, "POST", { using: "css selector", value: css });
    return values.map((v) => new Element(this, v[ELEMENT]));
  }

  /** Waits until `check` returns a truthy value (polling), and returns it. Gives up at once
   * when the WebDriver server has gone. */
  async waitFor(what, check, timeoutMs = 15_000) {
    const until = Date.now() + timeoutMs;
    let last;
    for (;;) {
      if (last && /fetch failed|ECONNREFUSED/.test(String(last.cause ?? last.message))) {
        throw new Error(`the WebDriver server is gone while waiting for ${what}: ${last.message}`);
      }
      try {
        const value = await check();
        if (value) return value;
      } catch (error) {
        last = error;
      }
      if (Date.now() > until) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (${last.message})` : ""}`);
      }
      await sleep(150);
    }
  }

  /** Waits for an element matching `css` and returns it. */
  waitForElement(css, timeoutMs) {
    return this.waitFor(css, async () => (await this.findAll(css))[0], timeoutMs);
  }

  /** Clicks the first element matching `css`, waiting for it; a click on an element that was
   * re-rendered in between (stale) is retried on its replacement. */
  click(css, timeoutMs) {
    return this.waitFor(`a click on ${css}`, async () => {
      const [element] = await this.findAll(css);
      if (!element) return false;
      await element.click();
      return true;
    }, timeoutMs);
  }

  /** The text content of the first element matching `css`, or null. */
  text(css) {
    return this.execute("const e = document.querySelector(arguments[0]); return e ? e.textContent : null;", css);
  }

  /** Resolves once the page has painted twice, so a screenshot shows the current state. */
  painted() {
    return request(`${this.url}/execute/async`, "POST", {
      script: "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
      args: [],
    });
  }

  async screenshot() {
    return Buffer.from(await request(`${this.url}/screenshot`, "GET"), "base64");
  }

  /** Clicks the point (`x`, `y`) of the viewport with Control held: a Ctrl+click. */
  async ctrlClickAt(x, y) {
    const control = "\uE009";
    const idle = { type: "pause", duration: 0 };
    const keys = [{ type: "keyDown", value: control }, idle, idle, idle, { type: "keyUp", value: control }];
    const mouse = [
      idle,
      { type: "pointerMove", duration: 0, origin: "viewport", x: Math.round(x), y: Math.round(y) },
      { type: "pointerDown", button: 0 },
      { type: "pointerUp", button: 0 },
      idle,
    ];
    await request(`${this.url}/actions`, "POST", {
      actions: [
        { type: "key", id: "keyboard", actions: keys },
        { type: "pointer", id: "mouse", parameters: { pointerType: "mouse" }, actions: mouse },
      ],
    });
    await request(`${this.url}/actions`, "DELETE");
  }

  /** Presses keys on whatever has focus. */
  async press(...keys) {
    const actions = keys.flatMap((key) => [
      { type: "keyDown", value: key },
      { type: "keyUp", value: key },
    ]);
    await request(`${this.url}/actions`, "POST", { actions: [{ type: "key", id: "keyboard", actions }] });
    await request(`${this.url}/actions`, "DELETE");
  }
}

export class Element {
  constructor(session, id) {
    this.session = session;
    this.url = `${session.url}/element/${id}`;
  }

  click() {
    return request(`${this.url}/click`, "POST", {});
  }

  type(text) {
    return request(`${this.url}/value`, "POST", { text });
  }

  clear() {
    return request(`${this.url}/clear`, "POST", {});
  }

  text() {
    return request(`${this.url}/text`, "GET");
  }
}
