import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseStatus, type VaultStatus } from "../../src/lib/protocol";
import { ollamaEntry, phaseText, statusView, vaultDetails, vaultLine } from "../../src/lib/status";
import { assertLike } from "./like";

const vault = (extra: Partial<VaultStatus>): VaultStatus => ({
  root: "/home/me/notes",
  phase: "ready",
  complete: true,
  note: "",
  cards_in_graph: 45,
  problems: [],
  cards: 45,
  chunks: 180,
  cards_embedded: 45,
  chunks_waiting_for_vectors: 0,
  model: "sentence-transformers/all-MiniLM-L6-v2",
  index_dir: "/tmp/idx",
  backend: "edge",
  ...extra,
});

describe("statusView", () => {
  it("shows the client's own states first", () => {
    assertLike(statusView(undefined, "starting"), { text: "$(loading~spin) Zettel: starting", busy: true });
    assertLike(statusView(undefined, "failed"), { problem: true, ready: false });
    assert.match(statusView(undefined, "failed").text, /not running/);
    assert.match(statusView(undefined, "stopped").text, /stopped/);
    assert.match(statusView(undefined, "running").text, /starting/);
  });

  it("says the server is being installed while 'Install zettel-lsp' runs", () => {
    assertLike(statusView(undefined, "installing"), {
      text: "$(loading~spin) Zettel: installing the server",
      busy: true,
      problem: false,
    });
  });

  it("shows cards when ready", () => {
    const v = statusView({ version: "0.1.0", vaults: [vault({})] }, "running");
    assertLike(v, { text: "$(notebook) Zettel: 45 cards", ready: true, busy: false, problem: false });
    assert.ok(v.tooltip.includes("notes: ready, 45 cards, 180 chunks"), v.tooltip);
  });

  it("shows embedding progress", () => {
    const v = statusView(
      {
        version: "",
        vaults: [vault({ phase: "embedding", complete: false, cards_embedded: 9, note: "embedding (20/180 chunks)" })],
      },
      "running",
    );
    assertLike(v, { text: "$(sync~spin) Zettel: embedding 9/45 cards (20%)", ready: false, busy: true });
  });

  it("shows the earlier phases with the card count", () => {
    const v = statusView({ version: "", vaults: [vault({ phase: "graph", complete: false })] }, "running");
    assert.equal(v.text, "$(sync~spin) Zettel: linking (45 cards)");
    const s = statusView(
      { version: "", vaults: [vault({ phase: "starting", cards: undefined, cards_in_graph: 0 })] },
      "running",
    );
    assert.equal(s.text, "$(sync~spin) Zettel: starting (0 cards)");
  });

  it("sums several vaults and reports the least advanced one", () => {
    const v = statusView(
      { version: "", vaults: [vault({}), vault({ root: "/b", phase: "syncing", cards: 5, complete: false })] },
      "running",
    );
    assert.equal(v.text, "$(sync~spin) Zettel: syncing (50 cards)");
  });

  it("flags read-only and failed vaults", () => {
    assertLike(statusView({ version: "", vaults: [vault({}), vault({ phase: "read-only" })] }, "running"), {
      text: "$(lock) Zettel: read-only",
      problem: true,
    });
    assert.equal(
      statusView({ version: "", vaults: [vault({ phase: "failed" })] }, "running").text,
      "$(error) Zettel: index failed",
    );
  });

  it("says when no folder is open", () => {
    assert.equal(statusView({ version: "", vaults: [] }, "running").text, "$(circle-slash) Zettel: no folder");
  });
});

describe("phaseText / vaultLine / vaultDetails", () => {
  it("describe a vault", () => {
    assert.equal(phaseText(vault({ phase: "embedding", cards: 0, cards_embedded: 0 })), "embedding 0/0 cards");
    assert.equal(
      vaultLine(vault({ phase: "embedding", cards_embedded: 40, chunks_waiting_for_vectors: 12, note: "n" })),
      "notes: embedding 40/45 cards (88%), 45 cards, 180 chunks, 12 chunks waiting for vectors (n)",
    );
    assert.deepEqual(vaultDetails(vault({ problems: ["x"], skipped: { "a.md": "too big" } })), [
      "folder: /home/me/notes",
      "phase: ready",
      "cards: 45, chunks: 180",
      "cards with vectors: 45",
      "model: sentence-transformers/all-MiniLM-L6-v2",
      "backend: edge",
      "index: /tmp/idx",
      "skipped files: 1",
      "problems: 1",
    ]);
    const multilingual = vaultDetails(
      vault({
        legs_ready: ["bm25", "keyword", "title", "dense", "dense_ml"],
        languages: { en: 40, de: 5 },
        multilingual_scope: "all cards",
        cards_embedded_multilingual: 30,
        cards_waiting_for_multilingual: 15,
        suggestion_weights: "chosen on this vault's links",
      }),
    );
    assert.deepEqual(multilingual.slice(3, 8), [
      "cards with vectors: 45",
      "search legs ready: bm25, keyword, title, dense, dense_ml",
      "languages: en 40, de 5",
      "multilingual: all cards, 30 cards embedded, 15 cards waiting",
      "suggestion weights: chosen on this vault's links",
    ]);
  });
});

