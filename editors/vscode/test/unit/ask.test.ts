import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import {
  ASK_DELTA_METHOD,
  AskStreams,
  askStatusText,
  askToken,
  citedSource,
  finalAnswer,
  parseAskDelta,
  renderAnswerHtml,
  renderSourcesHtml,
  scoreText,
  sourcesHeading,
  toAskModel,
} from "../../src/lib/ask";
import { parseAskAnswer } from "../../src/lib/protocol";
import { assertLike } from "./like";

// As the server answers `zettel.ask` on examples/vault with the Ollama stand-in (shortened).
const ANSWER = {
  question: "how does reciprocal rank fusion combine result lists",
  answer: "According to [Reciprocal rank fusion], the notes answer the question.",
  model: "llama3.2",
  sources: [
    {
      path: "retrieval/Reciprocal rank fusion.md",
      uri: "file:///v/retrieval/Reciprocal%20rank%20fusion.md",
      title: "Reciprocal rank fusion",
      chunk: 0,
      line_start: 4,
      line_end: 6,
      score: 0.057377,
      excerpt: "Reciprocal rank fusion (RRF) merges several ranked lists into one…",
    },
    {
      path: "Related reading.md",
      uri: "file:///v/Related%20reading.md",
      title: "Related <reading>",
      chunk: 0,
      line_start: 0,
      line_end: 0,
      score: 0.04689,
      excerpt: "<script>alert(1)</script> lists",
    },
    { path: "broken.md", title: "no uri" },
    "junk",
  ],
  fallback: null,
  messages: [],
  context_chunks: 2,
  cancelled: false,
  vault: "/home/me/v",
};

describe("toAskModel's excerpts", () => {
  const first = ANSWER.sources[0] as Record<string, unknown>;
  const withSources = (...sources: Record<string, unknown>[]) =>
    toAskModel(parseAskAnswer({ ...ANSWER, sources }, ANSWER.question)).sources;
  it("makes a raw excerpt readable, prefers the server's readable text and shows its heading", () => {
    const sources = withSources(
      { ...first, excerpt: "…ne similarity]] Vector search alone misses [[BM25]] matches" },
      { ...first, excerpt: "Primaries | Red | warm |", excerpt_text: "Red │ warm", heading: "Colour Theory > Primaries" },
    );
    assert.equal(sources[0]?.excerpt, "…similarity Vector search alone misses BM25 matches");
    assert.equal(sources[0]?.breadcrumb, "");
    assert.equal(sources[1]?.excerpt, "Red │ warm");
    assert.equal(sources[1]?.breadcrumb, "Colour Theory › Primaries");
    const html = renderSourcesHtml(withSources({ ...first, heading: "Why scores" }), 0);
    assert.ok(html.includes('<div class="excerpt"><span class="crumb">Why scores</span> <mark>Reciprocal</mark>'), html);
  });
});

describe("parseAskDelta", () => {
  it("accepts {token, delta} and nothing else", () => {
    assert.deepEqual(parseAskDelta({ token: "t1", delta: "According " }), { token: "t1", delta: "According " });
    assert.deepEqual(parseAskDelta({ token: 7, delta: "x" }), { token: "7", delta: "x" });
    assert.equal(parseAskDelta({ token: "t1" }), undefined);
    assert.equal(parseAskDelta({ token: "", delta: "x" }), undefined);
    assert.equal(parseAskDelta({ token: "t1", delta: 3 }), undefined);
    assert.equal(parseAskDelta(null), undefined);
    assert.equal(parseAskDelta("t1"), undefined);
    assert.equal(ASK_DELTA_METHOD, "zettel/askDelta");
  });
});

