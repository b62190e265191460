import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  LOCK_STALE_MS,
  choosePython,
  failureLine,
  isRecentEnough,
  lockIsStale,
  parsePythonVersion,
  parseRecord,
  progressLine,
  pythonCandidates,
  serverInVenv,
  upgradeDecision,
  venvName,
  wheelVersion,
  type InstallRecord,
} from "../../src/lib/install";
import { noServerMessage, offersInstall } from "../../src/lib/startError";

describe("the Python for the virtual environment", () => {
  it("reads `python --version` in its usual forms", () => {
    assert.deepEqual(parsePythonVersion("Python 3.11.7\n"), [3, 11, 7]);
    assert.deepEqual(parsePythonVersion("Python 3.12.0rc1"), [3, 12, 0]);
    assert.deepEqual(parsePythonVersion("Python 3.13"), [3, 13, 0]);
    assert.deepEqual(parsePythonVersion("3.10.2"), [3, 10, 2]);
    assert.equal(parsePythonVersion("pyenv: python3.13: command not found"), undefined);
    assert.equal(parsePythonVersion(""), undefined);
  });

  it("needs 3.11 or later", () => {
    assert.equal(isRecentEnough([3, 11, 0]), true);
    assert.equal(isRecentEnough([3, 14, 1]), true);
    assert.equal(isRecentEnough([4, 0, 0]), true);
    assert.equal(isRecentEnough([3, 10, 12]), false);
    assert.equal(isRecentEnough([2, 7, 18]), false);
    assert.equal(isRecentEnough(undefined), false);
  });

  it("tries only the setting when it is set, else the usual names", () => {
    assert.deepEqual(pythonCandidates("/opt/py/bin/python3.12", false), ["/opt/py/bin/python3.12"]);
    assert.deepEqual(pythonCandidates("  ", false).slice(0, 2), ["python3", "python"]);
    assert.ok(pythonCandidates(undefined, false).includes("python3.11"));
    assert.equal(pythonCandidates("", true)[0], "python");
  });

  it("takes the first recent enough one and says what it found otherwise", () => {
    const probes = [
      { command: "python3", output: "Python 3.9.2" },
      { command: "python", error: "spawn python ENOENT" },
      { command: "python3.11", output: "Python 3.11.4" },
    ];
    assert.deepEqual(choosePython(probes, false), { ok: true, command: "python3.11", version: "3.11.4" });
    const none = choosePython(probes.slice(0, 2), false);
    assert.equal(none.ok, false);
    const msg = none.ok ? "" : none.message;
    assert.ok(msg.includes("none was found on PATH"), msg);
    for (const part of ["Python 3.11 or later", "python3 is Python 3.9.2", "spawn python ENOENT", "zettel.server.python"]) {
      assert.ok(msg.includes(part), `${part} in ${msg}`);
    }
    const fromSetting = choosePython([{ command: "/opt/py", output: "Python 3.10.1" }], true);
    const settingMsg = fromSetting.ok ? "" : fromSetting.message;
    assert.equal(
      settingMsg,
      "zettel-lsp needs Python 3.11 or later; zettel.server.python is not (/opt/py is Python 3.10.1): set it to a newer Python",
    );
  });
});

describe("the bundled wheel and the installed server", () => {
  it("reads the version from the wheel's name", () => {
    assert.equal(wheelVersion("zettel_lsp-0.1.0-py3-none-any.whl"), "0.1.0");
    assert.equal(wheelVersion("zettel_lsp-1.2.3.dev4-py3-none-any.whl"), "1.2.3.dev4");
    assert.equal(wheelVersion("other-0.1.0-py3-none-any.whl"), undefined);
    assert.equal(wheelVersion("zettel_lsp-0.1.0.tar.gz"), undefined);
  });

  it("gives every install its own folder and knows where the server is in it", () => {
    const wheel = { version: "0.1.0", sha256: "1a2b3c4d5e6f" };
    assert.equal(venvName(wheel, 36 ** 3), "venv-0.1.0-1a2b3c4d-1000");
    assert.notEqual(venvName(wheel, 1), venvName(wheel, 2));
    assert.deepEqual(serverInVenv(false), ["bin", "zettel-lsp"]);
    assert.deepEqual(serverInVenv(true), ["Scripts", "zettel-lsp.exe"]);
  });

  it("reads installed.json and rejects anything else", () => {
    const good: InstallRecord = { version: "0.1.0", sha256: "ab", venv: "venv-0.1.0-ab-x", python: "python3" };
    assert.deepEqual(parseRecord(JSON.stringify(good)), good);
    assert.equal(parseRecord(undefined), undefined);
    assert.equal(parseRecord("{not json"), undefined);
    assert.equal(parseRecord(JSON.stringify({ ...good, version: "" })), undefined);
    // The folder name is joined to the storage path: nothing that climbs out of it.
    assert.equal(parseRecord(JSON.stringify({ ...good, venv: "../../etc" })), undefined);
  });
});

