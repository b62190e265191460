import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { escapeHtml, highlightHtml, highlightSegments, queryTerms, wordMatches } from "../../src/lib/highlight";

describe("escapeHtml", () => {
  it("escapes the five HTML metacharacters", () => {
    assert.equal(
      escapeHtml(`<a href="x" onclick='y'>&</a>`),
      "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;",
    );
  });
  it("leaves other text alone, including non-ASCII", () => {
    assert.equal(escapeHtml("Sauerteig — Brot 🍞"), "Sauerteig — Brot 🍞");
  });
});

describe("queryTerms", () => {
  it("lower-cases, drops stopwords and duplicates, longest first", () => {
    assert.deepEqual(queryTerms("fusing ranked lists from BM25 and embeddings"), [
      "embeddings",
      "fusing",
      "ranked",
      "lists",
      "bm25",
    ]);
  });
  it("keeps non-ASCII words", () => {
    assert.deepEqual(queryTerms("Größe Ölkanne"), ["ölkanne", "größe"]);
  });
  it("is empty for punctuation or stopwords only", () => {
    assert.deepEqual(queryTerms("the ... and ?"), []);
  });
});

describe("wordMatches", () => {
  it("matches equal words case-insensitively", () => {
    assert.equal(wordMatches("BM25", "bm25"), true);
  });
  it("matches words that differ by a common ending", () => {
    assert.equal(wordMatches("embedding", "embeddings"), true);
    assert.equal(wordMatches("ranked", "rank"), true);
    assert.equal(wordMatches("ranks", "ranked"), true);
    assert.equal(wordMatches("lists", "list"), true);
    assert.equal(wordMatches("Score", "scores"), true);
  });
  it("does not match short prefixes or other words", () => {
    assert.equal(wordMatches("ran", "rank"), false);
    assert.equal(wordMatches("ranking", "ran"), false);
    assert.equal(wordMatches("rankingsystem", "rank"), false);
    assert.equal(wordMatches("fusion", "fusing"), false);
  });
});

describe("highlightSegments / highlightHtml", () => {
  it("marks whole matching words", () => {
    assert.deepEqual(highlightSegments("BM25 scores are unbounded", ["bm25", "scores"]), [
      { text: "BM25", match: true },
      { text: " ", match: false },
      { text: "scores", match: true },
      { text: " are unbounded", match: false },
    ]);
  });
  it("does not mark parts of words", () => {
    assert.equal(highlightHtml("rebranded brand", ["brand"]), "rebranded <mark>brand</mark>");
  });
  it("escapes text inside and outside marks", () => {
    const html = highlightHtml(`<script>alert("x")</script> & script`, ["script"]);
    assert.equal(
      html,
      "&lt;<mark>script</mark>&gt;alert(&quot;x&quot;)&lt;/<mark>script</mark>&gt; &amp; <mark>script</mark>",
    );
    assert.doesNotMatch(html, /<script/i);
  });
  it("returns the escaped text when there are no terms", () => {
    assert.equal(highlightHtml("a < b", []), "a &lt; b");
    assert.deepEqual(highlightSegments("", ["x"]), []);
  });
});
