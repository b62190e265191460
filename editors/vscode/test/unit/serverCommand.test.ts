import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  formatCommand,
  missingProgram,
  resolveServerCommand,
  splitCommandLine,
  which,
  type Env,
} from "../../src/lib/serverCommand";

function env(executables: string[], extra: Partial<Env> = {}): Env {
  const set = new Set(executables);
  return {
    path: "/usr/local/bin:/usr/bin",
    delimiter: ":",
    pathext: [],
    isWindows: false,
    isExecutable: (p) => set.has(p),
    exists: (p) => set.has(p),
    join: (...parts) => parts.join("/"),
    vars: { home: "/home/me", workspaceFolder: "/notes" },
    ...extra,
  };
}

describe("splitCommandLine", () => {
  it("splits on whitespace and honours quotes and escapes", () => {
    assert.deepEqual(splitCommandLine("uvx  zettel-lsp"), ["uvx", "zettel-lsp"]);
    assert.deepEqual(splitCommandLine(`"/opt/my tools/zettel-lsp" --verbose`), [
      "/opt/my tools/zettel-lsp",
      "--verbose",
    ]);
    assert.deepEqual(splitCommandLine(`python -c 'print(1)' ""`), ["python", "-c", "print(1)", ""]);
    assert.deepEqual(splitCommandLine(`a "b \\"c\\""`), ["a", 'b "c"']);
    assert.deepEqual(splitCommandLine("   "), []);
  });
});

describe("resolveServerCommand", () => {
  it("uses an array setting as it is", () => {
    assert.deepEqual(resolveServerCommand(["/venv/bin/zettel-lsp", "serve"], "", env([])), {
      command: "/venv/bin/zettel-lsp",
      args: ["serve"],
      source: "setting",
    });
  });

  it("takes a string naming an existing file whole, even with spaces", () => {
    const cmd = resolveServerCommand("/opt/my tools/zettel-lsp", "", env(["/opt/my tools/zettel-lsp"]));
    assert.equal(cmd.command, "/opt/my tools/zettel-lsp");
    assert.deepEqual(cmd.args, []);
  });

  it("splits any other string and expands ~ in the program", () => {
    assert.deepEqual(resolveServerCommand("~/bin/zettel-lsp --verbose", "", env([])), {
      command: "/home/me/bin/zettel-lsp",
      args: ["--verbose"],
      source: "setting",
    });
  });

  it("falls back to zettel-lsp on PATH", () => {
    assert.deepEqual(resolveServerCommand([], "", env(["/usr/bin/zettel-lsp"])), {
      command: "/usr/bin/zettel-lsp",
      args: [],
      source: "path",
    });
  });

  it("then to <python> -m zettel_lsp", () => {
    assert.deepEqual(resolveServerCommand(undefined, "", env([])), {
      command: "python3",
      args: ["-m", "zettel_lsp"],
      source: "python",
    });
    assert.deepEqual(resolveServerCommand("", "${workspaceFolder}/.venv/bin/python", env([])), {
      command: "/notes/.venv/bin/python",
      args: ["-m", "zettel_lsp"],
      source: "python",
    });
    assert.equal(resolveServerCommand([], "", env([], { isWindows: true })).command, "python");
  });

  it("uses the server 'Install zettel-lsp' installed when none is on PATH", () => {
    const venv = "/home/me/.vscode/globalStorage/zettel-lsp.zettel/venv-0.1.0-ab-1/bin/zettel-lsp";
    assert.deepEqual(resolveServerCommand([], "", env([venv]), venv), {
      command: venv,
      args: [],
      source: "installed",
    });
    // zettel-lsp on PATH and zettel.server.command come first.
    assert.equal(resolveServerCommand([], "", env([venv, "/usr/bin/zettel-lsp"]), venv).source, "path");
    assert.equal(resolveServerCommand(["/x/zettel-lsp"], "", env([venv]), venv).source, "setting");
    // Its folder was removed: back to `python3 -m zettel_lsp` (and the offer to install).
    assert.equal(resolveServerCommand([], "", env([]), venv).source, "python");
  });

  it("finds Windows programs through PATHEXT", () => {
    const e = env(["C:\\py\\Scripts/zettel-lsp.EXE"], {
      path: "C:\\py\\Scripts",
      delimiter: ";",
      pathext: [".COM", ".EXE"],
      isWindows: true,
    });
    assert.equal(which("zettel-lsp", e), "C:\\py\\Scripts/zettel-lsp.EXE");
  });
});

describe("missingProgram", () => {
  it("explains a program that is not there", () => {
    assert.equal(
      missingProgram({ command: "zettel-lsp", args: [], source: "setting" }, env([])),
      "zettel-lsp was not found on PATH",
    );
    assert.equal(
      missingProgram({ command: "/x/zettel-lsp", args: [], source: "setting" }, env([])),
      "/x/zettel-lsp does not exist or is not executable",
    );
    assert.equal(
      missingProgram(
        { command: "python3", args: ["-m", "zettel_lsp"], source: "python" },
        env(["/usr/bin/python3"]),
      ),
      undefined,
    );
  });
});

describe("formatCommand", () => {
  it("quotes words with spaces or quotes", () => {
    assert.equal(
      formatCommand({ command: "/opt/my tools/zettel-lsp", args: ["-m", "it's"] }),
      `'/opt/my tools/zettel-lsp' -m 'it'\\''s'`,
    );
  });
});
