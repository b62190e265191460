#!/usr/bin/env bash
# End-to-end test of the packaged extension in real VS Code: code-server on 127.0.0.1 with the
# .vsix installed and a temporary copy of examples/vault open, driven by Debian's Chromium
# through playwright-core (test/e2e.mjs). First it installs the server the way a new user does:
# no zettel-lsp on code-server's PATH and no zettel.server.command, so the extension offers
# "Install zettel-lsp"; the test clicks it and waits while the extension makes its own virtual
# environment and pip installs the wheel bundled in the .vsix (dependencies from PyPI: a few
# minutes the first time) (screenshots vscode-install-offer.png, install-*.png; a Python older
# than 3.11 in zettel.server.python is refused first). It searches, opens the top result and
# takes a screenshot; it asks a question (Ollama is the repository's stand-in, tests/llm/stub.py,
# served by test/ollama_stub.py) and takes another. It completes a `[[link]]` in a note
# (completion-popup.png, the open list; completion.png) and renames a card with F2 on its title
# (rename.png: the file moves, links follow). Then it breaks and restores the server command.
# Then the sidebar's layout: a generated vault with long folder paths (every visible title at
# least 12 characters or complete, folders shortened from the left, excerpts without link or
# table syntax, the Search view's share of the sidebar, compact mode), and the big vaults of
# ZETTEL_E2E_VAULTS, each in a dark and a light theme. Last, an extension update: the installed
# server is made to look like another build and the extension upgrades it (install-upgrade.png).
#
#   bash editors/vscode/test/e2e.sh                   # screenshots in $ZETTEL_E2E_DIR/shots only
#   bash editors/vscode/test/e2e.sh --update-images   # also copies them to docs/images (tracked)
#
# Screenshots go to $ZETTEL_E2E_DIR/shots/ (kept after the run, to be looked at). The tracked
# docs/images/*.png are rewritten only with --update-images (or ZETTEL_E2E_UPDATE_IMAGES=1), and
# only when the run passed.
#
# Environment:
#   ZETTEL_LSP_COMMAND  a server to use instead of installing one through the extension (the
#                       install step is skipped). Unset: the extension installs its own; the
#                       big vaults are still indexed beforehand with <repo>/.venv/bin/zettel-lsp
#                       (else /tmp/venv/bin/zettel-lsp, else zettel-lsp on PATH) where there is one
#   ZETTEL_E2E_DIR      cache for Node 24 and code-server (default ~/.cache/zettel-lsp-e2e;
#                       ~700 MB, first run ~3 min, later runs reuse it)
#   ZETTEL_E2E_PYTHON   the Python that serves the Ollama stand-in (default: the server's venv
#                       Python next to it, else python3; only the standard library is needed)
#   ZETTEL_E2E_KEEP=1   keep the run folder (logs, user data) for a look afterwards
#   ZETTEL_E2E_UPDATE_IMAGES=1   as --update-images
#   ZETTEL_E2E_VAULTS   big vaults to look at, separated by ':' (default: zettelkasten-13k and
#                       vaultofknowledge under <repo>/../shared/data/vaults, where they exist;
#                       "none" skips them). Indexed once into $ZETTEL_E2E_DIR/cache with the
#                       CLI before the run (13k cards: ~5 min the first time on 2 free
#                       cores, ~2 s after); at most ZETTEL_E2E_INDEX_SECONDS (900) per vault,
#                       then the run goes on with partial results (the server embeds the rest).
#
# Needs root (or the packages already installed) for: chromium, and the headers code-server's
# native modules build against (libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev
# pkg-config). Exits non-zero on any failure.
set -euo pipefail

update_images="${ZETTEL_E2E_UPDATE_IMAGES:-}"
for arg in "$@"; do
  case "$arg" in
    --update-images) update_images=1 ;;
    -h|--help) sed -n '2,47p' "$0"; exit 0 ;;
    *) echo "e2e: unknown argument: $arg (see --help)" >&2; exit 2 ;;
  esac
done

ext_dir="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$ext_dir/../.." && pwd)"
WORK="${ZETTEL_E2E_DIR:-$HOME/.cache/zettel-lsp-e2e}"
CODE_SERVER_VERSION="4.139.1"
NODE_VERSION="24"
t0=$(date +%s)

step() { echo "== e2e [$(($(date +%s) - t0))s]: $*" >&2; }
die() { echo "e2e: FAILED: $*" >&2; exit 1; }

