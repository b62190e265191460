/**
 * The Ask panel of the Zettel view (runs in the webview; imported by search.ts).
 *
 * Enter in the question box asks (Shift+Enter adds a line); pieces of the answer are appended
 * as they stream in and rendered with lib/ask (escaped; line breaks kept; **bold**, `code`,
 * and citations of sources as buttons once the sources are known); then the sources. Stop or
 * Escape cancels. The sources list works like the search results: Up/Down/Home/End move, Enter
 * opens, Escape goes back to the question box.
 */

import {
  askStatusText,
  finalAnswer,
  renderAnswerHtml,
  renderSourcesHtml,
  sourcesHeading,
  type AskModel,
  type AskPhase,
  type SourceItem,
} from "../lib/ask";
import { ReplyFilter } from "../lib/latest";
import type { FromWebview, ToWebview } from "../lib/messages";

type AskMessage = Extract<ToWebview, { type: "askDelta" | "askDone" | "askStopped" | "askError" }>;

function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el as T;
}

/** How often the streamed text is rendered again (the pieces come word by word). */
const RENDER_MS = 40;

export class AskPanel {
  private readonly input = byId<HTMLTextAreaElement>("question");
  private readonly box = byId<HTMLElement>("ask-box");
  private readonly askButton = byId<HTMLButtonElement>("ask-button");
  private readonly stopButton = byId<HTMLButtonElement>("stop-button");
  private readonly hint = byId<HTMLElement>("ask-hint");
  private readonly status = byId<HTMLElement>("ask-status");
  private readonly notice = byId<HTMLElement>("ask-notice");
  private readonly answer = byId<HTMLElement>("answer");
  private readonly heading = byId<HTMLElement>("sources-heading");
  private readonly list = byId<HTMLUListElement>("sources");

