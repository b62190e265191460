// Drives code-server (started by test/e2e.sh) in headless Chromium with playwright-core:
// open the Zettel view, wait until the index is ready, search, open the top result, check the
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
// Then it points `zettel.server.command` at a missing program (the extension restarts the
// server, fails and explains with buttons), at a Python without the package, and back (it
// recovers); last, it kills the server and waits for the client to restart it.
//
// Env: E2E_URL (code-server URL with ?folder=), E2E_VAULT (that folder), E2E_CODE_SERVER_PID,
// E2E_CHROMIUM, E2E_SCREENSHOT, E2E_ASK_SCREENSHOT, E2E_OLLAMA_URL, E2E_ARTIFACTS.

import { chromium } from "playwright-core";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
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
  for (const want of ["does not exist", "pip install zettel-lsp", "zettel.server.command", "zettel.server.python"]) {
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

  ok = true;
} catch (err) {
  const shot = path.join(ARTIFACTS, "failure.png");
  await page.screenshot({ path: shot }).catch(() => undefined);
  log(`FAILED: ${err instanceof Error ? err.message : String(err)} (screenshot: ${shot})`);
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