describe("AskStreams (routing streamed pieces by token)", () => {
  it("sends each piece to the request that owns its token, in order", () => {
    const streams = new AskStreams();
    const a: string[] = [];
    const b: string[] = [];
    streams.listen("a", (d) => a.push(d));
    streams.listen("b", (d) => b.push(d));
    assert.equal(streams.deliver({ token: "a", delta: "According " }), true);
    assert.equal(streams.deliver({ token: "b", delta: "The notes " }), true);
    assert.equal(streams.deliver({ token: "a", delta: "to " }), true);
    assert.deepEqual(a, ["According ", "to "]);
    assert.deepEqual(b, ["The notes "]);
    assert.equal(streams.open, 2);
  });

  it("drops pieces that come after the request ended or was stopped, and unknown tokens", () => {
    const streams = new AskStreams();
    const got: string[] = [];
    const stop = streams.listen("t", (d) => got.push(d));
    streams.deliver({ token: "t", delta: "one " });
    stop();
    // The server answers a cancel at once; a piece already on its way still arrives.
    assert.equal(streams.deliver({ token: "t", delta: "late" }), false);
    assert.equal(streams.deliver({ token: "another-window", delta: "x" }), false);
    assert.deepEqual(got, ["one "]);
    assert.equal(streams.open, 0);
  });

  it("ignores malformed and empty pieces", () => {
    const streams = new AskStreams();
    const got: string[] = [];
    streams.listen("t", (d) => got.push(d));
    assert.equal(streams.deliver({ token: "t" }), false);
    assert.equal(streams.deliver({ token: "t", delta: "" }), false);
    assert.equal(streams.deliver(undefined), false);
    assert.deepEqual(got, []);
  });

  it("a stale stop does not remove a newer listener of the same token", () => {
    const streams = new AskStreams();
    const got: string[] = [];
    const stopOld = streams.listen("t", () => got.push("old"));
    streams.listen("t", (d) => got.push(d));
    stopOld();
    streams.deliver({ token: "t", delta: "new" });
    assert.deepEqual(got, ["new"]);
    streams.clear();
    assert.equal(streams.open, 0);
  });

  it("makes a fresh token per request", () => {
    const a = askToken(randomUUID);
    const b = askToken(randomUUID);
    assert.match(a, /^zettel-ask-[0-9a-f-]{36}$/);
    assert.notEqual(a, b);
  });
});

describe("parseAskAnswer / toAskModel", () => {
  const model = toAskModel(parseAskAnswer(ANSWER, ANSWER.question));

  it("keeps the answer and the sources in prompt order, dropping malformed ones", () => {
    assert.equal(model.answer, ANSWER.answer);
    assert.equal(model.model, "llama3.2");
    assert.equal(model.fallback, "");
    assert.equal(model.cancelled, false);
    assert.deepEqual(
      model.sources.map((s) => [s.title, s.folder, s.scoreText, s.lineStart, s.lineEnd]),
      [
        ["Reciprocal rank fusion", "retrieval", "0.057", 4, 6],
        ["Related <reading>", "v", "0.047", 0, 0],
      ],
    );
    assertLike(model.sources[0], { uri: "file:///v/retrieval/Reciprocal%20rank%20fusion.md", path: "retrieval/Reciprocal rank fusion.md" });
  });

  it("highlights the question's words and escapes excerpts", () => {
    assert.match(model.sources[0]?.excerptHtml ?? "", /<mark>Reciprocal<\/mark> <mark>rank<\/mark> <mark>fusion<\/mark>/);
    assert.equal(model.sources[1]?.excerptHtml, "&lt;script&gt;alert(1)&lt;/script&gt; <mark>lists</mark>");
  });

  it("keeps the fallback and the messages when Ollama cannot answer", () => {
    const fallback = "Ollama at http://127.0.0.1:9 is not reachable; start it with 'ollama serve' or set ollamaHost";
    const m = toAskModel(
      parseAskAnswer({ ...ANSWER, answer: "", fallback, messages: ["dense leg skipped", 4, ""] }, ANSWER.question),
    );
    assert.equal(m.fallback, fallback);
    assert.deepEqual(m.messages, ["dense leg skipped"]);
    assert.equal(m.sources.length, 2);
    assert.equal(askStatusText("answered", m), "No answer; 2 notes retrieved");
    assert.equal(sourcesHeading(m), "Retrieved notes");
  });

  it("survives a missing or odd answer", () => {
    const m = toAskModel(parseAskAnswer(null, "q"));
    assert.equal(m.question, "q");
    assert.equal(m.answer, "");
    assert.deepEqual(m.sources, []);
    assert.match(m.fallback, /no answer/);
    const empty = parseAskAnswer({ answer: 3, sources: "x", fallback: "  " }, "q");
    assert.deepEqual([empty.answer, empty.sources, empty.fallback, empty.question], ["", [], null, "q"]);
  });

  it("formats scores", () => {
    assert.equal(scoreText(0.057377), "0.057");
    assert.equal(scoreText(12.34), "12.3");
    assert.equal(scoreText(Number.NaN), "");
  });
});

