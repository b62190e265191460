"""No regular expression in the project backtracks super-linearly (issue #12: ~30 nested quote
markers made the fence pattern take minutes and hung the server).

Every pattern of the package is covered without touching this file: module-level compiled
patterns are found by importing the modules that use ``re``, patterns written inline in a call
(``re.sub(r"...", ...)``) by reading the source, and a pattern built at run time inside a function
must have its builder listed in ``RUNTIME_BUILDERS`` (a test fails until it is). Each pattern is
timed in a child process on adversarial inputs of growing size: a prefix, then a unit repeated n
and 8n times, then a suffix. Linear work grows ~8x; a case fails when it grows more than 32x and
takes more than a floor of absolute time (quadratic: ~64x, exponential: never ends), confirmed
by re-timing the case (best of several runs) so a busy machine does not make it flake. Ratios,
never absolute limits; the child's timeout turns a hang into a failure. Parsing and chunking a
whole card are timed the same way.
"""

from __future__ import annotations

import ast
import importlib
import json
import random
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

import zettel_lsp

PACKAGE = Path(zettel_lsp.__file__).parent
RE_CALLS = frozenset("compile search match fullmatch sub subn findall finditer split".split())
# "module.function" -> a function returning the patterns that function builds at run time. Empty:
# every pattern is a literal or module-level (the per-fence closing pattern became a scan).


def _typed_names() -> list[re.Pattern[str] | re.Pattern[bytes]]:
    """What completion builds from the typed text: in-order letters, and an escaped literal."""
    from zettel_lsp.search.complete import _subsequence

    typed = ["ab", "a[", "zk#", "a b", "[[x", "a\\b", "aaa"]
    return [_subsequence(t) for t in typed]


def _escaped_names() -> list[re.Pattern[str] | re.Pattern[bytes]]:
    return [re.compile(re.escape(t)) for t in ("ab", "[[a", "a.b*", "(x)")]


def _short_name_patterns() -> list[re.Pattern[str] | re.Pattern[bytes]]:
    """The short-names leg's pattern over a vault's titles and aliases under 3 characters
    (escaped, with symbols and a name that is a prefix of another: "F" and "F*")."""
    from zettel_lsp.graph.link_graph import LinkGraph
    from zettel_lsp.notes.parser import parse_card
    from zettel_lsp.search.suggest.names import short_names

    names = ["OS", "C", "F", "F*", "Go", "5G", "C#", "A+", "(A"]
    cards = [parse_card(f"n{i}.md", f"---\naliases: ['{n}']\n---\nx") for i, n in enumerate(names)]
    pattern = short_names(LinkGraph.build(cards)).pattern
    assert pattern is not None
    return [pattern]


RUNTIME_BUILDERS: dict[str, Callable[[], list[re.Pattern[str] | re.Pattern[bytes]]]] = {
    "zettel_lsp.search.complete._subsequence": _typed_names,
    "zettel_lsp.search.complete.rank_cards": _escaped_names,
    "zettel_lsp.search.suggest.names._make_short_names": _short_name_patterns,
}

UNITS = ["> ", " >", "#", " #", "#1", "`", "[[", "[", "](", "(", "\\", " ", "\t", "-", "a", "1",
         ".", "*", "_", "|", ":", "<!--", "~", "---\n", "\n", "a ", "[a", "> \n"]  # fmt: skip
PREFIXES = ["", "# a", "[[", "[x](", "#", "```", "a."]
SUFFIXES = ["", "x", "\n"]
SMALL, GROWTH, MAX_RATIO, FLOOR_S = 400, 8, 32.0, 0.02
HANG_S = 60  # a child taking this long is backtracking exponentially


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def _flags(call: ast.Call) -> int:
    """The ``re.X`` flags named in a call's other arguments, or'ed."""
    flags = 0
    for arg in [*call.args[1:], *(k.value for k in call.keywords)]:
        for node in ast.walk(arg):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "re"
                and node.attr.isupper()
            ):
                flags |= int(getattr(re, node.attr))
    return flags


