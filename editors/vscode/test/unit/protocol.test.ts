import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { actionDescription, isCodeActionLiteral, orderActions } from "../../src/lib/actions";
import { parseFromWebview } from "../../src/lib/messages";
import { parseRow, parseRows, parseSearchAnswer } from "../../src/lib/protocol";
import { lastErrorLine, startFailureMessage, startFailureReason } from "../../src/lib/startError";

describe("parseRow / parseSearchAnswer", () => {
  it("fills defaults and keeps lines sane", () => {
    assert.deepEqual(
      parseRow({ uri: "file:///a.md", path: "a.md", line_start: 3.7, line_end: 1, legs: { bm25: 2, x: "y" } }),
      {
        path: "a.md",
        uri: "file:///a.md",
        vault: "",
        title: "a.md",
        score: 0,
        line_start: 3,
        line_end: 3,
        heading: "",
        excerpt: "",
        legs: { bm25: 2 },
      },
    );
  });
  it("drops rows without a uri, and non-arrays", () => {
    const rows = parseRows([{ title: "x" }, null, { uri: "file:///b.md", title: "B", relation: "linked" }]);
    assert.deepEqual(
      rows.map((r) => [r.title, r.relation]),
      [["B", "linked"]],
    );
    assert.deepEqual(parseRows({}), []);
  });
  it("turns no answer into an empty partial one", () => {
    assert.deepEqual(parseSearchAnswer(null, "q"), {
      query: "q",
      results: [],
      complete: false,
      note: "the server gave no answer",
    });
    assert.deepEqual(parseSearchAnswer({ results: [], complete: true }, "q"), {
      query: "q",
      results: [],
      complete: true,
      note: "",
    });
  });
});

describe("parseFromWebview", () => {
  it("accepts well-formed messages only", () => {
    assert.deepEqual(parseFromWebview({ type: "ready" }), { type: "ready" });
    // `llm` is only false when the webview says so (typing); absent means "run the LLM steps".
    assert.deepEqual(parseFromWebview({ type: "search", seq: 2, query: "x" }), { type: "search", seq: 2, query: "x", llm: true });
    assert.deepEqual(parseFromWebview({ type: "search", seq: 2, query: "x", llm: false }), {
      type: "search",
      seq: 2,
      query: "x",
      llm: false,
    });
    assert.deepEqual(parseFromWebview({ type: "search", seq: 2, query: "x", llm: "no" }), {
      type: "search",
      seq: 2,
      query: "x",
      llm: true,
    });
    assert.deepEqual(parseFromWebview({ type: "open", seq: 2, index: 0 }), {
      type: "open",
      seq: 2,
      index: 0,
      preserveFocus: false,
    });
    assert.equal(parseFromWebview({ type: "search", seq: "2", query: "x" }), undefined);
    assert.equal(parseFromWebview({ type: "eval", code: "x" }), undefined);
    assert.equal(parseFromWebview("ready"), undefined);
  });
  it("caps very long queries", () => {
    const msg = parseFromWebview({ type: "search", seq: 1, query: "x".repeat(5000) });
    assert.equal(msg?.type === "search" ? msg.query.length : -1, 1000);
  });
  it("accepts the Ask messages", () => {
    assert.deepEqual(parseFromWebview({ type: "ask", seq: 3, question: "why?" }), { type: "ask", seq: 3, question: "why?" });
    const long = parseFromWebview({ type: "ask", seq: 3, question: "y".repeat(9000) });
    assert.equal(long?.type === "ask" ? long.question.length : -1, 4000);
    assert.deepEqual(parseFromWebview({ type: "askStop", seq: 3 }), { type: "askStop", seq: 3 });
    assert.deepEqual(parseFromWebview({ type: "openSource", seq: 3, index: 1, preserveFocus: true }), {
      type: "openSource",
      seq: 3,
      index: 1,
      preserveFocus: true,
    });
    assert.equal(parseFromWebview({ type: "ask", seq: 3 }), undefined);
    assert.equal(parseFromWebview({ type: "askStop" }), undefined);
    assert.equal(parseFromWebview({ type: "openSource", seq: 3, index: "1" }), undefined);
  });
});