# ------------------------------------------------------------------ the server
# install=1: the extension installs its own server ("Install zettel-lsp"); $server, if any, only
# indexes the big vaults beforehand.
server="${ZETTEL_LSP_COMMAND:-}"
install=1
if [ -n "$server" ]; then
  install=0
  [ -x "$server" ] || die "ZETTEL_LSP_COMMAND: $server is not an executable"
else
  for cand in "$repo/.venv/bin/zettel-lsp" /tmp/venv/bin/zettel-lsp "$(command -v zettel-lsp || true)"; do
    if [ -n "$cand" ] && [ -x "$cand" ]; then server="$cand"; break; fi
  done
fi
if [ "$install" = 1 ]; then
  step "server: installed by the extension ('Install zettel-lsp')${server:+; the CLI for the big vaults: $server}"
else
  step "server: $server ($("$server" --version 2>&1))"
fi
# code-server's PATH: without any folder that holds a zettel-lsp (a new user's machine).
cs_path=""
IFS=':' read -r -a path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
  [ "$install" = 1 ] && [ -x "$d/zettel-lsp" ] && continue
  cs_path="${cs_path:+$cs_path:}$d"
done
if [ "$install" = 1 ] && (cd / && PATH="$cs_path" python3 -c 'import zettel_lsp' 2>/dev/null); then
  die "python3 on PATH has zettel_lsp installed: the extension would start it instead of offering to install (set ZETTEL_LSP_COMMAND to test with a given server)"
fi

