import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSearchAnswer, type SearchRow } from "../../src/lib/protocol";
import {
  CELL_SEPARATOR,
  badgesOf,
  breadcrumbOf,
  excerptHtmlOf,
  excerptOf,
  folderHtml,
  folderOf,
  readableExcerpt,
  renderItemsHtml,
  shortFolder,
  summaryText,
  toResultsModel,
  tooltipOf,
} from "../../src/lib/results";

// As the server answers `zettel.search` for the e2e query on examples/vault.
const ANSWER = {
  query: "fusing ranked lists from BM25 and embeddings",
  results: [
    {
      path: "retrieval/Reciprocal rank fusion.md",
      uri: "file:///v/retrieval/Reciprocal%20rank%20fusion.md",
      vault: "/v",
      title: "Reciprocal rank fusion",
      score: 0.04918,
      line_start: 18,
      line_end: 20,
      heading: "Why ranks instead of scores",
      excerpt: "Why ranks instead of scores BM25 scores are unbounded; cosine similarities of embeddings…",
      legs: { bm25: 1, dense: 1 },
    },
    {
      path: "Information retrieval index.md",
      uri: "file:///v/Information%20retrieval%20index.md",
      vault: "/home/me/v",
      title: "Information retrieval index",
      score: 0.045,
      line_start: 4,
      line_end: 21,
      heading: "",
      excerpt: "<b>not bold</b>",
      legs: { title: 3 },
      graph: { credit: 0.001 },
    },
  ],
  complete: true,
  note: "",
};

describe("toResultsModel", () => {
  const model = toResultsModel(parseSearchAnswer(ANSWER, ANSWER.query));

  it("keeps order, titles, folders and lines", () => {
    assert.deepEqual(
      model.items.map((i) => [i.title, i.folder, i.lineStart, i.lineEnd]),
      [
        ["Reciprocal rank fusion", "retrieval", 18, 20],
        ["Information retrieval index", "v", 4, 21],
      ],
    );
    assert.equal(model.partial, false);
    assert.equal(model.note, "");
  });

  it("highlights the query's words in the excerpt and its breadcrumb", () => {
    const html = model.items[0]?.excerptHtml ?? "";
    assert.ok(html.includes("<mark>BM25</mark>"), html);
    assert.ok(html.includes("<mark>embeddings</mark>"), html);
    assert.equal(model.items[0]?.breadcrumb, "Why ranks instead of scores");
    assert.ok(model.items[0]?.breadcrumbHtml.includes("<mark>ranks</mark>"));
  });

  it("leaves the leading heading of a raw excerpt to the breadcrumb", () => {
    assert.equal(
      model.items[0]?.excerpt,
      "BM25 scores are unbounded; cosine similarities of embeddings…",
    );
  });

  it("escapes excerpts", () => {
    assert.equal(model.items[1]?.excerptHtml, "&lt;b&gt;not bold&lt;/b&gt;");
  });

  it("shows the note of a partial answer", () => {
    const partial = toResultsModel({ ...ANSWER, results: [], complete: false, note: "v: embedding (3/9 chunks)" });
    assert.equal(partial.partial, true);
    assert.equal(partial.note, "v: embedding (3/9 chunks)");
    const noNote = toResultsModel({ ...ANSWER, results: [], complete: false, note: "" });
    assert.match(noNote.note, /partial/);
  });

  it("keeps the note of a complete answer (a skipped LLM step says why)", () => {
    const note = "query expansion skipped: Ollama at http://127.0.0.1:11434 is not reachable";
    const m = toResultsModel({ ...ANSWER, results: [], complete: true, note });
    assert.equal(m.partial, false);
    assert.equal(m.note, note);
  });
});

describe("badgesOf", () => {
  const row = (extra: Partial<SearchRow>): SearchRow => ({
    path: "a.md",
    uri: "file:///a.md",
    vault: "/v",
    title: "A",
    score: 1,
    line_start: 0,
    line_end: 0,
    heading: "",
    excerpt: "",
    legs: {},
    ...extra,
  });

  it("lists legs by rank with readable names", () => {
    assert.deepEqual(
      badgesOf(row({ legs: { keyword: 4, dense: 1, bm25: 2 } })).map((b) => b.label),
      ["meaning", "BM25", "keyword"],
    );
  });
  it("puts the relation first and adds graph effects", () => {
    const badges = badgesOf(
      row({ legs: { title: 1 }, relation: "backlink", graph: { credit: 0.01, discount: 0.5 } }),
    );
    assert.deepEqual(
      badges.map((b) => [b.kind, b.label]),
      [
        ["relation", "backlink"],
        ["leg", "title"],
        ["graph", "links ↑"],
        ["graph", "mentions ↓"],
      ],
    );
    assert.match(badges[1]?.title ?? "", /rank 1/);
  });
  it("names the LLM rerank and sums up an expanded query's legs in one badge", () => {
    const badges = badgesOf(row({ legs: { dense: 2, llm: 1, "q1:bm25": 1, "q2:dense": 3 } }));
    assert.deepEqual(
      badges.map((b) => b.label),
      ["LLM", "meaning", "expanded"],
    );
    assert.match(badges[2]?.title ?? "", /query 1 BM25 \(rank 1\), query 2 meaning \(rank 3\)/);
  });
  it("says nothing about a graph that changed nothing", () => {
    assert.deepEqual(badgesOf(row({ legs: { dense: 1 }, graph: { discount: 1 } })).map((b) => b.label), ["meaning"]);
  });
  it("says a row no leg found came via links", () => {
    const badges = badgesOf(row({ graph: { credit: 0.02 } }));
    assert.deepEqual(badges.map((b) => [b.kind, b.label]), [["graph", "via links"]]);
    assert.deepEqual(badgesOf(row({})).map((b) => b.label), ["via links"]);
  });
});

