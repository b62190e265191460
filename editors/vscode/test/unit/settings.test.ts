import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import {
  changedKeys,
  didChangeConfigurationParams,
  expandPath,
  INDEX_KEYS,
  LLM_KEYS,
  reindexes,
  sameSettings,
  SERVER_KEYS,
  serverSettings,
  type ServerKey,
} from "../../src/lib/settings";
import { assertLike } from "./like";

/** VS Code's defaults for the `zettel.*` keys as package.json declares them. */
function packageDefaults(): Record<string, unknown> {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    contributes: { configuration: { properties: Record<string, { default: unknown }> } };
  };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(pkg.contributes.configuration.properties)) {
    out[k.replace(/^zettel\./, "")] = v.default;
  }
  return out;
}

describe("serverSettings", () => {
  it("sends every server key and only server keys", () => {
    const defaults = packageDefaults();
    const settings = serverSettings((k) => defaults[k]);
    assert.deepEqual(Object.keys(settings).sort(), [...SERVER_KEYS].sort());
    for (const clientOnly of ["server.command", "server.python", "trace.server", "relatedView.limit", "searchView.compact"]) {
      assert.ok(!(clientOnly in settings), clientOnly);
    }
  });

  it("package.json declares every server key, with the server's defaults", () => {
    const defaults = packageDefaults();
    for (const key of [...SERVER_KEYS, "server.command", "server.python"]) {
      assert.ok(key in defaults, `package.json lacks zettel.${key}`);
    }
    assertLike(defaults, {
      model: "sentence-transformers/all-MiniLM-L6-v2",
      threads: null,
      ignore: [],
      maxFileBytes: 5242880,
      watch: true,
      debounceMs: 500,
      titleSource: "auto",
      followExternalSymlinks: false,
      legs: ["dense", "bm25", "keyword", "title"],
      graph: true,
      graphStrength: 1,
      symbolLimit: 20,
      hoverLimit: 5,
      relatedLimit: 5,
      relatedHeading: "## Related",
    });
    // The optional Ollama layer (zettel_lsp/llm/settings.py, LLMSettings): off by default.
    assertLike(defaults, {
      ollamaHost: "",
      chatModel: "llama3.2",
      embedModel: "nomic-embed-text",
      llmTimeout: 60,
      llmConnectTimeout: 2,
      temperature: 0.2,
      maxContextChunks: 8,
      contextWindow: 8192,
      expandQuery: false,
      llmRerank: false,
    });
  });

  it("says in every LLM setting's description that it needs Ollama and is off by default", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      contributes: { configuration: { properties: Record<string, { markdownDescription?: string }> } };
    };
    for (const key of LLM_KEYS) {
      const text = pkg.contributes.configuration.properties[`zettel.${key}`]?.markdownDescription ?? "";
      assert.match(text, /local \[?Ollama/, key);
      assert.match(text, /off by default/, key);
    }
  });

  it("sends the LLM settings as the server reads them", () => {
    const defaults = packageDefaults();
    assertLike(serverSettings((k) => defaults[k]), {
      ollamaHost: null,
      chatModel: "llama3.2",
      embedModel: "nomic-embed-text",
      llmTimeout: 60,
      expandQuery: false,
      llmRerank: false,
    });
    const values: Partial<Record<ServerKey, unknown>> = {
      ollamaHost: " http://gpu-box:11434 ",
      chatModel: " ",
      embedModel: "mxbai-embed-large",
      temperature: 0,
      expandQuery: true,
    };
    assert.deepEqual(serverSettings((k) => values[k]), {
      ollamaHost: "http://gpu-box:11434",
      // The server rejects an empty model name: empty means its default, sent as such.
      chatModel: "llama3.2",
      embedModel: "mxbai-embed-large",
      temperature: 0,
      expandQuery: true,
    });
  });

  it("turns empty optional strings into null (the server's default) and trims", () => {
    const values: Partial<Record<ServerKey, unknown>> = {
      model: "  ",
      indexDir: "",
      qdrantUrl: " http://localhost:6333 ",
      cacheDir: undefined,
    };
    assert.deepEqual(serverSettings((k) => values[k]), {
      model: null,
      indexDir: null,
      qdrantUrl: "http://localhost:6333",
    });
  });

  it("expands ~ and ${workspaceFolder} in paths only", () => {
    const values: Partial<Record<ServerKey, unknown>> = {
      indexDir: "${workspaceFolder}/.zettel-index",
      cacheDir: "~/cache",
      model: "~/model",
    };
    assert.deepEqual(serverSettings((k) => values[k], { workspaceFolder: "/notes", home: "/home/me" }), {
      indexDir: "/notes/.zettel-index",
      cacheDir: "/home/me/cache",
      model: "~/model",
    });
  });

  it("normalises threads, ignore and legs", () => {
    const values: Partial<Record<ServerKey, unknown>> = { threads: 0, ignore: ["templates/**", "", 3], legs: [] };
    assert.deepEqual(serverSettings((k) => values[k]), { threads: null, ignore: ["templates/**"] });
    const more: Partial<Record<ServerKey, unknown>> = { threads: 2.7, legs: ["bm25"] };
    assert.deepEqual(serverSettings((k) => more[k]), { threads: 2, legs: ["bm25"] });
  });

  it("sends titleSource as chosen; a change re-indexes", () => {
    const values: Partial<Record<ServerKey, unknown>> = { titleSource: "filename" };
    assert.deepEqual(serverSettings((k) => values[k]), { titleSource: "filename" });
    assert.ok(INDEX_KEYS.has("titleSource"));
    assert.equal(reindexes({ titleSource: "auto" }, { titleSource: "h1" }), true);
    assert.equal(reindexes({ titleSource: "auto" }, { titleSource: "auto" }), false);
  });

  it("sends followExternalSymlinks (off by default); a change re-indexes", () => {
    const values: Partial<Record<ServerKey, unknown>> = { followExternalSymlinks: true };
    assert.deepEqual(serverSettings((k) => values[k]), { followExternalSymlinks: true });
    assert.ok(INDEX_KEYS.has("followExternalSymlinks"));
    assert.equal(reindexes({ followExternalSymlinks: false }, { followExternalSymlinks: true }), true);
  });

  it("passes numbers and booleans through", () => {
    const values: Partial<Record<ServerKey, unknown>> = { graph: false, graphStrength: 0.5, symbolLimit: 7 };
    assert.deepEqual(serverSettings((k) => values[k]), { graph: false, graphStrength: 0.5, symbolLimit: 7 });
  });
});