describe("orderActions", () => {
  it("puts the one-mention fixes first, whole-note actions below them, in the server's order", () => {
    const actions = [
      { title: "Link 2 confident mentions", kind: "refactor.rewrite" },
      { title: "Link 'BM25' → [[BM25]] (3 mentions)", kind: "quickfix" },
      { title: "Add related links under '## Related'", kind: "refactor.rewrite" },
      { title: "Link 'RRF' → [[RRF]]", kind: "quickfix" },
    ];
    assert.deepEqual(
      orderActions(actions).map((a) => a.title),
      [
        "Link 'BM25' → [[BM25]] (3 mentions)",
        "Link 'RRF' → [[RRF]]",
        "Link 2 confident mentions",
        "Add related links under '## Related'",
      ],
    );
    assert.equal(actionDescription("quickfix"), "link this mention");
    assert.equal(actionDescription("refactor.rewrite"), "whole note");
    assert.equal(actionDescription(undefined), "");
  });
});

describe("start failures", () => {
  const python = { command: "/usr/bin/python3", args: ["-m", "zettel_lsp"], source: "python" as const };
  it("recognises a Python without the package", () => {
    const stderr = "Traceback...\n/usr/bin/python3: No module named zettel_lsp\n";
    assert.equal(
      startFailureReason(python, { stderr, exitCode: 1 }),
      "/usr/bin/python3 has no zettel_lsp package installed",
    );
  });
  it("uses the missing-program reason and the last error line", () => {
    assert.equal(
      startFailureReason(python, { missing: "python3 was not found on PATH" }),
      "python3 was not found on PATH (command: /usr/bin/python3 -m zettel_lsp)",
    );
    assert.equal(
      startFailureReason(python, { stderr: "a\nValueError: bad\n\n", exitCode: 2 }),
      "'/usr/bin/python3 -m zettel_lsp' stopped (exit code 2): ValueError: bad",
    );
    assert.equal(startFailureReason(python, {}), "'/usr/bin/python3 -m zettel_lsp' stopped before it answered");
    const bare = { command: "/x/zettel-lsp", args: [], source: "setting" as const };
    assert.equal(
      startFailureReason(bare, { missing: "/x/zettel-lsp does not exist or is not executable" }),
      "/x/zettel-lsp does not exist or is not executable",
    );
    assert.equal(lastErrorLine("one\ntwo\n"), "two");
  });
  it("tells how to install and which settings to use", () => {
    const msg = startFailureMessage("x");
    for (const part of [
      "pipx install /path/to/zettel-lsp",
      "pip install /path/to/zettel-lsp",
      "scripts/setup.sh",
      "zettel.server.command",
      "zettel.server.python",
    ]) {
      assert.ok(msg.includes(part), part);
    }
    // Not published on PyPI: a bare `pip install zettel-lsp` would fail.
    assert.ok(!/pipx? install zettel-lsp/.test(msg), msg);
  });
});

describe("isCodeActionLiteral", () => {
  it("keeps actions to be resolved and drops bare commands", () => {
    // As the server sends "Add related links" to clients that resolve `edit`: no edit yet.
    const stub = { title: "Add related links under '## Related'", kind: "refactor.rewrite", data: { action: "x" } };
    assert.equal(isCodeActionLiteral(stub), true);
    assert.equal(isCodeActionLiteral({ title: "t", edit: { changes: {} } }), true);
    assert.equal(isCodeActionLiteral({ title: "t", command: { title: "c", command: "x" } }), true);
    assert.equal(isCodeActionLiteral({ title: "Run", command: "zettel.reindex" }), false);
    assert.equal(isCodeActionLiteral(null), false);
    assert.equal(isCodeActionLiteral({ kind: "quickfix" }), false);
  });
});