describe("shortFolder", () => {
  it("keeps the last folders, cut from the left", () => {
    assert.equal(shortFolder("04. Old Format/Creativity and Arts/Colour Theory"), "…/Creativity and Arts/Colour Theory");
    assert.equal(shortFolder("a/b"), "a/b");
    assert.equal(shortFolder("notes"), "notes");
  });
});

describe("folderOf", () => {
  it("is the folder inside the vault, or the vault's name at the top", () => {
    assert.equal(folderOf({ path: "a/b/c.md", vault: "/v" }), "a/b");
    assert.equal(folderOf({ path: "c.md", vault: "/home/me/notes/" }), "notes");
    assert.equal(folderOf({ path: "c.md", vault: "C:\\Users\\me\\notes" }), "notes");
    assert.equal(folderOf({ path: "c.md", vault: "" }), "");
  });
  it("is the server's folder when it sends one (related rows carry no vault)", () => {
    assert.equal(folderOf({ path: "c.md", vault: "", folder: "notes" }), "notes");
  });
});

describe("renderItemsHtml", () => {
  it("renders options with escaped titles and attributes, one selected", () => {
    const model = toResultsModel(
      parseSearchAnswer(
        {
          ...ANSWER,
          results: [{ ...ANSWER.results[0], title: `"><img src=x onerror=alert(1)>`, path: `x"y/z.md` }],
        },
        "x",
      ),
    );
    const html = renderItemsHtml(model.items, 0);
    assert.ok(!html.includes("<img"), html);
    assert.ok(html.includes("&lt;img src=x onerror=alert(1)&gt;"));
    assert.ok(html.includes('class="result selected"'));
    assert.ok(html.includes('aria-selected="true"'));
    assert.ok(html.includes('data-index="0"'));
    assert.ok(html.includes('<span class="folder"><bdi dir="ltr">x&quot;y</bdi></span>'), html);
  });
  it("puts the title before the folder, the breadcrumb before the excerpt, and a tooltip on the row", () => {
    const model = toResultsModel(
      parseSearchAnswer(
        {
          ...ANSWER,
          results: [
            {
              ...ANSWER.results[0],
              path: "04. Organized Knowledge - Old Format/Creativity and Arts/Colour Theory/Colour Systems.md",
              title: "Colour Systems",
              heading: "Models > RGB",
              excerpt_text: "Red │ #f00\nGreen │ #0f0",
            },
          ],
        },
        "red",
      ),
      "red",
    );
    const html = renderItemsHtml(model.items, 0);
    const title = html.indexOf('<span class="title">Colour Systems</span>');
    const folder = html.indexOf('<span class="folder"><bdi dir="ltr">04. Organized Knowledge - Old Format/Creativity');
    assert.ok(title > 0 && folder > title, html);
    assert.ok(html.includes('<div class="excerpt"><span class="crumb">Models › RGB</span> <mark>Red</mark>'), html);
    assert.ok(html.includes("<br>Green"), html);
    assert.ok(html.includes('<div class="badges">'), html);
    assert.ok(html.includes('title="Colour Systems&#10;') || html.includes('title="Colour Systems\n'), html);
  });
  it("renders one line per result in compact mode, the excerpt in the tooltip", () => {
    const model = toResultsModel(parseSearchAnswer(ANSWER, ANSWER.query));
    const html = renderItemsHtml(model.items, 0, { compact: true });
    assert.ok(!html.includes('class="excerpt"'), html);
    assert.ok(!html.includes('class="badges"'), html);
    assert.ok(html.includes('<span class="title">Reciprocal rank fusion</span>'), html);
    assert.ok(html.includes("BM25 scores are unbounded"), html); // in the tooltip
    const item = model.items[0];
    assert.ok(item);
    assert.equal(
      tooltipOf(item, true),
      "Reciprocal rank fusion\nretrieval/Reciprocal rank fusion.md › Why ranks instead of scores\n\n" +
        "BM25 scores are unbounded; cosine similarities of embeddings…",
    );
    assert.equal(
      tooltipOf(item),
      "Reciprocal rank fusion\nretrieval/Reciprocal rank fusion.md › Why ranks instead of scores",
    );
  });
  it("is empty for no items", () => {
    assert.equal(renderItemsHtml([], -1), "");
  });
});

