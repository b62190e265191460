import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

// The extension's manifest: what VS Code reads before any of our code runs.
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  [key: string]: unknown;
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

  it("has what the VS Code Marketplace and Open VSX ask for", () => {
    for (const key of ["name", "displayName", "description", "version", "publisher", "license", "icon"]) {
      assert.equal(typeof pkg[key], "string", key);
    }
    assert.equal(pkg.license, "MIT");
    assert.ok(readFileSync(new URL("../../LICENSE", import.meta.url), "utf8").includes("MIT"), "a LICENSE file");
    assert.match(String((pkg.repository as { url?: string }).url), /^https:\/\//);
    assert.match(String((pkg.engines as { vscode?: string }).vscode), /^\^1\.\d+\.\d+$/);
    assert.ok(Array.isArray(pkg.categories) && pkg.categories.length > 0);
    // The gallery icon: a PNG (the Marketplace rejects SVG), 128x128 or larger and square.
    const icon = readFileSync(new URL(`../../${String(pkg.icon)}`, import.meta.url));
    assert.equal(icon.subarray(1, 4).toString("latin1"), "PNG");
    const [w, h] = [icon.readUInt32BE(16), icon.readUInt32BE(20)];
    assert.ok(w >= 128 && w === h, `${w}x${h}`);
  });

  it("offers 'Install zettel-lsp' and ships the server wheel it installs", () => {
    assert.ok(pkg.contributes.commands.some((c) => c.command === "zettel.installServer"));
    const ignore = readFileSync(new URL("../../.vscodeignore", import.meta.url), "utf8").split("\n");
    assert.ok(ignore.includes("!server/*.whl"), "the wheel goes into the .vsix");
    const scripts = pkg.scripts as Record<string, string>;
    assert.match(scripts["vscode:prepublish"] ?? "", /scripts\/build-wheel\.sh/);
  });
});