def _source_patterns() -> tuple[dict[str, tuple[str | bytes, int]], list[str], list[str]]:
    """Literal patterns of ``re`` calls (id -> (pattern, flags)), the modules that call ``re``,
    and the non-literal calls inside functions ("module.function:line")."""
    literal: dict[str, tuple[str | bytes, int]] = {}
    modules: list[str] = []
    runtime: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_function: dict[int, str] = {}
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                for node in ast.walk(fn):
                    in_function.setdefault(id(node), getattr(fn, "name", "<lambda>"))
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in RE_CALLS
                and node.args
            ):
                continue
            if module not in modules:
                modules.append(module)
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str | bytes):
                literal[f"{module}:{node.lineno}"] = (first.value, _flags(node))
            elif id(node) in in_function:
                runtime.append(f"{module}.{in_function[id(node)]}:{node.lineno}")
    return literal, modules, runtime


def _all_patterns() -> dict[str, tuple[str | bytes, int]]:
    literal, modules, _ = _source_patterns()
    found: dict[str, tuple[str | bytes, int]] = {}
    seen: set[tuple[str | bytes, int]] = set()
    for module in modules:
        for name, value in sorted(vars(importlib.import_module(module)).items()):
            if isinstance(value, re.Pattern):
                key = (value.pattern, value.flags)
                if key not in seen:
                    seen.add(key)
                    found[f"{module}.{name}"] = key
    for builder_name, builder in RUNTIME_BUILDERS.items():
        for i, p in enumerate(builder()):
            if (p.pattern, p.flags) not in seen:
                seen.add((p.pattern, p.flags))
                found[f"{builder_name}[{i}]"] = (p.pattern, p.flags)
    for where, (pattern, flags) in literal.items():
        # a literal compiled at module level has the flags its Pattern reports (plus UNICODE)
        compiled = re.compile(pattern, flags)
        key = (compiled.pattern, compiled.flags)
        if key not in seen:
            seen.add(key)
            found[where] = key
    return found


PATTERNS = _all_patterns()

_MEASURE = textwrap.dedent(
    """
    import json, re, sys, time
    spec = json.loads(sys.stdin.read())
    source = spec["pattern"].encode("latin-1") if spec["bytes"] else spec["pattern"]
    p = re.compile(source, spec["flags"])
    small, growth, floor, max_ratio = spec["small"], spec["growth"], spec["floor"], spec["ratio"]

    def once(s):
        t = time.perf_counter()
        p.findall(s)  # a match attempt at every position (covers match and search)
        p.fullmatch(s)  # forces backtracking to the end of the input
        return time.perf_counter() - t

    def best(s, k):
        return min(once(s) for _ in range(k))

    def bad(t1, t2):
        return t2 > floor and t2 / max(t1, 1e-6) > max_ratio

    slow = []
    for unit in spec["units"]:
        for pre in spec["prefixes"]:
            for suf in spec["suffixes"]:
                a = pre + unit * small + suf
                b = pre + unit * small * growth + suf
                if spec["bytes"]:
                    a, b = a.encode("utf-8"), b.encode("utf-8")
                t1, t2 = once(a), once(b)
                if bad(t1, t2):  # confirm: the best of several runs, so load spikes do not count
                    t1, t2 = best(a, 5), best(b, 3)
                    if bad(t1, t2):
                        slow.append([pre, unit, suf, round(t1, 5), round(t2, 5)])
    print(json.dumps(slow))
    """
)


