/**
 * `zettel.status` -> the status bar item's text and tooltip, and the lines of "Show Status".
 * Several vaults are summed up: the least advanced phase wins, cards add up.
 */

import type { OllamaStatus, Phase, ServerStatus, VaultStatus } from "./protocol";

/** The client's side of things, before or instead of a status answer. */
export type ClientState = "installing" | "starting" | "running" | "stopped" | "failed";

export interface StatusView {
  /** Status bar text, with a `$(codicon)`. */
  text: string;
  /** Plain text tooltip. */
  tooltip: string;
  /** Everything is ready: polling may slow down. */
  ready: boolean;
  /** Work in progress (spinner): poll often. */
  busy: boolean;
  /** Something needs the user's attention (warning colour). */
  problem: boolean;
}

/** Lower = further from done; read-only/failed sort before the ones still working. */
const ORDER: Record<Phase, number> = {
  failed: 0,
  "read-only": 1,
  starting: 2,
  syncing: 3,
  graph: 4,
  embedding: 5,
  ready: 6,
};

export function basename(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

export function cardsOf(v: VaultStatus): number {
  return v.cards ?? v.cards_in_graph;
}

/** "embedding 12/45 cards (27%)" and friends, for one vault. */
export function phaseText(v: VaultStatus): string {
  switch (v.phase) {
    case "embedding": {
      const total = v.cards ?? 0;
      const done = Math.min(v.cards_embedded ?? 0, total);
      const pct = total > 0 ? ` (${Math.floor((100 * done) / total)}%)` : "";
      return `embedding ${done}/${total} cards${pct}`;
    }
    case "graph":
      return "linking";
    case "read-only":
      return "read-only";
    case "failed":
      return "index failed";
    default:
      return v.phase;
  }
}

export function statusView(status: ServerStatus | undefined, client: ClientState): StatusView {
  if (client === "failed") {
    return {
      text: "$(error) Zettel: server not running",
      tooltip: "The zettel-lsp server could not start. Click for details.",
      ready: false,
      busy: false,
      problem: true,
    };
  }
  if (client === "stopped") {
    return {
      text: "$(circle-slash) Zettel: stopped",
      tooltip: "The zettel-lsp server is stopped. Run 'Zettel: Restart Server' to start it.",
      ready: false,
      busy: false,
      problem: false,
    };
  }
  if (client === "installing") {
    return {
      text: "$(loading~spin) Zettel: installing the server",
      tooltip: "Installing zettel-lsp into the extension's own environment ('Zettel: Show Output' shows pip's lines).",
      ready: false,
      busy: true,
      problem: false,
    };
  }
  if (client === "starting" || status === undefined) {
    return {
      text: "$(loading~spin) Zettel: starting",
      tooltip: "Starting the zettel-lsp server…",
      ready: false,
      busy: true,
      problem: false,
    };
  }
  const vaults = status.vaults;
  if (vaults.length === 0) {
    return {
      text: "$(circle-slash) Zettel: no folder",
      tooltip: "Open a folder of Markdown notes (a vault) to search it.",
      ready: true,
      busy: false,
      problem: false,
    };
  }
  const worst = [...vaults].sort((a, b) => ORDER[a.phase] - ORDER[b.phase])[0] as VaultStatus;
  const cards = vaults.reduce((n, v) => n + cardsOf(v), 0);
  const tooltip = vaults.map(vaultLine).join("\n") + "\nClick for details.";
  const cardText = `${cards} card${cards === 1 ? "" : "s"}`;
  if (worst.phase === "ready") {
    return { text: `$(notebook) Zettel: ${cardText}`, tooltip, ready: true, busy: false, problem: false };
  }
  if (worst.phase === "read-only" || worst.phase === "failed") {
    const icon = worst.phase === "failed" ? "$(error)" : "$(lock)";
    return {
      text: `${icon} Zettel: ${phaseText(worst)}`,
      tooltip,
      ready: false,
      busy: false,
      problem: true,
    };
  }
  const progress = worst.phase === "embedding" ? phaseText(worst) : `${phaseText(worst)} (${cardText})`;
  return { text: `$(sync~spin) Zettel: ${progress}`, tooltip, ready: false, busy: true, problem: false };
}

/** One line per vault: "notes: ready, 45 cards, 120 chunks". */
export function vaultLine(v: VaultStatus): string {
  const parts = [`${basename(v.root)}: ${phaseText(v)}`, `${cardsOf(v)} cards`];
  if (v.chunks !== undefined) parts.push(`${v.chunks} chunks`);
  if (v.chunks_waiting_for_vectors) parts.push(`${v.chunks_waiting_for_vectors} chunks waiting for vectors`);
  let line = parts.join(", ");
  if (v.note) line += ` (${v.note})`;
  return line;
}

/** The details of a vault for "Show Status" (one entry per line). */
export function vaultDetails(v: VaultStatus): string[] {
  const out = [
    `folder: ${v.root}`,
    `phase: ${v.phase}${v.note ? ` (${v.note})` : ""}`,
    `cards: ${cardsOf(v)}${v.chunks !== undefined ? `, chunks: ${v.chunks}` : ""}`,
  ];
  if (v.cards_embedded !== undefined) out.push(`cards with vectors: ${v.cards_embedded}`);
  if (v.legs_ready?.length) out.push(`search legs ready: ${v.legs_ready.join(", ")}`);
  if (v.languages && Object.keys(v.languages).length) {
    const langs = Object.entries(v.languages).map(([code, n]) => `${code} ${n}`);
    out.push(`languages: ${langs.join(", ")}`);
  }
  if (v.multilingual_scope) {
    const waiting = v.cards_waiting_for_multilingual
      ? `, ${v.cards_waiting_for_multilingual} cards waiting`
      : "";
    const done = v.cards_embedded_multilingual ?? 0;
    const reason = v.multilingual_off_reason ? ` (${v.multilingual_off_reason})` : "";
    out.push(`multilingual: ${v.multilingual_scope}${reason}, ${done} cards embedded${waiting}`);
  }
  if (v.suggestion_weights) out.push(`suggestion weights: ${v.suggestion_weights}`);
  if (v.model) out.push(`model: ${v.model}`);
  if (v.backend) out.push(`backend: ${v.backend}`);
  if (v.index_dir) out.push(`index: ${v.index_dir}`);
  const skipped = Object.keys(v.skipped ?? {}).length;
  if (skipped) out.push(`skipped files: ${skipped}`);
  if (v.problems.length) out.push(`problems: ${v.problems.length}`);
  return out;
}

/** One entry of "Show Status" about Ollama: a codicon label, a description and a detail line. */
export interface OllamaEntry {
  label: string;
  description: string;
  detail: string;
}

/**
 * Ollama's state for "Show Status" (`zettel.status {ollama: true}`): reachable or not, at which
 * host, and whether the chat and embedding models are pulled. Ollama is optional: not
 * reachable is information (Ask and the LLM search steps need it), not an error of the index.
 */
export function ollamaEntry(o: OllamaStatus | undefined): OllamaEntry {
  if (!o) {
    return {
      label: "$(circle-slash) Ollama: unknown",
      description: "",
      detail: "The server did not report Ollama's state (an older zettel-lsp?).",
    };
  }
  const host = o.host || "the default host";
  if (!o.reachable) {
    return {
      label: "$(circle-slash) Ollama: not reachable",
      description: host,
      detail:
        (o.message ?? `Ollama at ${host} is not reachable`) +
        ". Only Ask and the optional LLM search steps need it (zettel.ollamaHost).",
    };
  }
  const have = (ok: boolean) => (ok ? "available" : "not pulled");
  const models = o.models.length
    ? `models: ${o.models.join(", ")}`
    : "no models pulled";
  const detail = [
    `chat model ${o.chat_model}: ${have(o.chat_model_available)}`,
    `embedding model ${o.embed_model}: ${have(o.embed_model_available)}`,
    models,
  ];
  if (o.message) detail.unshift(o.message);
  return {
    label: o.chat_model_available ? "$(check) Ollama: reachable" : "$(warning) Ollama: reachable",
    description: host,
    detail: detail.join(" · "),
  };
}