  private readonly replies = new ReplyFilter();
  /** The question on screen (`askStop` and `openSource` name it). */
  private seq = 0;
  private phase: AskPhase | "idle" = "idle";
  private streamed = "";
  private sources: SourceItem[] = [];
  private titles: string[] = [];
  private selected = -1;
  private renderTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly send: (message: FromWebview) => void,
    private readonly saveQuestion: (question: string) => void,
  ) {
    this.input.addEventListener("keydown", (e) => this.onInputKey(e));
    this.input.addEventListener("input", () => {
      this.saveQuestion(this.input.value);
      this.autosize();
    });
    this.askButton.addEventListener("click", () => this.ask());
    this.stopButton.addEventListener("click", () => {
      this.stop();
      this.input.focus();
    });
    this.list.addEventListener("keydown", (e) => this.onListKey(e));
    this.list.addEventListener("click", (e) => {
      const i = this.indexOf(e.target);
      if (i >= 0) {
        this.select(i, false);
        this.open(i);
      }
    });
    this.answer.addEventListener("click", (e) => {
      const cite = e.target instanceof Element ? e.target.closest<HTMLElement>("button.cite") : null;
      if (cite) {
        e.preventDefault();
        this.open(Number(cite.dataset.source));
      }
    });
    // Escape anywhere in the panel stops an answer that is still coming.
    byId<HTMLElement>("ask-panel").addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.phase === "asking") {
        e.preventDefault();
        e.stopPropagation();
        this.stop();
        this.input.focus();
      }
    });
  }

  get question(): string {
    return this.input.value;
  }

  /** Put the cursor in the question box, optionally with a new question (not sent). */
  focus(question?: string): void {
    if (question !== undefined && question !== this.input.value) {
      this.input.value = question;
      this.saveQuestion(question);
      this.autosize();
    }
    this.input.focus();
    if (question !== undefined) this.input.select();
  }

  restore(question: string): void {
    this.input.value = question;
    this.autosize();
  }

  private autosize(): void {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight + 2, 200)}px`;
  }

  private onInputKey(e: KeyboardEvent): void {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.ask();
    } else if (e.key === "ArrowDown" && this.sources.length > 0 && this.caretOnLastLine()) {
      e.preventDefault();
      this.select(this.selected < 0 ? 0 : this.selected, true);
    }
  }

  private caretOnLastLine(): boolean {
    return !this.input.value.slice(this.input.selectionEnd).includes("\n");
  }

  ask(): void {
    const question = this.input.value.trim();
    if (!question) return;
    this.seq = this.replies.next();
    this.streamed = "";
    this.sources = [];
    this.titles = [];
    this.selected = -1;
    this.list.innerHTML = "";
    this.heading.hidden = true;
    this.showNotice([]);
    this.setPhase("asking");
    this.renderAnswer();
    this.send({ type: "ask", seq: this.seq, question });
  }

  stop(): void {
    if (this.phase !== "asking") return;
    this.send({ type: "askStop", seq: this.seq });
    this.setPhase("stopped");
    this.renderAnswer();
  }

  /** Messages for this panel (the others are search.ts's). */
  handle(msg: AskMessage): void {
    if (!this.replies.accepts(msg.seq)) return; // an older question
    switch (msg.type) {
      case "askDelta":
        if (this.phase !== "asking") return; // stopped: the rest is not wanted
        this.streamed += msg.delta;
        this.scheduleRender();
        break;
      case "askDone":
        this.done(msg.model);
        break;
      case "askStopped":
        if (this.phase === "asking") this.setPhase("stopped");
        this.renderAnswer();
        break;
      case "askError":
        this.setPhase("failed");
        this.renderAnswer();
        this.showNotice([msg.message]);
        break;
    }
  }

  private done(model: AskModel): void {
    const stopped = this.phase === "stopped" || model.cancelled;
    this.streamed = finalAnswer(model, this.streamed);
    this.sources = model.sources;
    this.titles = model.sources.map((s) => s.title);
    this.setPhase(stopped ? "stopped" : "answered", { ...model, answer: this.streamed });
    this.renderAnswer();
    const heading = sourcesHeading({ answer: this.streamed, sources: this.sources });
    this.heading.textContent = heading;
    this.heading.hidden = heading === "";
    this.selected = this.sources.length > 0 ? 0 : -1;
    this.list.innerHTML = renderSourcesHtml(this.sources, this.selected);
    this.showNotice([model.fallback, ...model.messages]);
  }

  private setPhase(phase: AskPhase, model?: AskModel): void {
    this.phase = phase;
    const asking = phase === "asking";
    this.box.classList.toggle("busy", asking);
    this.stopButton.hidden = !asking;
    this.answer.setAttribute("aria-busy", asking ? "true" : "false");
    this.hint.hidden = true;
    this.status.textContent = askStatusText(phase, model);
  }

  private showNotice(lines: readonly string[]): void {
    const shown = lines.filter((l) => l.trim() !== "");
    this.notice.textContent = shown.join("\n");
    this.notice.hidden = shown.length === 0;
  }

  private scheduleRender(): void {
    if (this.renderTimer !== undefined) return;
    this.renderTimer = setTimeout(() => {
      this.renderTimer = undefined;
      this.renderAnswer();
    }, RENDER_MS);
  }

  private renderAnswer(): void {
    if (this.renderTimer !== undefined) {
      clearTimeout(this.renderTimer);
      this.renderTimer = undefined;
    }
    this.answer.innerHTML = renderAnswerHtml(this.streamed, this.titles);
    this.answer.hidden = this.streamed === "";
  }

  private select(index: number, focus: boolean): void {
    if (this.sources.length === 0) return;
    this.selected = Math.max(0, Math.min(this.sources.length - 1, index));
    this.list.querySelectorAll<HTMLElement>("li.source").forEach((li, i) => {
      const on = i === this.selected;
      li.classList.toggle("selected", on);
      li.setAttribute("aria-selected", on ? "true" : "false");
      li.tabIndex = on ? 0 : -1;
      if (on) {
        li.scrollIntoView({ block: "nearest" });
        if (focus) li.focus();
      }
    });
  }

  private open(index: number, preserveFocus = false): void {
    if (!(index >= 0 && index < this.sources.length)) return;
    this.send({ type: "openSource", seq: this.seq, index, preserveFocus });
  }

  private indexOf(target: EventTarget | null): number {
    const li = target instanceof Element ? target.closest<HTMLElement>("li.source") : null;
    return li ? Number(li.dataset.index) : -1;
  }

  private onListKey(e: KeyboardEvent): void {
    switch (e.key) {
      case "ArrowDown":
        e.preventDefault();
        this.select(this.selected + 1, true);
        break;
      case "ArrowUp":
        e.preventDefault();
        if (this.selected <= 0) this.input.focus();
        else this.select(this.selected - 1, true);
        break;
      case "Home":
        e.preventDefault();
        this.select(0, true);
        break;
      case "End":
        e.preventDefault();
        this.select(this.sources.length - 1, true);
        break;
      case "Enter":
      case " ":
        e.preventDefault();
        this.open(this.selected);
        break;
      case "Escape":
        if (this.phase === "asking") return; // the panel's handler stops it
        e.preventDefault();
        this.input.focus();
        break;
    }
  }
}