def test_every_pattern_is_collected() -> None:
    """The collection sees the patterns that hung or were quadratic, inline ones included."""
    assert "zettel_lsp.notes.parser.TAG" in PATTERNS
    assert "zettel_lsp.notes.markdown_links._DEST_RUN" in PATTERNS
    assert "zettel_lsp.notes.masking._INLINE_OR_COMMENT" in PATTERNS
    assert any(where.startswith("zettel_lsp.server.features.hover:") for where in PATTERNS)
    assert "zettel_lsp.notes.anchors._NOT_WORD" in PATTERNS
    assert len(PATTERNS) >= 30


def test_patterns_built_at_run_time_have_a_listed_builder() -> None:
    _, _, runtime = _source_patterns()
    unlisted = [r for r in runtime if r.rsplit(":", 1)[0] not in RUNTIME_BUILDERS]
    assert unlisted == [], f"add these pattern builders to RUNTIME_BUILDERS: {unlisted}"


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_pattern_is_linear_on_adversarial_input(name: str) -> None:
    pattern, flags = PATTERNS[name]
    spec = {
        "pattern": pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern,
        "bytes": isinstance(pattern, bytes),
        "flags": flags,
        "units": UNITS,
        "prefixes": PREFIXES,
        "suffixes": SUFFIXES,
        "small": SMALL,
        "growth": GROWTH,
        "floor": FLOOR_S,
        "ratio": MAX_RATIO,
    }
    try:
        out = subprocess.run(
            [sys.executable, "-c", _MEASURE],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name} did not finish on adversarial input (exponential backtracking)")
    assert out.returncode == 0, out.stderr
    slow = json.loads(out.stdout)
    assert slow == [], f"{name} is super-linear on (prefix, unit, suffix, t(n), t(8n)): {slow}"


_PARSE = textwrap.dedent(
    """
    import json, sys, time
    from zettel_lsp.index.chunker import chunk_cards
    from zettel_lsp.notes.parser import parse_card
    unit, small, growth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    words = lambda texts: [len(t.split()) for t in texts]

    def once(n):
        text = unit * n + "x\\n"
        t = time.perf_counter()
        card = parse_card("adversarial.md", text, budget_s=3600.0)
        chunk_cards([card], words)
        return time.perf_counter() - t

    t1, t2 = once(small), once(small * growth)
    if t2 / t1 > float(sys.argv[4]):  # confirm with the best of 3 (load spikes)
        t1 = min(once(small) for _ in range(3))
        t2 = min(once(small * growth) for _ in range(3))
    print(json.dumps([t1, t2]))
    """
)

NOTES = [
    "> ",  # the reported hang: nested quote markers on a line that is not a fence
    "> > ```\n",
    "```\n" + "> " * 30 + "x\n",  # inside an open fence: the closing-fence pattern hung
    "# a" + " " * 50,
    "#1",
    "[[a",
    "[a](",
    "`` ` ",
    "<!-- ",
    "~~~ \n> ",
    "- [ ] #tag ^id\n",
    "1. [x](a(b) ",
    "[a](\\)",  # a link's destination ran on from every "[a](" (escaped ")" and "(\\)" groups)
    "x\\[",  # escaped "[": a link text ran on from every one of them
    "# [a](\\)",  # the same in an opening heading (its text is turned into a title)
    "a b. c\n",  # one long paragraph of sentences: the chunker counted lines from 0 each time
    "```\n",  # thousands of fences: the chunker split the card's text once per chunk
]


@pytest.mark.parametrize("unit", NOTES)
def test_parsing_and_chunking_a_card_is_linear(unit: str) -> None:
    try:
        out = subprocess.run(
            [sys.executable, "-c", _PARSE, unit, "500", str(GROWTH), str(MAX_RATIO)],
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"parsing {unit!r} repeated did not finish (backtracking)")
    assert out.returncode == 0, out.stderr
    t1, t2 = json.loads(out.stdout)
    assert t2 < FLOOR_S * 5 or t2 / t1 < MAX_RATIO, (unit, t1, t2)


