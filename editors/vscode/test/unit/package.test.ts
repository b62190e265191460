import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

// The extension's manifest: what VS Code reads before any of our code runs.
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  contributes: {
    views: Record<string, { id: string; initialSize?: number }[]>;
    commands: { command: string; icon?: string }[];
    menus: Record<string, { command: string; when?: string }[]>;
    configuration: { properties: Record<string, { type?: unknown; default?: unknown }> };
  };
};

describe("package.json", () => {
  it("gives the Search view most of the sidebar by default (not half of it)", () => {
    const views = pkg.contributes.views.zettel ?? [];
    const search = views.find((v) => v.id === "zettel.searchView");
    const related = views.find((v) => v.id === "zettel.relatedView");
    assert.ok(search?.initialSize && related?.initialSize, "both views have an initialSize");
    assert.ok(search.initialSize >= 2.5 * related.initialSize, JSON.stringify(views));
  });

  it("has a compact mode: a setting, a command and a button on the Search view", () => {
    const setting = pkg.contributes.configuration.properties["zettel.searchView.compact"];
    assert.deepEqual([setting?.type, setting?.default], ["boolean", false]);
    assert.ok(pkg.contributes.commands.some((c) => c.command === "zettel.toggleCompactResults" && c.icon));
    assert.ok(
      (pkg.contributes.menus["view/title"] ?? []).some(
        (m) => m.command === "zettel.toggleCompactResults" && m.when === "view == zettel.searchView",
      ),
    );
  });
});