describe("status line and the final text", () => {
  it("says what is going on", () => {
    assert.equal(askStatusText("asking"), "Asking…");
    assert.equal(askStatusText("stopped"), "Stopped.");
    assert.equal(askStatusText("failed"), "");
    const m = toAskModel(parseAskAnswer(ANSWER, ANSWER.question));
    assert.equal(askStatusText("answered", m), "Answered by llama3.2 from 2 notes");
    assert.equal(askStatusText("answered", { ...m, sources: m.sources.slice(0, 1) }), "Answered by llama3.2 from 1 note");
    assert.equal(askStatusText("answered", { ...m, answer: "", sources: [] }), "No answer");
    assert.equal(sourcesHeading(m), "Sources");
    assert.equal(sourcesHeading({ answer: "x", sources: [] }), "");
  });

  it("prefers the final answer, else keeps what streamed", () => {
    assert.equal(finalAnswer({ answer: "the whole answer" }, "the whole"), "the whole answer");
    assert.equal(finalAnswer({ answer: "" }, "cut off after"), "cut off after");
  });
});

describe("renderAnswerHtml", () => {
  const titles = ["Reciprocal rank fusion", "BM25"];

  it("escapes everything and keeps line breaks", () => {
    assert.equal(
      renderAnswerHtml("<img src=x onerror=alert(1)>\n& \"quotes\"\r\nline 3"),
      "&lt;img src=x onerror=alert(1)&gt;\n&amp; &quot;quotes&quot;\nline 3",
    );
  });

  it("marks up **bold** and `code`, escaped inside", () => {
    assert.equal(renderAnswerHtml("**RRF** uses `1/(k+r)` <b>"), "<strong>RRF</strong> uses <code>1/(k+r)</code> &lt;b&gt;");
    assert.equal(renderAnswerHtml("`<script>`"), "<code>&lt;script&gt;</code>");
    assert.equal(renderAnswerHtml("**a <i>**"), "<strong>a &lt;i&gt;</strong>");
  });

  it("leaves unfinished markup as text (while streaming)", () => {
    assert.equal(renderAnswerHtml("**bol"), "**bol");
    assert.equal(renderAnswerHtml("[Reciprocal rank"), "[Reciprocal rank");
    assert.equal(renderAnswerHtml("a ** b ** c"), "a ** b ** c");
  });

  it("turns citations of sources into buttons that open them", () => {
    assert.equal(
      renderAnswerHtml("According to [Reciprocal rank fusion], and [bm25].", titles),
      'According to <button type="button" class="cite" data-source="0" title="Open Reciprocal rank fusion">' +
        "[Reciprocal rank fusion]</button>, and " +
        '<button type="button" class="cite" data-source="1" title="Open BM25">[bm25]</button>.',
    );
    // Wiki links (with an alias) too; inside bold too; an unknown title stays text.
    assert.match(renderAnswerHtml("[[BM25|the BM25 note]]", titles), /data-source="1"[^>]*>\[\[BM25\|the BM25 note\]\]<\/button>/);
    assert.match(renderAnswerHtml("**[BM25]**", titles), /^<strong><button [^>]*data-source="1"/);
    assert.equal(renderAnswerHtml("[Unknown note] [<x>]", titles), "[Unknown note] [&lt;x&gt;]");
    // Before the sources are known (streaming), citations are plain text.
    assert.equal(renderAnswerHtml("[BM25]"), "[BM25]");
  });

  it("escapes a title in the button's attribute", () => {
    const html = renderAnswerHtml('[A "quoted" <title>]', ['A "quoted" <title>']);
    assert.equal(
      html,
      '<button type="button" class="cite" data-source="0" title="Open A &quot;quoted&quot; &lt;title&gt;">' +
        "[A &quot;quoted&quot; &lt;title&gt;]</button>",
    );
  });

  it("matches titles ignoring case and spacing", () => {
    assert.equal(citedSource("  reciprocal  RANK fusion ", titles), 0);
    assert.equal(citedSource("", titles), -1);
    assert.equal(citedSource("nope", titles), -1);
  });
});

describe("renderSourcesHtml", () => {
  const model = toAskModel(parseAskAnswer(ANSWER, ANSWER.question));
  const html = renderSourcesHtml(model.sources, 0);

  it("renders one option per source with the selection focusable", () => {
    assert.equal((html.match(/<li /g) ?? []).length, 2);
    assert.match(html, /<li id="source-0" class="source selected" role="option" aria-selected="true" tabindex="0" data-index="0">/);
    assert.match(html, /<li id="source-1" class="source" role="option" aria-selected="false" tabindex="-1" data-index="1">/);
    assert.match(html, /<span class="title">Reciprocal rank fusion<\/span><span class="folder"><bdi dir="ltr">retrieval<\/bdi><\/span><span class="score"[^>]*>0\.057<\/span>/);
  });

  it("escapes titles and folders", () => {
    assert.ok(html.includes("Related &lt;reading&gt;"));
    assert.ok(!html.includes("<reading>"));
    assert.ok(!html.includes("<script>"));
  });
});