describe("summaryText", () => {
  it("counts results and stays empty for an empty query", () => {
    const m = toResultsModel(parseSearchAnswer(ANSWER, "q"), "q");
    assert.equal(summaryText(m), "2 results");
    assert.equal(summaryText({ ...m, items: [] }), "No results");
    assert.equal(summaryText({ ...m, items: m.items.slice(0, 1) }), "1 result");
    assert.equal(summaryText({ ...m, query: "  " }), "");
  });
});

describe("readable excerpts", () => {
  it("shows link text, not link syntax", () => {
    assert.equal(
      readableExcerpt(
        "See [[Reciprocal rank fusion|RRF]], [[BM25]] and [[Dense embeddings#Models]]; " +
          "[the paper](https://example.org/a_(b).pdf \"t\") ![[diagram.png]] ![chart](c.png) **bold** ==hl==",
      ),
      "See RRF, BM25 and Dense embeddings; the paper chart bold hl",
    );
  });
  it("shows a flattened table's rows as cells, without the separator row", () => {
    assert.equal(
      readableExcerpt("Colours | Colour | Hex | |:---|---:| | [[Red]] | #f00 | | [[Colour Schemes\\|Blue]] | #00f |"),
      ["Colours", "Colour", "Hex", "Red", "#f00", "Blue", "#00f"].join(CELL_SEPARATOR),
    );
    assert.equal(readableExcerpt("| a | b |"), `a${CELL_SEPARATOR}b`);
    // Not a table: a lone bar stays.
    assert.equal(readableExcerpt("x | y and 2*3*4 and snake_case_name"), "x | y and 2*3*4 and snake_case_name");
  });
  it("shows the text of a link the excerpt's window cut, not its brackets", () => {
    // As the server cut them (its `excerpt` is 200 characters around the first query word).
    assert.equal(
      readableExcerpt("…ne similarity]] Vector search alone misses [[Dense embeddings|de…"),
      "…ne similarity Vector search alone misses de…",
    );
    assert.equal(readableExcerpt("…ddings|dense]] list and [[BM25#Scoring]]"), "… dense list and BM25");
    assert.equal(readableExcerpt("…the paper](https://example.org/p.pdf) says ![[diagram.pn…"), "…the paper says …");
    assert.equal(readableExcerpt("see [the paper](https://exa…"), "see the paper…");
  });
  it("starts a cut excerpt at a whole word", () => {
    assert.equal(
      excerptOf({ excerpt: "", excerpt_text: "…epts Test Coverage Test Oracle", heading: "" }),
      "…Test Coverage Test Oracle",
    );
    assert.equal(excerptOf({ excerpt: "…ne similarity]] Vector search", heading: "" }), "…similarity Vector search");
    assert.equal(excerptOf({ excerpt: "…ddings|dense]] list", heading: "" }), "…dense list");
    // Uncut, or nothing but the piece: as it is.
    assert.equal(excerptOf({ excerpt: "", excerpt_text: "Test Coverage…", heading: "" }), "Test Coverage…");
    assert.equal(excerptOf({ excerpt: "", excerpt_text: "…epts", heading: "" }), "…epts");
  });
  it("prefers the server's readable text", () => {
    assert.equal(excerptOf({ excerpt: "[[a|b]]", excerpt_text: "b", heading: "" }), "b");
    assert.equal(excerptOf({ excerpt: "Intro [[a|b]] text", heading: "Intro" }), "b text");
    assert.equal(excerptOf({ excerpt: "Intro", heading: "Intro" }), "");
  });
  it("renders rows on their own lines, cells between dimmed separators, all escaped", () => {
    assert.equal(
      excerptHtmlOf(`<b> red${CELL_SEPARATOR}x\nblue`, ["red"]),
      '&lt;b&gt; <mark>red</mark><span class="cell-sep" aria-hidden="true"> │ </span>x<br>blue',
    );
  });
  it("names the heading path as a breadcrumb", () => {
    assert.equal(breadcrumbOf("Colour Theory > Primaries > [[Red]]"), "Colour Theory › Primaries › Red");
    assert.equal(breadcrumbOf(""), "");
  });
  it("keeps a folder left to right inside its right-to-left (left-shortened) box", () => {
    assert.equal(folderHtml("a/<b>"), '<span class="folder"><bdi dir="ltr">a/&lt;b&gt;</bdi></span>');
  });
});
