// Drives code-server (started by test/e2e.sh) in headless Chromium with playwright-core:
// install the server through the extension (E2E_INSTALL=1: no server anywhere, the extension
// offers "Install zettel-lsp"; with zettel.server.python set to a Python 3.9 it says that one
// is too old and installs nothing; then the test clicks it and waits for pip; screenshots
// vscode-install-offer.png, install-old-python.png, install-progress.png, install-done.png),
// open the Zettel view,
// wait until the index is ready, search, open the top result, check the
// Related view, save a screenshot. Every step is logged with its time; any failure exits 1
// after saving a screenshot of the moment (failure.png in E2E_ARTIFACTS).
//
// Ask (Ollama is the stand-in of tests/llm/stub.py at E2E_OLLAMA_URL, set as zettel.ollamaHost
// in the vault's .vscode/settings.json): "Show Status" reports it reachable; "Zettel: Ask"
// focuses the Ask box; the answer streams, cites the first source, the source opens; a
// screenshot; Escape stops a second answer mid-stream; an unreachable host gives the fallback
// notice and still lists sources; with zettel.expandQuery on, typing searches without the LLM
// and Enter runs the expansion.
//
// Completion: in baking/Levain.md, `[[` typed at the end lists the server's cards in the suggest
// widget with "folder · relation" beside them; "Glut" filters to Gluten, Enter inserts
// `[[Gluten]]` (closed once, no `]]]]`), checked in the saved file (screenshots completion-popup.png,
// the open list, and completion.png in E2E_SHOTS); the note is then put back. Rename: F2 on the H1 of baking/Scoring.md, a new name:
// the file is renamed on disk, the H1 follows, the four notes linking `[[Scoring]]` (one with an
// alias, kept) now link the new name, and the move asks for no further edits (willRenameFiles
// must not answer the server's own rename again) (screenshot rename.png).
//
// Then it points `zettel.server.command` at a missing program (the extension restarts the
// server, fails and explains with buttons), at a Python without the package, and back (it
// recovers); last, it kills the server and waits for the client to restart it.
//
// Then the sidebar's layout (issue #14): a generated vault with long folder paths is opened in
// a fresh workspace; every visible title shows at least 12 characters or all of it, a cut folder
// keeps its end in view (shortened from the left), excerpts show no link or table syntax, a
// table row shows as cells, the Search view has most of the sidebar and shows at least 4 whole
// results (screenshots layout-long-paths.png, layout-table.png), and compact mode (Zettel:
// Toggle Compact Results) shows one line per result (layout-compact.png). The Ask sources'
// excerpts show no link syntax either. Then each big vault of E2E_EXTRA_VAULTS: a search, the
// first result opened, the same title check, and a screenshot in the dark and in the light
// theme (vscode-<vault>-dark.png / -light.png).
//
// Last (E2E_INSTALL=1), an extension update: the installed record is made to name another build,
// the window is opened again, and the extension upgrades the server (a new virtual environment,
// the old one removed; screenshot install-upgrade.png) and starts it.
//
// Env: E2E_URL (code-server URL with ?folder=), E2E_VAULT (that folder), E2E_CODE_SERVER_PID,
// E2E_CHROMIUM, E2E_SCREENSHOT, E2E_ASK_SCREENSHOT, E2E_OLLAMA_URL, E2E_ARTIFACTS, E2E_SHOTS
// (the layout screenshots' folder), E2E_LONG_PATHS_VAULT (where to write the generated vault),
// E2E_EXTRA_VAULTS (':'-separated folders; empty: none), E2E_INSTALL (1: install the server).

import { chromium } from "playwright-core";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";

const URL = need("E2E_URL");
const CHROMIUM = process.env.E2E_CHROMIUM || "/usr/bin/chromium";
const SCREENSHOT = need("E2E_SCREENSHOT");
const ARTIFACTS = process.env.E2E_ARTIFACTS || ".";
const VAULT = need("E2E_VAULT");
const CODE_SERVER_PID = Number(need("E2E_CODE_SERVER_PID"));
const ASK_SCREENSHOT = need("E2E_ASK_SCREENSHOT");
const OLLAMA_URL = need("E2E_OLLAMA_URL");
const QUERY = "fusing ranked lists from BM25 and embeddings";
const QUESTION = "how does reciprocal rank fusion combine result lists";
// The stand-in's answer cites the first note of the prompt.
const EXPECTED_ANSWER = `According to [${"Reciprocal rank fusion"}]`;
const EXPECTED = "Reciprocal rank fusion";
const READY_TIMEOUT = 240_000;
const SHOTS = process.env.E2E_SHOTS || ARTIFACTS;
const LONG_PATHS_VAULT = process.env.E2E_LONG_PATHS_VAULT || path.join(ARTIFACTS, "long-paths");
const EXTRA_VAULTS = (process.env.E2E_EXTRA_VAULTS || "").split(":").filter(Boolean);
const INSTALL = process.env.E2E_INSTALL === "1";
/** pip from PyPI: a few minutes the first time on a slow line. */
const INSTALL_TIMEOUT = 20 * 60_000;
const ORIGIN = new globalThis.URL(URL).origin;
/** A title cut shorter than this (visible characters) is not readable (issue #14: "A.", "Colou…"). */
const MIN_TITLE_CHARS = 12;
/** What to search for in the big vaults (by folder name); others: their first note's title. */
const VAULT_QUERIES = {
  "zettelkasten-13k": "fuzzing web application parameters",
  vaultofknowledge: "colour theory",
};

// Notes in deep folders with long names, titles from one letter to longer than the sidebar.
const LONG_PATH_NOTES = {
  "Projects/2024 Research Programme on Human Perception/Colour Science and Visual Perception/Primary and Secondary Colours/Working Notes/Colour.md":
    "# Colour\n\nColour is how we perceive light of different wavelengths; see [[Colour constancy under changing illumination|colour constancy]] and [[Opponent process theory of colour vision]].\n",
  "Projects/2024 Research Programme on Human Perception/Colour Science and Visual Perception/Primary and Secondary Colours/Working Notes/A.md":
    "A colour note with a one-letter title. It links to [[Colour]] and to [the CIE site](https://cie.co.at/) about colour.\n",
  "04. Organized Knowledge - Old Format/Creativity and Arts/Colour Theory/Colour constancy under changing illumination.md":
    "Colour constancy keeps the perceived colour of a surface stable when the light changes. **Retinex** theory explains it; compare [[Opponent process theory of colour vision|opponent processes]].\n",
  "04. Organized Knowledge - Old Format/Creativity and Arts/Colour Theory/Young's Trichromatic Theory of Colours.md":
    "Three kinds of cones, three primaries: the trichromatic theory of colour (Young, Helmholtz). See [[Colour Theory]].\n",
  "01. Personal/AVIASYS Related/Project Management/PM Software/Ways to Use PM Software/Colour coding tasks in project management software.md":
    "Colour coding tasks by status: red for blocked, green for done. A habit from [[Colour Schemes]].\n",
  "Archive/A very long folder name that goes on and on about colour and its many uses in design/Another sub-folder with a long name/Colour Theory.md":
    "# Colour Theory\n\n## Primaries\n\n| Colour | Warmth | See also |\n|:-------|-------:|----------|\n| Red | warm | [[Colour constancy under changing illumination\\|constancy]] |\n| Blue | cold | [[Colour]] |\n| Yellow | warm | [[Young's Trichromatic Theory of Colours]] |\n",
  "Colour Schemes.md":
    "Complementary, analogous and triadic colour schemes. ![[wheel.png]] See [[Colour Theory#Primaries]].\n",
  "Deep/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/Hue.md": "Hue is the attribute of a colour named red, green or blue.\n",
  "Research/Perception/Colour/Notes on the opponent process theory of colour vision and its many critics in the twentieth century.md":
    "A title longer than the sidebar is wide. Opponent colour channels: red-green, blue-yellow.\n",
  "Research/Perception/Colour/Opponent process theory of colour vision.md":
    "Hering's opponent process theory of colour vision: red against green, blue against yellow.\n",
};

