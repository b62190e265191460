import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clientLensCommand, referencesArgs, SUGGEST_LINKS_FOR_NOTE } from "../../src/lib/lenses";

const pos = { line: 0, character: 2 };
const loc = { uri: "file:///v/B.md", range: { start: { line: 3, character: 1 }, end: { line: 3, character: 9 } } };

describe("clientLensCommand", () => {
  it("runs the extension's Suggest links for the lens's note", () => {
    const got = clientLensCommand({
      title: "3 unlinked mentions",
      command: "zettel.suggestLinks",
      arguments: [{ uri: "file:///v/A.md" }],
    });
    assert.deepEqual(got, {
      title: "3 unlinked mentions",
      command: SUGGEST_LINKS_FOR_NOTE,
      arguments: ["file:///v/A.md"],
    });
  });

  it("leaves other commands alone", () => {
    const cmd = { title: "2 backlinks", command: "zettel.showReferences", arguments: ["file:///v/A.md", pos, [loc]] };
    assert.equal(clientLensCommand(cmd), cmd);
  });

  it("drops a malformed argument rather than passing it on", () => {
    const got = clientLensCommand({ title: "x", command: "zettel.suggestLinks", arguments: [42] });
    assert.deepEqual(got.arguments, []);
  });
});

describe("referencesArgs", () => {
  it("reads (uri, position, locations)", () => {
    assert.deepEqual(referencesArgs(["file:///v/A.md", pos, [loc]]), {
      uri: "file:///v/A.md",
      position: pos,
      locations: [loc],
    });
  });

  it("refuses anything else", () => {
    assert.equal(referencesArgs([]), undefined);
    assert.equal(referencesArgs(["file:///v/A.md", pos, [{ uri: 1 }]]), undefined);
    assert.equal(referencesArgs(["file:///v/A.md", { line: "0" }, []]), undefined);
  });
});