describe("parseStatus", () => {
  it("parses the server's JSON and drops malformed vaults", () => {
    const s = parseStatus({
      version: "0.1.0",
      vaults: [
        { root: "/n", phase: "embedding", complete: false, note: "", cards_in_graph: 3, problems: ["p", 1], cards: 3 },
        { phase: "ready" },
        "junk",
      ],
    });
    assert.equal(s?.vaults.length, 1);
    assertLike(s?.vaults[0], { root: "/n", phase: "embedding", cards: 3, problems: ["p"] });
    assert.equal(parseStatus(null), undefined);
    assert.equal(parseStatus({ vaults: [{ root: "/x", phase: "new-phase" }] })?.vaults[0]?.phase, "starting");
    const multilingual = parseStatus({
      vaults: [
        {
          root: "/m",
          phase: "ready",
          legs_ready: ["bm25", 3, "dense_ml"],
          languages: { de: 8, ru: "x" },
          multilingual_scope: "non-English cards",
          cards_embedded_multilingual: 8,
          cards_waiting_for_multilingual: 0,
        },
      ],
    });
    assertLike(multilingual?.vaults[0], {
      legs_ready: ["bm25", "dense_ml"],
      languages: { de: 8 },
      multilingual_scope: "non-English cards",
      cards_embedded_multilingual: 8,
      cards_waiting_for_multilingual: 0,
    });
  });
});

describe("Ollama in Show Status", () => {
  const raw = {
    reachable: true,
    host: "http://127.0.0.1:11434",
    models: ["llama3.2:latest", "nomic-embed-text:latest"],
    chat_model: "llama3.2",
    chat_model_available: true,
    embed_model: "nomic-embed-text",
    embed_model_available: true,
    message: null,
  };

  it("parses `ollama` when the server adds it", () => {
    const s = parseStatus({ version: "0.2.0", vaults: [], ollama: { ...raw, models: ["a", 3] } });
    assertLike(s?.ollama, { reachable: true, host: raw.host, models: ["a"], message: null });
    assert.equal(parseStatus({ version: "0.2.0", vaults: [] })?.ollama, undefined);
  });

  it("says reachable, with the models", () => {
    const e = ollamaEntry(parseStatus({ vaults: [], ollama: raw })?.ollama);
    assert.equal(e.label, "$(check) Ollama: reachable");
    assert.equal(e.description, "http://127.0.0.1:11434");
    assert.match(e.detail, /chat model llama3\.2: available/);
    assert.match(e.detail, /models: llama3\.2:latest, nomic-embed-text:latest/);
  });

  it("warns about a chat model that is not pulled", () => {
    const message = "Ollama at http://h:11434 has no model 'llama3.2'; pull it with 'ollama pull llama3.2'";
    const e = ollamaEntry(
      parseStatus({ vaults: [], ollama: { ...raw, models: [], chat_model_available: false, message } })?.ollama,
    );
    assert.equal(e.label, "$(warning) Ollama: reachable");
    assert.ok(e.detail.startsWith(message), e.detail);
    assert.match(e.detail, /chat model llama3\.2: not pulled/);
    assert.match(e.detail, /no models pulled/);
  });

  it("says not reachable (and that only the LLM features need it), or unknown", () => {
    const message = "Ollama at http://127.0.0.1:9 is not reachable; start it with 'ollama serve' or set ollamaHost";
    const e = ollamaEntry(
      parseStatus({ vaults: [], ollama: { ...raw, reachable: false, host: "http://127.0.0.1:9", models: [], message } })?.ollama,
    );
    assert.equal(e.label, "$(circle-slash) Ollama: not reachable");
    assert.ok(e.detail.startsWith(message));
    assert.match(e.detail, /Only Ask and the optional LLM search steps need it/);
    assert.match(ollamaEntry(undefined).label, /unknown/);
  });
});
