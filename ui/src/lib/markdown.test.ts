import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./markdown";

describe("renderMarkdown", () => {
  it("renders the usual Markdown", () => {
    const html = renderMarkdown("The version is **1.4.2**.\n\n- `package.json`\n\n```ts\nconst a = 1;\n```");
    expect(html).toContain("<strong>1.4.2</strong>");
    expect(html).toContain("<code>package.json</code>");
    expect(html).toContain("<pre><code");
  });

  it("removes anything that could run or restyle the app", () => {
    const html = renderMarkdown(
      '<script>alert(1)</script><img src=x onerror="alert(2)"><p style="color:red" onclick="x()">hi</p>\n\n[link](javascript:alert(3))',
    );
    expect(html).not.toMatch(/script|onerror|onclick|style=|javascript:|<img/i);
    expect(html).toContain("hi");
  });

  it("opens web links outside the app", () => {
    const html = renderMarkdown("[docs](https://example.org)");
    expect(html).toContain('href="https://example.org"');
    expect(html).toContain('target="_blank"');
    expect(html).toContain('rel="noopener noreferrer"');
  });
});