# ------------------------------------------------------------------ system packages
need_pkgs=()
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
for p in libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if [ "${#need_pkgs[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || die "missing ${need_pkgs[*]} and no apt-get"
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo -n true 2>/dev/null || die "missing ${need_pkgs[*]}: install them (needs root)"
    SUDO=(sudo -n)
  fi
  step "apt-get install ${need_pkgs[*]}"
  "${SUDO[@]}" apt-get update -qq >/dev/null
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
CHROMIUM="$(command -v chromium)"

# ------------------------------------------------------------------ Node 24 and code-server
mkdir -p "$WORK"
node24="$WORK/node24/node_modules/node/bin/node"
if [ ! -x "$node24" ] || ! "$node24" --version | grep -q "^v$NODE_VERSION\."; then
  step "installing Node $NODE_VERSION (npm package 'node') into $WORK/node24"
  rm -rf "$WORK/node24" && mkdir -p "$WORK/node24"
  echo '{"private": true}' > "$WORK/node24/package.json"
  (cd "$WORK/node24" && npm install --no-audit --no-fund --loglevel=error "node@$NODE_VERSION" >/dev/null)
  [ -x "$node24" ] || die "Node $NODE_VERSION did not install"
fi
node24_bin="$(dirname "$node24")"
node24_version="$("$node24" --version)"

cs_root="$WORK/code-server/node_modules/code-server"
cs_stamp="$cs_root/.zettel-e2e-installed"
if [ ! -f "$cs_stamp" ]; then
  step "installing code-server $CODE_SERVER_VERSION with Node $node24_version (~2 min)"
  rm -rf "$WORK/code-server" && mkdir -p "$WORK/code-server"
  echo '{"private": true}' > "$WORK/code-server/package.json"
  (cd "$WORK/code-server" && PATH="$node24_bin:$PATH" \
    npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION" >/dev/null)
  # npm 11 does not run install scripts by default: run code-server's own, with the user agent
  # it reads the Node version from.
  (cd "$cs_root" && PATH="$node24_bin:$PATH" \
    npm_config_user_agent="npm/11 node/$node24_version linux x64" sh ./postinstall.sh >"$WORK/postinstall.log" 2>&1) \
    || { tail -n 30 "$WORK/postinstall.log" >&2; die "code-server's postinstall failed"; }
  touch "$cs_stamp"
fi
# XDG_DATA_HOME: code-server keeps logs and a heartbeat file there (not in --user-data-dir).
code_server=(env XDG_DATA_HOME="$WORK/xdg-data" "$node24" "$cs_root/out/node/entry.js")
# (Not `--version`: without --config, code-server writes ~/.config/code-server/config.yaml.)
step "code-server $("$node24" -p "require('$cs_root/package.json').version")"

# ------------------------------------------------------------------ the extension
cd "$ext_dir"
if [ ! -d node_modules ] || [ ! -x node_modules/.bin/vsce ]; then
  step "npm ci (editors/vscode)"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
step "packaging the extension"
rm -f zettel.vsix
npx --no-install vsce package --no-dependencies --out zettel.vsix >"$WORK/vsce.log" 2>&1 \
  || { cat "$WORK/vsce.log" >&2; die "vsce package failed"; }

# ------------------------------------------------------------------ a fresh VS Code profile
run="$(mktemp -d "${TMPDIR:-/tmp}/zettel-e2e.XXXXXX")"
cs_pid=""
stub_pid=""
cache="$WORK/cache"  # zettel.cacheDir: models and indexes, kept between runs (the big vaults')
cleanup() {
  local rc=$?
  if [ -n "$stub_pid" ] && kill -0 "$stub_pid" 2>/dev/null; then
    kill -TERM "$stub_pid" 2>/dev/null || true
  fi
  if [ -n "$cs_pid" ] && kill -0 "$cs_pid" 2>/dev/null; then
    # code-server runs in its own process group (setsid): stop it with its children (the
    # extension host, the language server). Only that group, and only if it is its own.
    local target="$cs_pid"
    [ "$(ps -o pgid= -p "$cs_pid" | tr -d ' ')" = "$cs_pid" ] && target="-$cs_pid"
    kill -TERM -- "$target" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$cs_pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "$target" 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ]; then
    echo "---- code-server log (last 40 lines) ----" >&2
    tail -n 40 "$run/code-server.log" >&2 2>/dev/null || true
    for f in "$run"/user-data/logs/*/exthost*/output_logging_*/*Zettel*.log; do
      [ -f "$f" ] && { echo "---- $f ----" >&2; tail -n 40 "$f" >&2; }
    done
  fi
  # The indexes of this run's own vaults (fresh copies each time) are not worth keeping.
  for v in "$run/vault" "$run/long-paths"; do
    rm -rf "$cache/indexes/$(basename "$v")-"* 2>/dev/null || true
  done
  if [ "${ZETTEL_E2E_KEEP:-}" = "1" ] || [ "$rc" -ne 0 ]; then
    echo "e2e: run folder kept: $run" >&2
  else
    rm -rf "$run"
  fi
}
trap cleanup EXIT

# ------------------------------------------------------------------ Ollama's stand-in
python="${ZETTEL_E2E_PYTHON:-}"
if [ -z "$python" ]; then
  [ -n "$server" ] && python="$(dirname "$server")/python"
  [ -n "$python" ] && [ -x "$python" ] || python="$(command -v python3 || true)"
fi
[ -n "$python" ] && [ -x "$python" ] || die "no Python for the Ollama stand-in (set ZETTEL_E2E_PYTHON)"
# Pieces of an answer 0.15 s apart: slow enough to see it stream and to stop it.
"$python" "$ext_dir/test/ollama_stub.py" --token-delay 0.15 >"$run/ollama-stub.out" 2>"$run/ollama-stub.log" &
stub_pid=$!
ollama_url=""
for _ in $(seq 1 100); do
  ollama_url="$(head -n 1 "$run/ollama-stub.out" 2>/dev/null || true)"
  [ -n "$ollama_url" ] && break
  kill -0 "$stub_pid" 2>/dev/null || { cat "$run/ollama-stub.log" >&2; die "the Ollama stand-in exited"; }
  sleep 0.1
done
[ -n "$ollama_url" ] || die "the Ollama stand-in did not print its URL"
step "Ollama stand-in (tests/llm/stub.py) at $ollama_url"

# ------------------------------------------------------------------ the big vaults (optional)
mkdir -p "$cache"
index_seconds="${ZETTEL_E2E_INDEX_SECONDS:-900}"
extra_vaults=()
if [ "${ZETTEL_E2E_VAULTS:-}" != "none" ]; then
  if [ -n "${ZETTEL_E2E_VAULTS:-}" ]; then
    IFS=':' read -r -a extra_vaults <<<"$ZETTEL_E2E_VAULTS"
  else
    for name in zettelkasten-13k vaultofknowledge; do
      cand="$repo/../shared/data/vaults/$name"
      [ -d "$cand" ] && extra_vaults+=("$(cd "$cand" && pwd)")
    done
  fi
fi
for v in "${extra_vaults[@]}"; do
  [ -d "$v" ] || die "ZETTEL_E2E_VAULTS: no folder $v"
  if [ -z "$server" ]; then
    step "$(basename "$v"): no zettel-lsp here to index it beforehand; the server indexes it in the run"
    continue
  fi
  step "indexing $(basename "$v") into $cache (the CLI, at most ${index_seconds}s; quick when it is current)"
  rc=0
  timeout -s INT "$index_seconds" "$server" index "$v" --cache-dir "$cache" >"$run/index-$(basename "$v").log" 2>&1 || rc=$?
  tail -n 1 "$run/index-$(basename "$v").log" >&2
  # Interrupted (Ctrl-C keeps what is embedded): the server goes on, its results are partial.
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 130 ]; then
    step "$(basename "$v"): not fully embedded yet; the next run goes on from here"
  elif [ "$rc" -ne 0 ]; then
    tail -n 20 "$run/index-$(basename "$v").log" >&2; die "indexing $v failed"
  fi
done

vault="$run/vault"
cp -r "$repo/examples/vault" "$vault"
# The vault's own settings point the server at the stand-in (later steps rewrite this file).
mkdir -p "$vault/.vscode"
printf '{\n  "zettel.ollamaHost": "%s"\n}\n' "$ollama_url" > "$vault/.vscode/settings.json"
mkdir -p "$run/user-data/User" "$run/extensions"
"$node24" - "$run/user-data/User/settings.json" "$install" "$server" "$cache" <<'EOF'
const [file, install, server, cache] = process.argv.slice(2);
const settings = {
  // Installing: none, as on a new user's machine (zettel-lsp is not on code-server's PATH).
  ...(install === "1" ? {} : { "zettel.server.command": [server] }),
  // Not zettel.indexDir (one vault only): the run opens several vaults.
  "zettel.cacheDir": cache,
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.colorTheme": "Dark Modern",
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": "off",
  "extensions.ignoreRecommendations": true,
  "chat.disableAIFeatures": true,
  "git.enabled": false,
  "files.autoSave": "off",
  "window.restoreWindows": "none",
};
require("node:fs").writeFileSync(file, JSON.stringify(settings, null, 2));
EOF
printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' > "$run/config.yaml"

step "installing zettel.vsix into code-server"
"${code_server[@]}" --config "$run/config.yaml" --user-data-dir "$run/user-data" \
  --extensions-dir "$run/extensions" --install-extension "$ext_dir/zettel.vsix" >"$run/install.log" 2>&1 \
  || { cat "$run/install.log" >&2; die "code-server --install-extension failed"; }
ls "$run/extensions" | grep -q "^zettel-lsp.zettel-" || { cat "$run/install.log" >&2; die "the extension is not installed"; }

port="$("$node24" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
step "starting code-server on 127.0.0.1:$port"
# No extension gallery (there is no network here; this also keeps it from trying).
EXTENSIONS_GALLERY='{"serviceUrl": "http://127.0.0.1:9/gallery"}' PATH="$cs_path" \
  setsid "${code_server[@]}" --config "$run/config.yaml" --bind-addr "127.0.0.1:$port" --auth none \
  --user-data-dir "$run/user-data" --extensions-dir "$run/extensions" \
  --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  "$vault" >"$run/code-server.log" 2>&1 &
cs_pid=$!
for _ in $(seq 1 120); do
  if "$node24" -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' \
    "http://127.0.0.1:$port/healthz" 2>/dev/null; then
    break
  fi
  kill -0 "$cs_pid" 2>/dev/null || die "code-server exited"
  sleep 0.5
done

# ------------------------------------------------------------------ drive it
step "driving VS Code in headless Chromium (test/e2e.mjs)"
shots="$WORK/shots"
rm -rf "$shots" && mkdir -p "$shots"
extra_list="$(IFS=':'; echo "${extra_vaults[*]:-}")"
# XDG_CONFIG_HOME: Chromium's crash-report folder goes to the run folder, not ~/.config.
XDG_CONFIG_HOME="$run/xdg-config" \
E2E_URL="http://127.0.0.1:$port/?folder=$vault" \
E2E_CHROMIUM="$CHROMIUM" \
E2E_SCREENSHOT="$shots/vscode-search.png" \
E2E_ASK_SCREENSHOT="$shots/vscode-ask.png" \
E2E_SHOTS="$shots" \
E2E_LONG_PATHS_VAULT="$run/long-paths" \
E2E_EXTRA_VAULTS="$extra_list" \
E2E_OLLAMA_URL="$ollama_url" \
E2E_ARTIFACTS="$run" \
E2E_VAULT="$vault" \
E2E_INSTALL="$install" \
E2E_CODE_SERVER_PID="$cs_pid" \
  node test/e2e.mjs

if [ "$update_images" = "1" ]; then
  mkdir -p "$repo/docs/images"
  cp "$shots"/vscode-*.png "$repo/docs/images/"
  step "PASSED in $(($(date +%s) - t0))s; docs/images updated from $shots: $(cd "$shots" && ls vscode-*.png | tr '\n' ' ')"
else
  step "PASSED in $(($(date +%s) - t0))s; screenshots in $shots (docs/images untouched; --update-images copies them)"
fi