const t0 = Date.now();
function log(msg) {
  console.error(`   e2e.mjs [${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);
}
function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run test/e2e.sh)`);
  return v;
}

async function until(what, fn, timeout = 30_000, every = 250) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout / 1000}s waiting for ${what}${last ? `: ${last.message}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, every));
  }
}

/** The Search webview's inner frame: the one with our search box. */
async function searchFrame(page) {
  for (const frame of page.frames()) {
    try {
      if (await frame.$("#query")) return frame;
    } catch {
      // frame navigated or detached
    }
  }
  return undefined;
}

/** Process ids under `root` (children, grandchildren, ...), from /proc. */
function descendants(root) {
  const parent = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // pid (comm) state ppid ...: comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(name), ppid);
    } catch {
      // the process ended meanwhile
    }
  }
  const out = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        out.push(pid);
        break;
      }
    }
  }
  return out;
}

/** The zettel-lsp processes this test's code-server started. */
function serverPids() {
  return descendants(CODE_SERVER_PID).filter((pid) => {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return argv.some((a) => path.basename(a) === "zettel-lsp") || argv.join(" ").includes("-m zettel_lsp");
    } catch {
      return false;
    }
  });
}

/** A port nothing listens on (bound, then closed): connections to it are refused. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Run a command from the palette by its title. */
async function runCommand(page, title) {
  await page.keyboard.press("F1");
  const palette = page.locator(".quick-input-widget input");
  await palette.waitFor({ timeout: 10_000 });
  await palette.fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
  await palette.press("Enter");
}

async function statusText(page) {
  const items = page.locator(".statusbar-item", { hasText: "Zettel" });
  if ((await items.count()) === 0) return "";
  return (await items.first().innerText()).trim();
}

/** Open the vault's file `rel` with Quick Open (the palette without ">"); its tab, once active. */
async function openFile(page, rel) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ timeout: 10_000 });
  await input.fill(rel);
  const name = path.basename(rel);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor({ timeout: 15_000 });
  await input.press("Enter");
  const tab = page.locator('.tabs-container [role="tab"]', { hasText: name }).first();
  await tab.waitFor({ timeout: 20_000 });
  await until(`${name} to be the active tab`, async () => (await tab.getAttribute("aria-selected")) === "true");
  // The text itself, with the cursor in it.
  await page.locator(".editor-instance .monaco-editor .view-lines").first().waitFor({ timeout: 10_000 });
  await until(`the editor of ${name} to take the focus`, () =>
    page.evaluate(() => !!document.activeElement?.closest(".editor-instance .monaco-editor")),
    10_000,
  );
  return tab;
}

/** Move the editor's cursor to `line` (1-based) with "Go to Line" (the palette's ":"). */
async function goToLine(page, line) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ timeout: 10_000 });
  await input.fill(`:${line}`);
  await page.waitForTimeout(200);
  await input.press("Enter");
  await until(`the cursor on line ${line}`, async () => {
    const t = await page.locator(".statusbar-item", { hasText: /^Ln \d+/ }).first().innerText();
    return t.trim().startsWith(`Ln ${line},`);
  }, 10_000);
}

/**
 * Open `folder` as the workspace (a fresh window state: default view sizes) and the Zettel view;
 * wait until the vault is ready, or (`partialOk`) at least searchable while it embeds.
 */
/** The user's settings.json, once it is whole (VS Code or this test may be writing it). */
const USER_SETTINGS = path.join(ARTIFACTS, "user-data", "User", "settings.json");
function userSettings() {
  try {
    return JSON.parse(readFileSync(USER_SETTINGS, "utf8"));
  } catch {
    return undefined;
  }
}

async function openVault(page, folder, partialOk = false) {
  log(`opening ${folder}`);
  // A window that loads while the user's settings.json is being written starts without them.
  if (existsSync(USER_SETTINGS)) {
    await until("whole user settings", () => userSettings()?.["zettel.cacheDir"] !== undefined, 15_000);
  }
  await page.goto(`${ORIGIN}/?folder=${encodeURIComponent(folder)}`, { waitUntil: "domcontentloaded" });
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  const tab = page.locator('.activitybar [aria-label^="Zettel"], .activitybar [title^="Zettel"]');
  await tab.first().waitFor({ timeout: 60_000 });
  await tab.first().click();
  const ready = await until(
    `the status bar to say ${path.basename(folder)} is ready`,
    async () => {
      const text = await statusText(page);
      if (/not running|failed/.test(text)) throw new Error(`status bar: ${text}`);
      if (partialOk && /embedding/.test(text)) return text;
      return /Zettel: \d+ cards$|read-only/.test(text) ? text : undefined;
    },
    READY_TIMEOUT,
    500,
  );
  log(`status bar: "${ready}"`);
}

/** Type `query` in the Search view and wait for at least `min` results; the view's frame. */
async function searchFor(page, query, min) {
  const frame = await until("the Search webview", () => searchFrame(page), 60_000);
  const box = frame.locator("#query");
  await box.click();
  await box.fill("");
  await box.pressSequentially(query, { delay: 10 });
  const n = await until(
    `at least ${min} results for "${query}"`,
    async () => {
      const count = await frame.locator("li.result").count();
      const busy = (await frame.locator("#box").getAttribute("class"))?.includes("busy");
      return count >= min && !busy ? count : undefined;
    },
    60_000,
  );
  log(`"${query}": ${n} results`);
  return frame;
}

/**
 * The visible rows' titles and folders, measured in the webview: a title is complete or shows at
 * least MIN_TITLE_CHARS characters; a folder that is cut keeps its end in view (cut from the
 * left). Throws on the first row that breaks either rule; returns the rows.
 */
async function checkRows(frame, what) {
  const rows = await frame.evaluate(() => {
    const charsShown = (el) => {
      const node = el.querySelector("bdi")?.firstChild ?? el.firstChild;
      const text = node?.textContent ?? "";
      const box = el.getBoundingClientRect();
      const range = document.createRange();
      let first = -1;
      let last = -1;
      for (let i = 0; i < text.length; i++) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const r = range.getBoundingClientRect();
        // Inside the box, and not under the ellipsis (about 8 px at the cut side).
        const inside = r.left >= box.left - 0.5 && r.right <= box.right + 0.5;
        if (inside) {
          if (first < 0) first = i;
          last = i;
        }
      }
      return { text, first, last, cut: el.scrollWidth > el.clientWidth + 0.5, width: Math.round(box.width) };
    };
    const vh = window.innerHeight;
    const out = [];
    for (const li of document.querySelectorAll("li.result")) {
      const r = li.getBoundingClientRect();
      if (r.bottom <= 0 || r.top >= vh) continue;
      const title = charsShown(li.querySelector(".title"));
      const folder = charsShown(li.querySelector(".folder"));
      out.push({
        title: title.text,
        titleCut: title.cut,
        // A cut title loses about one character to its ellipsis.
        titleShown: title.cut ? Math.max(0, title.last - title.first) : title.text.length,
        titleWidth: title.width,
        folder: folder.text,
        folderCut: folder.cut,
        folderShown: folder.cut ? folder.text.slice(folder.first + 1, folder.last + 1) : folder.text,
        // Cut: its end is in view, or nothing of it is (the title needed the whole row).
        folderEndInView: !folder.cut || folder.last < 0 || folder.last === folder.text.length - 1,
        fullyVisible: r.top >= -0.5 && r.bottom <= vh + 0.5,
      });
    }
    return out;
  });
  for (const r of rows) {
    const shown = r.titleCut ? `${r.titleShown} chars of "${r.title}"` : `"${r.title}"`;
    log(`  ${what}: ${shown} (${r.titleWidth}px) · folder ${r.folderCut ? `…${r.folderShown}` : JSON.stringify(r.folder)}`);
  }
  if (rows.length === 0) throw new Error(`${what}: no visible result rows`);
  for (const r of rows) {
    if (r.titleCut && r.titleShown < MIN_TITLE_CHARS) {
      throw new Error(`${what}: the title "${r.title}" shows only ${r.titleShown} characters (folder "${r.folder}")`);
    }
    if (!r.folderEndInView) {
      throw new Error(`${what}: the folder "${r.folder}" is cut at its end, not shortened from the left`);
    }
  }
  return rows;
}

/** The sidebar's panes (title, height in px). */
function sidebarPanes(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll(".part.sidebar .pane")].map((p) => ({
      title: (p.querySelector(".pane-header .title")?.textContent ?? "").trim(),
      height: Math.round(p.getBoundingClientRect().height),
    })),
  );
}

/** Switch the colour theme through the palette; `cls` is the workbench's class for it. */
async function setTheme(page, name, cls) {
  // Click the command itself ("Browse Color Themes in Marketplace" may be listed first).
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ timeout: 10_000 });
  await input.fill(">Preferences: Color Theme");
  const rows = page.locator(".quick-input-list .monaco-list-row");
  await rows.filter({ hasText: /Preferences: Color Theme/ }).first().click({ timeout: 10_000 });
  // The theme picker replaces the palette's list: wait for it before typing.
  await rows.filter({ hasText: /Modern/ }).first().waitFor({ timeout: 10_000 });
  await input.fill(name);
  await rows.filter({ hasText: new RegExp(`^${name}`) }).first().click({ timeout: 10_000 });
  await until(
    `the ${name} theme`,
    () => page.evaluate((c) => document.querySelector(".monaco-workbench")?.classList.contains(c), cls),
    15_000,
  );
  // VS Code writes the choice to the user's settings.json after the workbench shows it. A window
  // opened while that write is under way read no user settings at all (the extension then found
  // no zettel.server.command and fell back to `python3 -m zettel_lsp`): wait for the file.
  if (existsSync(USER_SETTINGS)) {
    await until(`${name} in ${USER_SETTINGS}`, () => userSettings()?.["workbench.colorTheme"] === name, 15_000);
  }
  log(`theme: ${name}`);
}

/** The extension's global storage: where "Install zettel-lsp" puts the server. */
const STORAGE = path.join(ARTIFACTS, "user-data", "User", "globalStorage", "zettel-lsp.zettel");
function installRecord() {
  try {
    return JSON.parse(readFileSync(path.join(STORAGE, "installed.json"), "utf8"));
  } catch {
    return undefined;
  }
}

/** The progress notification's text while pip runs, and the toast that says how it ended. */
async function waitForInstall(page, verb, shot) {
  const started = Date.now();
  const progress = page.locator(".notification-toast", { hasText: `${verb} zettel-lsp` });
  await progress.first().waitFor({ timeout: 60_000 });
  // A line of pip's own output in the notification (not only our first steps).
  const pipLine = await until(
    "a line of pip's output in the progress notification",
    async () => {
      const texts = (await progress.allInnerTexts()).map((t) => t.replace(/\s+/g, " "));
      return texts.find((t) => /Collecting|Processing|Downloading|Requirement|Installing collected|Using cached|Building/.test(t));
    },
    5 * 60_000,
    200,
  );
  log(`progress: ${JSON.stringify(pipLine)}`);
  await page.screenshot({ path: path.join(SHOTS, shot) });
  const done = page.locator(".notification-toast", { hasText: /is installed|zettel-lsp failed/ });
  await done.first().waitFor({ timeout: INSTALL_TIMEOUT });
  const text = (await done.first().locator(".notification-list-item-message").innerText()).trim();
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  log(`${verb} took ${seconds}s: ${JSON.stringify(text)}`);
  if (/failed/.test(text)) throw new Error(`${verb} zettel-lsp failed: ${text}`);
  return text;
}

/**
 * A new user's first start: no server is found, the extension says so and offers to install the
 * one it bundles; the test clicks "Install zettel-lsp" and waits for the server to run.
 */
async function installServer(page) {
  const offerToast = () => page.locator(".notification-toast", { hasText: "no zettel-lsp server was found" }).first();
  let offer = offerToast();
  await offer.waitFor({ timeout: 60_000 });
  const message = (await offer.locator(".notification-list-item-message").innerText()).trim();
  const buttons = await offer.locator(".monaco-button").allInnerTexts();
  log(`no server: ${JSON.stringify(message)}; buttons: ${JSON.stringify(buttons)}`);
  if (!buttons.includes("Install zettel-lsp")) throw new Error(`no "Install zettel-lsp" button: ${JSON.stringify(buttons)}`);
  if (!/not running/.test(await statusText(page))) throw new Error(`status bar: ${await statusText(page)}`);
  await page.screenshot({ path: path.join(SHOTS, "vscode-install-offer.png") });

  // A Python older than 3.11 (zettel.server.python): a clear message, nothing installed.
  const settingsFile = path.join(VAULT, ".vscode", "settings.json");
  const original = readFileSync(settingsFile, "utf8");
  const oldPython = path.join(ARTIFACTS, "old-python", "python3");
  mkdirSync(path.dirname(oldPython), { recursive: true });
  // As a Python 3.9 without the package answers: its version, and "No module named" for -m.
  writeFileSync(
    oldPython,
    '#!/bin/sh\nif [ "$1" = --version ]; then echo "Python 3.9.2"; exit 0; fi\necho "$0: No module named zettel_lsp" >&2\nexit 1\n',
    { mode: 0o755 },
  );
  await runCommand(page, "Notifications: Clear All Notifications");
  writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(original), "zettel.server.python": oldPython }, null, 2));
  offer = offerToast();
  await offer.waitFor({ timeout: 30_000 });
  await offer.locator(".monaco-button", { hasText: "Install zettel-lsp" }).click();
  const tooOld = page.locator(".notification-toast", { hasText: "needs Python 3.11 or later" }).first();
  await tooOld.waitFor({ timeout: 30_000 });
  const tooOldText = (await tooOld.locator(".notification-list-item-message").innerText()).trim();
  log(`an old Python: ${JSON.stringify(tooOldText)}`);
  if (!tooOldText.includes("Python 3.9.2")) throw new Error("the message does not say which Python was found");
  await page.screenshot({ path: path.join(SHOTS, "install-old-python.png") });
  if (installRecord()) throw new Error("something was recorded as installed with a Python 3.9");

  await runCommand(page, "Notifications: Clear All Notifications");
  writeFileSync(settingsFile, original);
  offer = offerToast();
  await offer.waitFor({ timeout: 30_000 });
  await offer.locator(".monaco-button", { hasText: "Install zettel-lsp" }).click();
  await waitForInstall(page, "installing", "install-progress.png");
  const record = installRecord();
  if (!record || !existsSync(path.join(STORAGE, record.venv, "bin", "zettel-lsp"))) {
    throw new Error(`no installed server in ${STORAGE}: ${JSON.stringify(record)}`);
  }
  log(`installed: ${JSON.stringify(record)}`);
  if (existsSync(path.join(STORAGE, "install.lock"))) throw new Error("the install lock was left behind");
  await until("the status bar to show the server running", async () => !/not running/.test(await statusText(page)), 60_000);
  await page.screenshot({ path: path.join(SHOTS, "install-done.png") });
}

/**
 * An extension update that bundles another build: the record names an older one; on the next
 * activation the extension installs the bundled wheel into a new environment, starts it and
 * removes the old one.
 */
async function upgradeServer(page) {
  const before = installRecord();
  writeFileSync(path.join(STORAGE, "installed.json"), JSON.stringify({ ...before, sha256: "0".repeat(64) }));
  await page.goto(`${ORIGIN}/?folder=${encodeURIComponent(VAULT)}`, { waitUntil: "domcontentloaded" });
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  const tab = page.locator('.activitybar [aria-label^="Zettel"], .activitybar [title^="Zettel"]');
  await tab.first().waitFor({ timeout: 60_000 });
  // The Zettel view (it activates the extension), unless the window restored it open.
  await page.waitForTimeout(3000);
  if (!(await searchFrame(page))) await tab.first().click();
  const said = page.locator(".notification-toast", { hasText: "upgrading zettel-lsp" });
  await said.first().waitFor({ timeout: 60_000 });
  log(`upgrade: ${JSON.stringify((await said.first().innerText()).replace(/\s+/g, " "))}`);
  await waitForInstall(page, "upgrading", "install-upgrade.png");
  const after = installRecord();
  if (!after || after.sha256 !== before.sha256 || after.venv === before.venv) {
    throw new Error(`the upgrade did not record the bundled build: ${JSON.stringify(after)}`);
  }
  await until(`the old environment ${before.venv} to be removed`, () => !existsSync(path.join(STORAGE, before.venv)), 30_000);
  const text = await until("the status bar after the upgrade", async () => {
    const t = await statusText(page);
    return /Zettel: \d+ cards$/.test(t) ? t : undefined;
  }, READY_TIMEOUT, 500);
  log(`upgraded into ${after.venv}: "${text}"`);
}

/** A query for a vault without one in VAULT_QUERIES: the name of its first note. */
function firstTitle(vault) {
  const md = readdirSync(vault).find((f) => f.endsWith(".md") && existsSync(path.join(vault, f)));
  return md ? md.replace(/\.md$/, "") : "note";
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
  ],
});
const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: "dark" });
page.on("pageerror", (err) => log(`page error: ${err.message}`));

let ok = false;
try {
  log(`opening ${URL}`);
  await page.goto(URL, { waitUntil: "domcontentloaded" });
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  log("workbench loaded");

  // Trust prompts (workspace trust is disabled, but be safe on other set-ups).
  for (const name of [/Yes, I trust the authors/i, /^Trust$/]) {
    const button = page.getByRole("button", { name });
    if (await button.isVisible().catch(() => false)) {
      await button.click();
      log(`dismissed a trust prompt (${name})`);
    }
  }

  // The activity bar's Zettel container.
  const zettelTab = page.locator(
    '.activitybar [aria-label^="Zettel"], .activitybar [title^="Zettel"]',
  );
  await zettelTab.first().waitFor({ timeout: 60_000 });
  await zettelTab.first().click();
  log("opened the Zettel view container");

  const frame = await until("the Search webview", () => searchFrame(page), 60_000);
  log("Search webview is up");

  // A fresh profile: the views have their default sizes. The Search view gets most of the
  // sidebar (package.json `initialSize`), not half of it.
  const firstPanes = await sidebarPanes(page);
  const searchPane = firstPanes.find((p) => /^search$/i.test(p.title));
  const relatedPane = firstPanes.find((p) => /^related$/i.test(p.title));
  if (!searchPane || !relatedPane) throw new Error(`the Search and Related panes: ${JSON.stringify(firstPanes)}`);
  const share = searchPane.height / (searchPane.height + relatedPane.height);
  log(`default sizes: Search ${searchPane.height}px, Related ${relatedPane.height}px (${(share * 100).toFixed(0)}% for Search)`);
  if (share < 0.65) throw new Error(`the Search view has only ${(share * 100).toFixed(0)}% of the sidebar by default`);

  if (INSTALL) await installServer(page);

  const ready = await until(
    "the status bar to say the vault is ready",
    async () => {
      const text = await statusText(page);
      if (/not running|failed|read-only/.test(text)) throw new Error(`status bar: ${text}`);
      return /Zettel: \d+ cards$/.test(text) ? text : undefined;
    },
    READY_TIMEOUT,
    500,
  );
  log(`status bar: "${ready}"`);

  // Type like a person (debounced search as you type).
  const box = frame.locator("#query");
  await box.click();
  await box.pressSequentially(QUERY, { delay: 15 });
  log(`typed "${QUERY}"`);

  const first = frame.locator("li.result").first();
  const title = await until(
    `"${EXPECTED}" as the first result`,
    async () => {
      const n = await frame.locator("li.result").count();
      if (n === 0) return undefined;
      const t = (await first.locator(".title").innerText()).trim();
      return t === EXPECTED ? t : undefined;
    },
    30_000,
  ).catch(async (err) => {
    const titles = await frame.locator("li.result .title").allInnerTexts().catch(() => []);
    throw new Error(`${err.message}; results: ${JSON.stringify(titles)}`);
  });
  const count = await frame.locator("li.result").count();
  const marks = await first.locator(".excerpt mark").allInnerTexts();
  const badges = await first.locator(".badge").allInnerTexts();
  log(`first of ${count} results: "${title}"; highlighted: ${JSON.stringify(marks)}; badges: ${JSON.stringify(badges)}`);
  if (marks.length === 0) throw new Error("no query word is highlighted in the first excerpt");
  if (badges.length === 0) throw new Error("the first result has no badges");
  const note = frame.locator("#note");
  if (await note.isVisible()) log(`note shown: ${await note.innerText()}`);

  // Keyboard: Down enters the list, Escape returns to the box.
  await box.press("ArrowDown");
  await until("the first result to take the focus", () =>
    frame.evaluate(() => document.activeElement?.id === "result-0"),
  );
  await frame.locator("#result-0").press("Escape");
  await until("the focus back in the box", () => frame.evaluate(() => document.activeElement?.id === "query"));
  log("keyboard: Down -> first result, Escape -> search box");

  await first.click();
  const tab = page.locator('.tabs-container [role="tab"]', { hasText: `${EXPECTED}.md` });
  await tab.first().waitFor({ timeout: 20_000 });
  const active = await until("the opened note to be the active tab", async () =>
    (await tab.first().getAttribute("aria-selected")) === "true",
  );
  log(`editor tab "${EXPECTED}.md" is open (active: ${active})`);

  // The cursor sits on the chunk's first line (line_start + 1 in the status bar).
  const position = await until("the cursor position in the status bar", async () => {
    const t = await page.locator(".statusbar-item", { hasText: /^Ln \d+/ }).first().innerText();
    return t.trim();
  }, 10_000);
  log(`cursor: ${position}`);

  // The Related view follows the active note.
  const relatedRows = page.locator('.pane:has(.pane-header [aria-label^="Related"]) .monaco-list-row');
  const relatedCount = await until(
    "related notes for the opened card",
    async () => {
      const n = await relatedRows.count();
      return n > 0 ? n : undefined;
    },
    30_000,
  ).catch((err) => {
    log(`warning: ${err.message}`);
    return 0;
  });
  if (relatedCount) {
    log(`Related view: ${relatedCount} notes, first: ${JSON.stringify((await relatedRows.first().innerText()).split("\n"))}`);
  }

  // With a card open, results say how they relate to it (relation badges).
  await box.fill("");
  await box.pressSequentially("cross-encoder reranking", { delay: 15 });
  const relationBadge = await until(
    "a relation badge on the results for the open card",
    async () => {
      const rows = frame.locator("li.result");
      const n = await rows.count();
      for (let i = 0; i < n; i++) {
        const t = (await rows.nth(i).locator(".title").innerText()).trim();
        if (t !== "Cross-encoder reranking") continue;
        const b = await rows.nth(i).locator(".badge").allInnerTexts();
        return b.some((x) => ["linked", "backlink", "2 hops", "not linked"].includes(x.trim()))
          ? `${t}: ${JSON.stringify(b)}`
          : undefined;
      }
      return undefined;
    },
    30_000,
  );
  log(`relation to the open card: ${relationBadge}`);
  await box.fill("");
  await box.pressSequentially(QUERY, { delay: 5 });
  await until("the first query's results again", async () =>
    (await frame.locator("li.result .title").first().innerText().catch(() => "")).trim() === EXPECTED,
  );

  // Let the selection and the Related view settle, then keep the picture.
  await page.mouse.move(5, 890);
  await page.waitForTimeout(500);
  await page.screenshot({ path: SCREENSHOT });
  log(`screenshot: ${SCREENSHOT}`);

  // Suggest Links: the server's code actions for the note in a QuickPick; "Add related links"
  // has no edit until it is resolved; applying it makes the note dirty (an undoable edit).
  await page.keyboard.press("F1");
  const palette = page.locator(".quick-input-widget input");
  await palette.waitFor({ timeout: 10_000 });
  await palette.fill(">Zettel: Suggest Links");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Zettel: Suggest Links" }).first().waitFor();
  await palette.press("Enter");
  const addRelated = page.locator(".quick-input-list .monaco-list-row", { hasText: "Add related links" });
  await addRelated.first().waitFor({ timeout: 20_000 });
  const actions = await page.locator(".quick-input-list .monaco-list-row").allInnerTexts();
  log(`Suggest Links offers ${actions.length}: ${JSON.stringify(actions.map((a) => a.split("\n")[0]))}`);
  const notePath = path.join(VAULT, "retrieval", `${EXPECTED}.md`);
  const before = readFileSync(notePath, "utf8");
  await addRelated.first().click();
  await until("the note to be modified by the edit", async () =>
    (await tab.first().getAttribute("class"))?.includes("dirty"),
    20_000,
  );
  // The server only proposed the edit; the extension applied it to the buffer. Save, then
  // compare the file with what it was.
  await page.keyboard.press("Control+S");
  const after = await until("the saved note", () => {
    const text = readFileSync(notePath, "utf8");
    return text !== before ? text : undefined;
  }, 10_000);
  const added = after.slice(before.length).split("\n").filter((l) => l.trim());
  if (!after.startsWith(before) || !added.some((l) => l.startsWith("## Related")) || !added.some((l) => /^- \[\[.+\]\]$/.test(l))) {
    throw new Error(`unexpected edit; the note now ends with ${JSON.stringify(after.slice(-300))}`);
  }
  log(`applied "Add related links" and saved: appended ${JSON.stringify(added)}`);

  // ---------------------------------------------------------------- Ask (Ollama stand-in)
  // "Show Status" asks the server about Ollama ({ollama: true}).
  await runCommand(page, "Zettel: Show Status");
  const ollamaRow = page.locator(".quick-input-list .monaco-list-row", { hasText: "Ollama: reachable" });
  await ollamaRow.first().waitFor({ timeout: 20_000 });
  log(`Show Status: ${JSON.stringify((await ollamaRow.first().innerText()).split("\n").filter(Boolean))}`);
  await page.keyboard.press("Escape");

  // A fresh editor area, so that opening a source is seen.
  await runCommand(page, "View: Close All Editors");
  await until("no open editor", async () => (await page.locator('.tabs-container [role="tab"]').count()) === 0, 10_000);

  await runCommand(page, "Zettel: Ask");
  const question = frame.locator("#question");
  await until("the Ask box to take the focus", () =>
    frame.evaluate(() => document.activeElement?.id === "question"),
  );
  if ((await frame.locator("#tab-ask").getAttribute("aria-selected")) !== "true") {
    throw new Error("the Ask tab is not selected after 'Zettel: Ask'");
  }
  log("'Zettel: Ask' opened the Ask box with the cursor in it");

  // Record every text the answer shows, to see it grow piece by piece.
  await frame.evaluate(() => {
    const answer = document.getElementById("answer");
    window.__answerTexts = [];
    new MutationObserver(() => window.__answerTexts.push(answer.textContent)).observe(answer, {
      childList: true,
      subtree: true,
      characterData: true,
    });
  });
  await question.pressSequentially(QUESTION, { delay: 5 });
  await question.press("Enter");
  const t1 = Date.now();
  await until("the Stop button while the answer streams", () => frame.locator("#stop-button").isVisible(), 10_000);
  const answered = await until(
    "the answer",
    async () => {
      const status = (await frame.locator("#ask-status").innerText()).trim();
      if (!status.startsWith("Answered")) return undefined;
      return { status, text: (await frame.locator("#answer").innerText()).trim() };
    },
    60_000,
    100,
  );
  const texts = await frame.evaluate(() => window.__answerTexts);
  const growing = [...new Set(texts.filter((t) => t && answered.text.startsWith(t.replace(/▍$/, ""))))];
  log(`answer after ${((Date.now() - t1) / 1000).toFixed(1)}s (${answered.status}): ${JSON.stringify(answered.text)}; it grew through ${growing.length} texts`);
  if (!answered.text.includes(EXPECTED_ANSWER)) throw new Error(`the answer lacks "${EXPECTED_ANSWER}"`);
  if (growing.length < 3) throw new Error(`the answer did not stream (texts seen: ${JSON.stringify(texts)})`);
  if (await frame.locator("#stop-button").isVisible()) throw new Error("Stop is still shown after the answer");

  const sources = frame.locator("li.source");
  const sourceTitles = (await sources.locator(".title").allInnerTexts()).map((t) => t.trim());
  log(`sources (${await frame.locator("#sources-heading").innerText()}): ${JSON.stringify(sourceTitles)}`);
  if (sourceTitles[0] !== EXPECTED) throw new Error(`the first source is not "${EXPECTED}"`);
  // The sources' excerpts as text: no link syntax, also where the server's window cut a link.
  const rawSources = (await sources.locator(".excerpt").allInnerTexts()).filter((t) => /\[\[|\]\]|\]\(/.test(t));
  if (rawSources.length) throw new Error(`source excerpts with link syntax: ${JSON.stringify(rawSources)}`);
  const cite = frame.locator("#answer button.cite", { hasText: EXPECTED });
  if ((await cite.count()) === 0) throw new Error("the citation in the answer is not a link to its source");

  await sources.first().click();
  const askTab = page.locator('.tabs-container [role="tab"]', { hasText: `${EXPECTED}.md` });
  await askTab.first().waitFor({ timeout: 20_000 });
  await until("the source to be the active tab", async () => (await askTab.first().getAttribute("aria-selected")) === "true");
  const askPosition = await page.locator(".statusbar-item", { hasText: /^Ln \d+/ }).first().innerText();
  log(`clicked the first source: "${EXPECTED}.md" is open at ${askPosition.trim()}`);

  // Room for the sources in the picture: fold the Related view.
  const relatedHeader = page.locator('.pane-header:has([aria-label^="Related"]), .pane-header[aria-label^="Related"]').first();
  try {
    if ((await relatedHeader.getAttribute("aria-expanded", { timeout: 2_000 })) === "true") {
      await relatedHeader.click({ position: { x: 40, y: 10 } });
      await until("the Related view to fold", async () => (await relatedHeader.getAttribute("aria-expanded")) === "false", 5_000);
    }
  } catch (err) {
    log(`note: could not fold the Related view for the picture (${err.message})`);
  }
  await page.mouse.move(5, 890);
  await page.waitForTimeout(500);
  await page.screenshot({ path: ASK_SCREENSHOT });
  log(`screenshot: ${ASK_SCREENSHOT}`);

  // Escape stops an answer mid-stream ($/cancelRequest; the server stops the stream).
  await question.click();
  await question.fill("what does reciprocal rank fusion use instead of scores");
  await question.press("Enter");
  await until("the first piece of the second answer", async () => (await frame.locator("#answer").innerText()).trim().length > 0, 20_000, 50);
  await question.press("Escape");
  const stopped = await until("the answer to stop", async () => {
    const status = (await frame.locator("#ask-status").innerText()).trim();
    return status === "Stopped." ? (await frame.locator("#answer").innerText()).trim() : undefined;
  }, 10_000, 50);
  await page.waitForTimeout(1_000);
  const later = (await frame.locator("#answer").innerText()).trim();
  if (await frame.locator("#stop-button").isVisible()) throw new Error("Stop is still shown after stopping");
  if (later !== stopped || later.endsWith("question.")) {
    throw new Error(`the answer went on after Stop: ${JSON.stringify(stopped)} -> ${JSON.stringify(later)}`);
  }
  log(`Escape stopped the answer at ${JSON.stringify(later)}`);
  await page.screenshot({ path: path.join(ARTIFACTS, "ask-stopped.png") });

  // No Ollama: the notice says why, and the retrieved notes are still listed.
  const workspaceSettings = path.join(VAULT, ".vscode", "settings.json");
  const deadUrl = `http://127.0.0.1:${await freePort()}`;
  writeFileSync(workspaceSettings, JSON.stringify({ "zettel.ollamaHost": deadUrl }, null, 2));
  const fallback = await until(
    "the fallback notice for an unreachable Ollama",
    async () => {
      await question.click();
      await question.fill(QUESTION);
      await question.press("Enter");
      const done = await until("the answer", async () => {
        const status = (await frame.locator("#ask-status").innerText()).trim();
        return status && status !== "Asking…" ? status : undefined;
      }, 20_000, 100);
      const notice = frame.locator("#ask-notice");
      if (!(await notice.isVisible())) return undefined; // the new setting has not arrived yet
      return { status: done, notice: (await notice.innerText()).trim(), sources: await sources.count() };
    },
    30_000,
    500,
  );
  log(`unreachable Ollama: ${JSON.stringify(fallback)}`);
  await page.screenshot({ path: path.join(ARTIFACTS, "ask-fallback.png") });
  if (!fallback.notice.includes("not reachable") || !fallback.notice.includes(deadUrl)) {
    throw new Error("the notice does not say that Ollama is not reachable");
  }
  if (fallback.sources === 0) throw new Error("no sources listed without Ollama");
  if ((await frame.locator("#sources-heading").innerText()).trim().toLowerCase() !== "retrieved notes") {
    throw new Error("the sources are not headed 'Retrieved notes' without an answer");
  }

  // Search with query expansion on: typing searches without the LLM steps, Enter runs them.
  writeFileSync(
    workspaceSettings,
    JSON.stringify({ "zettel.ollamaHost": OLLAMA_URL, "zettel.expandQuery": true }, null, 2),
  );
  await frame.locator("#tab-search").click();
  const summary = frame.locator("#summary");
  const typed = await until(
    "results typed without the LLM steps",
    async () => {
      await box.fill("");
      await box.pressSequentially(QUERY, { delay: 5 });
      const line = await until("the summary", async () => {
        const text = (await summary.innerText()).trim();
        return /results?/.test(text) && !(await frame.locator("#box").getAttribute("class")).includes("busy") ? text : undefined;
      }, 20_000, 100);
      return line.includes("Enter: refine with the LLM") ? line : undefined; // the setting has arrived
    },
    30_000,
    500,
  );
  const typedBadges = await frame.locator("li.result .badge").allInnerTexts();
  if (typedBadges.includes("expanded")) throw new Error("typing ran the query expansion");
  await box.press("Enter");
  const refined = await until("results with the LLM steps", async () => {
    const text = (await summary.innerText()).trim();
    return text.includes("with the LLM steps") ? text : undefined;
  }, 30_000, 100);
  const refinedBadges = await frame.locator("li.result .badge").allInnerTexts();
  log(`typed: "${typed}"; Enter: "${refined}" (${refinedBadges.filter((b) => b === "expanded").length} results found by the expanded queries)`);
  if (!refinedBadges.includes("expanded")) throw new Error("Enter did not run the query expansion");
  await page.screenshot({ path: path.join(ARTIFACTS, "search-llm.png") });

  // ---------------------------------------------------------------- completion
  // `[[` typed in a note lists the server's cards in the suggest widget, each with "folder ·
  // relation" beside it (labelDetails); a few letters filter; Enter inserts the link, closed
  // once (VS Code has already closed the brackets: the item's edit replaces the `]]` too).
  const completeRel = path.join("baking", "Levain.md");
  const completePath = path.join(VAULT, completeRel);
  const completeBefore = readFileSync(completePath, "utf8");
  const completeTab = await openFile(page, completeRel);
  await page.keyboard.press("Control+End"); // the empty line after the last one
  await page.keyboard.press("Enter");
  const lead = "A strong levain also helps the ";
  await page.keyboard.type(`${lead}[[`, { delay: 20 });
  const suggest = page.locator(".editor-widget.suggest-widget");
  const suggestRows = suggest.locator(".monaco-list-row");
  /** The widget's rows: label, and the details beside it (textContent: shown for the focused row). */
  const suggestItems = () =>
    suggest.evaluate((w) =>
      [...w.querySelectorAll(".monaco-list-row")].map((r) => ({
        label: (r.querySelector(".label-name")?.textContent ?? "").trim(),
        details: (r.querySelector(".details-label")?.textContent ?? "").trim(),
        focused: r.classList.contains("focused"),
      })),
    );
  const listed = await until("the suggest widget with the server's cards", async () => {
    if (!(await suggest.isVisible()) || (await suggestRows.count()) === 0) return undefined;
    const items = await suggestItems();
    // Our items say where the card is and how it relates; VS Code's word suggestions do not.
    return items.some((i) => / · /.test(i.details)) ? items : undefined;
  }, 30_000);
  log(`[[ lists ${listed.length} cards, first: ${JSON.stringify(listed.slice(0, 4))}`);
  await page.screenshot({ path: path.join(SHOTS, "completion-popup.png") });
  await page.keyboard.type("Glut", { delay: 40 });
  // The list filtered by what was typed (the answer to the request for "[[Glut"), not the one
  // for "[[" still on screen: Enter on that one inserts an item made for the text before.
  const picked = await until('"Gluten" as the focused suggestion of the filtered list', async () => {
    const items = await suggestItems();
    const f = items.find((i) => i.focused);
    const filtered = items.every((i) => /g.*l.*u.*t/i.test(i.label));
    return f && f.label === "Gluten" && filtered ? { f, items } : undefined;
  }, 20_000);
  log(`after "Glut": ${JSON.stringify(picked.items.slice(0, 4))}`);
  await page.screenshot({ path: path.join(ARTIFACTS, "completion-widget.png") });
  if (!/^baking · (linked|backlink|2 hops|not linked)$/.test(picked.f.details)) {
    throw new Error(`the Gluten item's details are ${JSON.stringify(picked.f.details)}, not "baking · <relation>"`);
  }
  const docs = page.locator(".editor-widget.suggest-details-container .suggest-details, .suggest-details");
  if (await docs.first().isVisible().catch(() => false)) {
    log(`the item's documentation: ${JSON.stringify((await docs.first().innerText()).trim().slice(0, 160))}`);
  }
  await page.keyboard.press("Enter");
  await until("the suggest widget to close", async () => !(await suggest.isVisible()), 10_000);
  await page.mouse.move(5, 890);
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(SHOTS, "completion.png") });
  await page.keyboard.press("Control+S");
  const completed = await until("the saved note with the link", () => {
    const text = readFileSync(completePath, "utf8");
    return text !== completeBefore ? text : undefined;
  }, 10_000);
  const addedLine = completed.slice(completeBefore.length).trim();
  log(`completion inserted: ${JSON.stringify(addedLine)}`);
  if (!completed.startsWith(completeBefore) || addedLine !== `${lead}[[Gluten]]`) {
    throw new Error(`expected the line ${JSON.stringify(`${lead}[[Gluten]]`)}; the note now ends with ${JSON.stringify(completed.slice(-200))}`);
  }
  if (/\]\]\]|\[\[\[/.test(completed)) throw new Error("the completion left doubled brackets");
  // Back as it was: the file (the editor is saved, so it follows), then close the editor.
  writeFileSync(completePath, completeBefore);
  await runCommand(page, "View: Close All Editors");
  await until("no open editor", async () => (await page.locator('.tabs-container [role="tab"]').count()) === 0, 10_000);
  if (await completeTab.count()) throw new Error("the completion note's tab is still open");

  // ---------------------------------------------------------------- rename from the title
  // F2 on a card's opening H1 that repeats its file name renames the card: the file moves
  // (RenameFile in the WorkspaceEdit) and every [[link]] to it is rewritten.
  const renameRel = path.join("baking", "Scoring.md");
  const renameName = "Scoring the loaf";
  const renameOld = path.join(VAULT, renameRel);
  const renameNew = path.join(VAULT, "baking", `${renameName}.md`);
  // The notes that link to it, and how each link must read afterwards (an alias is kept).
  const relinks = {
    "Sourdough map of content.md": ["- [[Scoring]]", `- [[${renameName}]]`],
    "baking/Shaping.md": ["(see [[Scoring]])", `(see [[${renameName}]])`],
    "baking/Dutch oven baking.md": ["(see [[Scoring]])", `(see [[${renameName}]])`],
    "baking/Proofing.md": ["[[Scoring|scoring]]", `[[${renameName}|scoring]]`],
  };
  const linkers = Object.keys(relinks).map((r) => path.join(VAULT, r));
  for (const [rel, [was]] of Object.entries(relinks)) {
    if (!readFileSync(path.join(VAULT, rel), "utf8").includes(was)) throw new Error(`${rel} has no ${was}`);
  }
  const h1Line = readFileSync(renameOld, "utf8").split("\n").indexOf("# Scoring") + 1;
  if (h1Line === 0) throw new Error(`${renameRel} has no "# Scoring" line`);
  await openFile(page, renameRel);
  await goToLine(page, h1Line);
  await page.keyboard.press("End");
  await page.keyboard.press("F2");
  const renameInput = page.locator(".rename-box .rename-input");
  await renameInput.first().waitFor({ timeout: 15_000 });
  const offered = await renameInput.first().inputValue().catch(() => renameInput.first().innerText());
  log(`F2 on line ${h1Line} ("# Scoring") offers ${JSON.stringify(offered)}`);
  if (offered.trim() !== "Scoring") throw new Error(`the rename box offers ${JSON.stringify(offered)}, not "Scoring"`);
  // (The box takes the focus a moment after it shows: type into it, not into the editor.)
  await renameInput.first().fill(renameName);
  await renameInput.first().press("Enter");
  // The move runs VS Code's file participants: our own willRenameFiles. Links are already
  // rewritten by the rename's edit, so it must have nothing more to change (no dialog asking
  // to apply "refactoring changes with this file move").
  const participantDialog = page.locator(".monaco-dialog-box", { hasText: "refactoring changes" });
  const moved = await until(`${renameName}.md on disk and Scoring.md gone (or a dialog)`, async () => {
    if (existsSync(renameNew) && !existsSync(renameOld)) return "moved";
    return (await participantDialog.isVisible()) ? "dialog" : undefined;
  }, 30_000);
  if (moved === "dialog") {
    await page.screenshot({ path: path.join(ARTIFACTS, "rename-dialog.png") });
    throw new Error(
      `the move asked for more edits (willRenameFiles answered the server's own rename again): ${JSON.stringify((await participantDialog.innerText()).trim())}`,
    );
  }
  // Links in notes that are not open are edited in the background (files.refactoring.autoSave
  // saves them); save whatever is still dirty.
  await runCommand(page, "File: Save All");
  const relinked = await until("the links rewritten on disk", () => {
    const texts = linkers.map((f) => readFileSync(f, "utf8"));
    const want = Object.values(relinks).map(([, now]) => now);
    return texts.every((t, i) => t.includes(want[i]) && !/\[\[Scoring[\]|#]/.test(t)) ? texts : undefined;
  }, 20_000).catch((err) => {
    const lines = linkers.map((f) => readFileSync(f, "utf8").split("\n").filter((l) => l.includes("Scoring")));
    throw new Error(`${err.message}; lines naming Scoring: ${JSON.stringify(lines)}`);
  });
  const renamedText = readFileSync(renameNew, "utf8");
  if (!renamedText.split("\n").includes(`# ${renameName}`)) {
    throw new Error(`the renamed card's H1 is not "# ${renameName}": ${JSON.stringify(renamedText.slice(0, 120))}`);
  }
  const renamedTab = page.locator('.tabs-container [role="tab"]', { hasText: `${renameName}.md` });
  await renamedTab.first().waitFor({ timeout: 10_000 });
  log(`renamed ${renameRel} -> baking/${renameName}.md; ${relinked.length} notes now link ${JSON.stringify(Object.values(relinks).map(([, now]) => now))}`);
  // The server follows the move (the watcher, the saved links): the card's backlinks lens.
  const lens = page.locator(".editor-instance .codelens-decoration", { hasText: /backlinks?/ }).first();
  const backlinks = await until("the renamed card's backlinks", async () => {
    const t = (await lens.innerText()).trim();
    return /^[1-9]\d* backlinks?/.test(t) ? t : undefined;
  }, 20_000).catch((err) => `not shown (${err.message})`);
  log(`renamed card's lens: ${JSON.stringify(backlinks)}`);
  await page.mouse.move(5, 890);
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(SHOTS, "rename.png") });
  await runCommand(page, "View: Close All Editors");

  // A server command that does not exist: a change of zettel.server.* restarts the server;
  // the start fails with an explanation, install instructions and buttons.
  // (Through the workspace's settings: VS Code watches the folder; edits of the profile's
  // settings.json from outside are not noticed by code-server.)
  mkdirSync(path.dirname(workspaceSettings), { recursive: true });
  const missing = path.join(ARTIFACTS, "no-such-dir", "zettel-lsp");
  writeFileSync(workspaceSettings, JSON.stringify({ "zettel.server.command": [missing] }, null, 2));
  const toast = page.locator(".notification-toast", { hasText: "could not start" });
  await toast.first().waitFor({ timeout: 30_000 });
  const message = (await toast.first().locator(".notification-list-item-message").innerText()).trim();
  const buttons = await toast.first().locator(".monaco-button").allInnerTexts();
  log(`missing server: ${JSON.stringify(message)}; buttons: ${JSON.stringify(buttons)}`);
  for (const want of ["does not exist", "pipx install /path/to/zettel-lsp", "zettel.server.command", "zettel.server.python"]) {
    if (!message.includes(want)) throw new Error(`the error message lacks "${want}"`);
  }
  for (const want of ["Open Settings", "Show Output"]) {
    if (!buttons.some((b) => b.includes(want))) throw new Error(`no "${want}" button`);
  }
  const failedStatus = await until("the status bar to say the server is not running", async () => {
    const text = await statusText(page);
    return /not running/.test(text) ? text : undefined;
  }, 10_000);
  log(`status bar: "${failedStatus}"`);
  await toast.first().locator(".monaco-button", { hasText: "Show Output" }).click();
  await until("the Zettel output in the panel", async () => {
    // Monaco renders spaces as no-break spaces.
    const text = (await page.locator(".part.panel .view-lines").first().innerText()).replace(/\u00a0/g, " ");
    return text.includes("could not start") ? text : undefined;
  }, 10_000);
  log("Show Output opened the Zettel output channel");

  // A Python without the package (-S: no site-packages): the server exits during start-up;
  // the message names the cause from its stderr.
  writeFileSync(workspaceSettings, JSON.stringify({ "zettel.server.command": ["python3", "-S", "-m", "zettel_lsp"] }));
  const noModule = page.locator(".notification-toast", { hasText: "has no zettel_lsp package" });
  await noModule.first().waitFor({ timeout: 30_000 });
  log(`python without the package: ${JSON.stringify(await noModule.first().locator(".notification-list-item-message").innerText())}`);
  await until("the status bar to say the server is not running", async () =>
    /not running/.test(await statusText(page)),
  );
  // Only our message: vscode-languageclient's generic one is kept out of the way.
  if (await page.locator(".notification-toast", { hasText: "couldn't create connection" }).count()) {
    throw new Error("vscode-languageclient's generic start error was shown as well");
  }

  writeFileSync(workspaceSettings, "{}\n");
  const back = await until("the server to be back after fixing the setting", async () => {
    const text = await statusText(page);
    return /Zettel: \d+ cards$/.test(text) ? text : undefined;
  }, READY_TIMEOUT, 500);
  log(`setting fixed, server restarted: "${back}"`);

  // A crash: kill the server (a descendant of this test's code-server, found through /proc);
  // the client starts it again and the status bar comes back.
  const serverPid = await until("the server's process", () => serverPids()[0], 10_000);
  process.kill(serverPid, "SIGKILL");
  log(`killed the server (pid ${serverPid})`);
  const newPid = await until("a new server process", () => serverPids().find((p) => p !== serverPid), 30_000);
  const revived = await until("the status bar after the restart", async () => {
    const text = await statusText(page);
    return /Zettel: \d+ cards$/.test(text) ? text : undefined;
  }, READY_TIMEOUT, 500);
  log(`the client restarted the server (pid ${newPid}): "${revived}"`);

  // ---------------------------------------------------------------- the sidebar's layout
  for (const [rel, text] of Object.entries(LONG_PATH_NOTES)) {
    const file = path.join(LONG_PATHS_VAULT, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  await openVault(page, LONG_PATHS_VAULT);
  const longFrame = await searchFor(page, "colour", 8);
  log(`sidebar panes: ${JSON.stringify(await sidebarPanes(page))}`);
  const rows = await checkRows(longFrame, "long paths");
  const whole = rows.filter((r) => r.fullyVisible).length;
  if (whole < 4) throw new Error(`only ${whole} whole results are visible in the Search view`);
  const cutFolders = rows.filter((r) => r.folderCut);
  if (cutFolders.length === 0) throw new Error("no folder was long enough to be shortened: the test vault is too tame");
  const bad = await longFrame.evaluate(() =>
    [...document.querySelectorAll("li.result .excerpt")]
      .map((e) => e.textContent ?? "")
      .filter((t) => /\[\[|\]\(|\|\s*:?-{3,}|\s\|\s|\*\*/.test(t)),
  );
  if (bad.length) throw new Error(`excerpts with link or table syntax: ${JSON.stringify(bad)}`);
  const cells = await longFrame.locator("li.result .excerpt .cell-sep").count();
  const crumbs = await longFrame.locator("li.result .excerpt .crumb").allInnerTexts();
  log(`excerpts: no link or table syntax; ${cells} cell separators; breadcrumbs: ${JSON.stringify(crumbs)}`);
  if (cells === 0) throw new Error("the table note's excerpt shows no cells");
  await page.mouse.move(5, 890);
  await page.screenshot({ path: path.join(SHOTS, "layout-long-paths.png") });
  // The table note's row (further down the list), to look at its cells.
  await longFrame.evaluate(() => {
    const li = [...document.querySelectorAll("li.result")].find((e) => e.querySelector(".cell-sep"));
    li?.scrollIntoView({ block: "center" });
  });
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(SHOTS, "layout-table.png") });
  await longFrame.evaluate(() => document.querySelector("li.result")?.scrollIntoView({ block: "nearest" }));

  // Compact mode: one line per result, more of them in view; and back.
  await runCommand(page, "Zettel: Toggle Compact Results");
  await until("compact results", () =>
    longFrame.evaluate(() => document.body.classList.contains("compact") && !document.querySelector("li.result .excerpt")),
    15_000,
  );
  const compactRows = await checkRows(longFrame, "long paths, compact");
  const compactWhole = compactRows.filter((r) => r.fullyVisible).length;
  log(`compact: ${compactWhole} whole results in view (${whole} before)`);
  if (compactWhole <= whole) throw new Error("compact mode shows no more results than the normal one");
  await page.screenshot({ path: path.join(SHOTS, "layout-compact.png") });
  await runCommand(page, "Zettel: Toggle Compact Results");
  await until("normal results again", () =>
    longFrame.evaluate(() => !document.body.classList.contains("compact") && !!document.querySelector("li.result .excerpt")),
    15_000,
  );

  // The big vaults, in both themes.
  for (const vault of EXTRA_VAULTS) {
    const name = path.basename(vault);
    const query = VAULT_QUERIES[name] ?? firstTitle(vault);
    await openVault(page, vault, true);
    const frame = await searchFor(page, query, 5);
    await checkRows(frame, name);
    const excerpts = await frame.evaluate(() =>
      [...document.querySelectorAll("li.result .excerpt")].map((e) => e.textContent ?? ""),
    );
    const raw = excerpts.filter((t) => /\[\[|\]\(|\|\s*:?-{3,}/.test(t));
    if (raw.length) log(`warning: ${name}: excerpts with Markdown syntax left: ${JSON.stringify(raw)}`);
    // A note open in the editor, and its related notes, as in a real session.
    const firstTitleText = (await frame.locator("li.result .title").first().innerText()).trim();
    await frame.locator("li.result").first().click();
    await page
      .locator(".tabs-container [role='tab']", { hasText: firstTitleText })
      .first()
      .waitFor({ timeout: 20_000 })
      .catch(() => log(`note: no editor tab named "${firstTitleText}"`));
    await page
      .locator('.pane:has(.pane-header [aria-label^="Related"]) .monaco-list-row')
      .first()
      .waitFor({ timeout: 30_000 })
      .catch(() => log(`note: ${name}: no related notes listed`));
    await page.mouse.move(5, 890);
    await page.waitForTimeout(800);
    await page.screenshot({ path: path.join(SHOTS, `vscode-${name}-dark.png`) });
    await setTheme(page, "Light Modern", "vs");
    await checkRows(frame, `${name}, light`);
    await page.mouse.move(5, 890);
    await page.waitForTimeout(800);
    await page.screenshot({ path: path.join(SHOTS, `vscode-${name}-light.png`) });
    await setTheme(page, "Dark Modern", "vs-dark");
    log(`${name}: screenshots vscode-${name}-dark.png, vscode-${name}-light.png in ${SHOTS}`);
  }

  if (INSTALL) await upgradeServer(page);

  ok = true;
} catch (err) {
  const shot = path.join(ARTIFACTS, "failure.png");
  await page.screenshot({ path: shot }).catch(() => undefined);
  log(`FAILED: ${err instanceof Error ? err.message : String(err)} (screenshot: ${shot})`);
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