describe("upgrading the installed server", () => {
  const installed: InstallRecord = { version: "0.1.0", sha256: "aaa", venv: "venv-0.1.0-aaa-1", python: "python3" };
  const wheel = (version: string, sha256: string) => ({ file: "/ext/server/w.whl", version, sha256 });

  it("upgrades to another version or another build of the same version", () => {
    assert.deepEqual(upgradeDecision(installed, wheel("0.2.0", "bbb")), {
      action: "upgrade",
      from: "0.1.0",
      to: "0.2.0",
      reason: "a new version",
    });
    assert.deepEqual(upgradeDecision(installed, wheel("0.1.0", "bbb")), {
      action: "upgrade",
      from: "0.1.0",
      to: "0.1.0",
      reason: "a new build",
    });
  });

  it("does nothing when it is current, when nothing was installed, or when nothing is bundled", () => {
    assert.deepEqual(upgradeDecision(installed, wheel("0.1.0", "aaa")), { action: "none" });
    assert.deepEqual(upgradeDecision(undefined, wheel("0.2.0", "bbb")), { action: "none" });
    assert.deepEqual(upgradeDecision(installed, undefined), { action: "none" });
  });

  it("says why a step failed in one line", () => {
    const debian = [
      "The virtual environment was not created successfully because ensurepip is not",
      "available.  On Debian/Ubuntu systems, you need to install the python3-venv",
      "package using the following command.",
      "",
      "    apt install python3.11-venv",
      "",
      "Failing command: /home/me/.config/Code/User/globalStorage/zettel-lsp.zettel/venv-x/bin/python3",
    ].join("\n");
    assert.equal(
      failureLine(debian),
      "this Python cannot make virtual environments: install the python3.11-venv package (Debian, Ubuntu: sudo apt install python3.11-venv)",
    );
    const pip = "Collecting pygls\nERROR: Could not find a version that satisfies the requirement pygls<3,>=2.1\nERROR: No matching distribution found for pygls<3,>=2.1\n[notice] x\n";
    assert.equal(failureLine(pip), "ERROR: No matching distribution found for pygls<3,>=2.1");
    assert.equal(failureLine("a\nlast words\n\n"), "last words");
    assert.equal(failureLine(""), "no output");
  });

  it("shows pip's lines, not its warnings, cut to fit a notification", () => {
    assert.equal(progressLine("Collecting numpy>=1.21 (from fastembed)\n"), "Collecting numpy>=1.21 (from fastembed)");
    assert.equal(
      progressLine("Processing /home/me/.vscode/extensions/zettel-lsp.zettel-0.1.0/server/zettel_lsp-0.1.0-py3-none-any.whl"),
      "Processing zettel_lsp-0.1.0-py3-none-any.whl",
    );
    assert.equal(progressLine("Processing c:\\Users\\me\\server\\zettel_lsp-0.1.0-py3-none-any.whl"), "Processing zettel_lsp-0.1.0-py3-none-any.whl");
    assert.equal(progressLine("WARNING: something"), undefined);
    assert.equal(progressLine("[notice] A new release of pip is available"), undefined);
    assert.equal(progressLine("   "), undefined);
    assert.equal(progressLine("x".repeat(300))?.length, 98);
  });
});

describe("one install at a time", () => {
  it("waits for another window's lock, and takes over one its window left behind", () => {
    const now = 1_000_000_000;
    assert.equal(lockIsStale(now - 60_000, now), false);
    assert.equal(lockIsStale(now - LOCK_STALE_MS - 1, now), true);
  });
});

describe("the offer to install", () => {
  it("comes only when no server was found (not for a wrong zettel.server.command)", () => {
    const python = { source: "python" as const };
    const noModule = { stderr: "/usr/bin/python3: No module named zettel_lsp\n" };
    assert.equal(offersInstall(python, noModule), true);
    assert.equal(offersInstall(python, { missing: "python3 was not found on PATH" }), true);
    assert.equal(offersInstall(python, { spawnError: "spawn python3 ENOENT" }), true);
    // A Python that has the package and fails for another reason: installing would not help.
    assert.equal(offersInstall(python, { stderr: "ValueError: bad setting\n" }), false);
    assert.equal(offersInstall({ source: "setting" }, noModule), false);
    assert.equal(offersInstall({ source: "path" }, noModule), false);
    assert.equal(offersInstall({ source: "installed" }, noModule), false);
    const msg = noServerMessage("python3 has no zettel_lsp package installed");
    for (const part of ["no zettel-lsp server was found", "Install zettel-lsp", "Python 3.11", "zettel.server.command"]) {
      assert.ok(msg.includes(part), part);
    }
  });
});