@pytest.mark.parametrize(
    "text",
    [
        "> " * 30 + "x\n",  # the opening-fence pattern (before the fix: over a minute)
        "```\n" + "> " * 30 + "x\n",  # the closing-fence pattern of an open fence
        "> " * 30 + "```\ncode\n" + "> " * 30 + "x\n```\n",
    ],
)
def test_thirty_nested_quote_markers_parse_at_once(text: str) -> None:
    """The input from the issue, in a child process so a hang fails instead of stalling."""
    code = (
        "import sys\n"
        "from zettel_lsp.notes.parser import parse_card\n"
        "card = parse_card('q.md', sys.stdin.read())\n"
        "print(len(card.masked), len(card.problems))"
    )
    try:
        out = subprocess.run(
            [sys.executable, "-c", code], input=text, capture_output=True, text=True, timeout=10
        )
    except subprocess.TimeoutExpired:
        pytest.fail("parsing 30 nested quote markers did not finish in 10 s (backtracking)")
    assert out.returncode == 0, out.stderr
    masked, problems = map(int, out.stdout.split())
    assert (masked >= 1) == ("```" in text) and problems == 0


def test_a_card_over_its_parse_budget_is_plain_text_with_a_warning() -> None:
    from zettel_lsp.notes.parser import parse_card

    text = "# Heading\nSee [[Other]] and #tag.\n"
    full = parse_card("notes/Budget card.md", text)
    assert full.links and full.tags and full.problems == []
    plain = parse_card("notes/Budget card.md", text, budget_s=0.0)
    assert plain.title == "Budget card" and plain.text == text
    assert (plain.links, plain.tags, plain.headings) == ([], [], [])
    assert plain.problems == [
        "notes/Budget card.md: parsing took longer than 0 s; indexed as plain text"
    ]


def test_the_budget_is_checked_between_parsing_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow step (here: masking, made to spin) sends the card to plain text at the next check.
    The budget is the parsing thread's CPU time, so a sleep would not count."""
    import time

    from zettel_lsp.notes import parser
    from zettel_lsp.notes.masking import non_prose_spans as real

    def slow(text: str, body_start: int = 0) -> list[tuple[int, int]]:
        until = time.thread_time() + 0.2
        while time.thread_time() < until:
            pass
        return real(text, body_start)

    monkeypatch.setattr(parser, "non_prose_spans", slow)
    text = "See [[Other]].\n"
    assert parser.parse_card("Slow.md", text, budget_s=60.0).links
    card = parser.parse_card("Slow.md", text, budget_s=0.1)
    assert card.links == [] and card.title == "Slow"
    assert card.problems == ["Slow.md: parsing took longer than 0.1 s; indexed as plain text"]


def _random_markdown(rng: random.Random, alphabet: str, prefixes: list[str]) -> str:
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
    return rng.choice(prefixes) + text if rng.random() < 0.5 else text


def test_the_markdown_link_scan_finds_what_the_old_pattern_found() -> None:
    """The parser's scan equals ``finditer`` of the pattern it replaced (which was quadratic)."""
    from zettel_lsp.notes.markdown_links import markdown_links

    old = re.compile(
        r"(!?)\[((?:[^\[\]\n\\]|\\.|\[[^\[\]\n]*\])*)\]"
        r"\([ \t]*(?:<([^<>\n]*)>|((?:[^\s()\\<]|\\.|\([^\s()]*\))+))"
        r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"
    )
    rng = random.Random(12)
    prefixes = ["[a](", "![x](", "[a](<", '[t](b "', "[[x]](", "[a\\]b](c)"]
    for _ in range(20_000):
        text = _random_markdown(rng, "[]()<>!\\\n \t\"'ab#.\u00a0", prefixes)
        expected = [
            (m.start(), m.end(), bool(m.group(1)), m.group(2), m.group(3) or m.group(4) or "")
            for m in old.finditer(text)
        ]
        found = [(k.start, k.end, k.embed, k.text, k.destination) for k in markdown_links(text)]
        assert found == expected, text