describe("SERVER_KEYS", () => {
  // The keys, package.json's entries for them and ../../src/lib/settingsSchema.ts are generated
  // from the server's settings table (zettel_lsp/settings_schema.py) by
  // `python -m zettel_lsp.settings_gen --write`; tests/test_settings_schema.py fails when they
  // are stale. Here: package.json holds nothing else.
  it("package.json declares only the server's keys and the extension's own settings", () => {
    const extension = /^(server|trace|relatedView|searchView)\./;
    const declared = Object.keys(packageDefaults()).filter((k) => !extension.test(k));
    assert.deepEqual(declared, [...SERVER_KEYS]);
  });

  it("marks only server keys as re-indexing, the LLM layer's never", () => {
    assert.ok(INDEX_KEYS.size > 5);
    assert.ok([...INDEX_KEYS].every((k) => SERVER_KEYS.includes(k)));
    assert.ok(LLM_KEYS.every((k) => !INDEX_KEYS.has(k)));
  });
});

describe("zettel.titleSource", () => {
  const property = (): { enum: string[]; enumDescriptions: string[]; default: string } => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      contributes: {
        configuration: {
          properties: Record<string, { enum: string[]; enumDescriptions: string[]; default: string }>;
        };
      };
    };
    return pkg.contributes.configuration.properties["zettel.titleSource"] as ReturnType<typeof property>;
  };

  it("offers one described choice per title rule, auto by default", () => {
    const p = property();
    assert.deepEqual(p.enum, ["auto", "filename", "h1", "frontmatter"]);
    assert.equal(p.default, "auto");
    assert.equal(p.enumDescriptions.length, p.enum.length);
    assert.ok(p.enumDescriptions.every((d) => d.length > 20));
  });

  // The server's choices: zettel_lsp/notes/title_rule.py, `class TitleSource`.
  const source = new URL("../../../../zettel_lsp/notes/title_rule.py", import.meta.url);
  const outside = !existsSync(source) && "not inside the zettel-lsp repo";
  it("matches the server's title rules", { skip: outside }, () => {
    const text = readFileSync(source, "utf8");
    const block = /^class TitleSource\(StrEnum\):([\s\S]*?)\n\n\n/m.exec(text)?.[1] ?? "";
    const values = [...block.matchAll(/^\s+[A-Z0-9_]+ = "([a-z0-9]+)"/gm)].map((m) => m[1] as string);
    assert.deepEqual(property().enum, values);
  });
});

describe("didChangeConfigurationParams", () => {
  it("nests the settings under zettel", () => {
    assert.deepEqual(didChangeConfigurationParams({ graph: false }), { settings: { zettel: { graph: false } } });
  });
});

describe("changedKeys / sameSettings", () => {
  it("finds what changed and whether the server re-indexes", () => {
    const a = { model: null, graph: true, ignore: [] as string[] };
    const b = { model: "other", graph: true, ignore: ["x"] };
    assert.deepEqual(changedKeys(a, b), ["model", "ignore"]);
    assert.equal(changedKeys(a, b).some((k) => INDEX_KEYS.has(k)), true);
    assert.equal(changedKeys({ graph: true }, { graph: false }).some((k) => INDEX_KEYS.has(k)), false);
    assert.equal(sameSettings(a, { ...a }), true);
    assert.equal(sameSettings(a, b), false);
  });

  it("re-indexes for an index key, or for Ollama's host when the index embeds with Ollama", () => {
    assert.equal(reindexes({ model: null }, { model: "other" }), true);
    assert.equal(reindexes({ graph: true }, { graph: false }), false);
    assert.equal(reindexes({ ollamaHost: null, model: null }, { ollamaHost: "h", model: null }), false);
    const ollama = "ollama:nomic-embed-text";
    assert.equal(reindexes({ ollamaHost: null, model: ollama }, { ollamaHost: "h", model: ollama }), true);
    assert.equal(reindexes({ llmTimeout: 60, model: ollama }, { llmTimeout: 30, model: ollama }), true);
    assert.equal(reindexes({ chatModel: "a", model: ollama }, { chatModel: "b", model: ollama }), false);
  });
});

describe("expandPath", () => {
  it("expands only a leading ~", () => {
    assert.equal(expandPath("~", { home: "/h" }), "/h");
    assert.equal(expandPath("a/~/b", { home: "/h" }), "a/~/b");
    assert.equal(expandPath("~other", { home: "/h" }), "~other");
  });
});
