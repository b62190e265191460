"""Generate a large synthetic vault from real material, for scale benchmarks (issue #18).

    python benchmarks/make_vault.py N OUT [--seed 0] [--shared DIR] [--big-notes K]

**What.** ``N`` Markdown cards written under ``OUT`` (which must not exist or be empty), plus a
small judged query set ``<OUT name>.judged.json`` written *beside* ``OUT`` (the vault holds only
notes). One summary line goes to stdout: cards, links, the largest backlink count, megabytes
written and seconds.

**Why.** The real vaults in ``../shared`` stop at 13k notes; the index, the link graph and search
must be timed at 25k, 50k and 100k cards. Copying real notes would repeat titles and text;
random words would not look like notes. So the generator recombines real material: sentences,
title words, headings, link labels and tags from the vaults in ``../shared/data/vaults`` and
sentences from the IR collections in ``../shared/data/ir`` (read at run time, never copied into
the project; some of it is for evaluation use only, so neither are the generated vaults).

**How.**

1. *Measure* (:func:`load_sources`): every real note (sorted paths; Excalidraw drawings left
   out) becomes a template: its folder, the number of words of its title and of its body, its
   wikilinks, headings and inline tags, and whether it has frontmatter. Prose is cleaned (links
   flattened to their text, code, tables, tags and markup dropped) and split into sentences.
2. *Plan* (:func:`plan_cards`): card ``i`` copies the shape of a template drawn by its own
   ``Random(f"{seed}:plan:{i}")`` among all real notes (each vault weighs by its size, so
   zettelkasten-13k's shapes dominate): the joint distribution of title length, folder depth,
   links per card (a few for most cards, hundreds for index notes) and card length is the real
   one. Titles are real title words (weighted by use; no function word first or last) plus a
   disambiguating word, then a number, until unique case-insensitively. Folders tile the real
   trees: the ``c``-th copy of a real vault gets its own renamed subfolders, while top-level
   folders are shared, so depth and fan-out stay those of the real vaults. The plan is
   prefix-stable: card ``i`` has the same title, folder and template at every ``N > i``.
3. *Link* (:func:`plan_links`): each wikilink picks a uniformly random card with probability
   ``UNIFORM_SHARE`` and otherwise the target of an earlier link (preferential attachment), so
   a few hubs collect hundreds of backlinks. Some links carry ``|label`` or ``#Heading`` (a
   heading of the target), at the rates measured in the real vaults. Cards also mention other
   cards' titles in plain text (unlinked mentions); cards with frontmatter get ``aliases`` and
   ``tags``; inline ``#tags`` and ``## headings`` follow the template.
4. *Write* (:func:`card_text`): one card at a time (streamed), from ``Random(f"{seed}:card:{i}")``.
   ``N // 20000 + 1`` cards (``--big-notes``) are ~1 MB of prose with headings.
5. *Judge* (:func:`plan_judged`): ``PLANTED`` sentences from the IR collections are removed from
   the sentence pool and each planted in one card; its query is 3-6 of its content words (the two
   rarest, then random ones, in sentence order). ``TITLE_QUERIES`` more queries are a card's
   exact title. Judged cards are drawn by their own ``Random`` among the first
   ``min(N, JUDGED_SPAN)`` cards, so every ``N >= JUDGED_SPAN`` (13k, 25k, 50k, 100k) has the
   same queries on the same cards in a bigger haystack.

Everything depends only on ``N``, the seed and the source files: directory listings are sorted,
no set order reaches the output, there are no timestamps; two runs write identical bytes.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = ROOT.parent / "shared"
VAULTS = ("obsidian-help-en", "dendron-site", "vaultofknowledge", "zettelkasten-13k")
IR_SETS = ("cacm", "cisi", "hotpotqa100", "musique100")

UNIFORM_SHARE = 0.45  # links to a uniformly random card; the rest copy an earlier link target
PLANTED = 40  # planted-passage queries
TITLE_QUERIES = 10  # exact-title queries
JUDGED_SPAN = 13_000  # judged cards come from the first min(N, JUDGED_SPAN) cards
BIG_NOTE_CHARS = 1_100_000  # a "1 MB note" (ASCII: characters are bytes)
MAX_WORDS = 20_000  # longest ordinary card (real outliers are clipped)
MAX_LINKS = 1_000  # most wikilinks in one card
MAX_TITLE_WORDS = 8

_FRONTMATTER = re.compile(r"\A---\r?\n(.*?)\r?\n---\s*(?:\n|\Z)", re.DOTALL)
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.DOTALL | re.MULTILINE)
_WIKILINK = re.compile(r"(?<!!)\[\[([^\[\]\n]+)\]\]")
_EMBED = re.compile(r"!\[\[[^\]\n]*\]\]|!\[[^\]\n]*\]\([^)\n]*\)")
_MDLINK = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")
_URL = re.compile(r"<?https?://\S+")
_CODE = re.compile(r"`[^`\n]*`")
_HTML = re.compile(r"<[^>\n]*>")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_TAG = re.compile(r"(?<![\w/#&])#([A-Za-z][\w/-]*)")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[.\]\s*)?", re.MULTILINE)
_MARKUP = re.compile(r"\*\*|__|~~|==|(?<!\w)[*_](?=\w)|(?<=\w)[*_](?!\w)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_GOOD_SENTENCE = re.compile(r"[A-Z][A-Za-z0-9 ,;:'()%.!?-]*[.!?]")
_TITLE_SPLIT = re.compile(r"[\s._-]+")
_TITLE_WORD = re.compile(r"[A-Za-z][A-Za-z']*[A-Za-z]|[A-Za-z]")
_PHRASE = re.compile(r"[A-Za-z][A-Za-z0-9 ']*[A-Za-z0-9]")
_TAG_OK = re.compile(r"[A-Za-z][A-Za-z0-9_/-]*[A-Za-z0-9]")
_CONTENT_WORD = re.compile(r"[A-Za-z]{4,}")
_YAML_TAGS = re.compile(r"^tags:\s*(.*)$((?:\n\s+-\s.*)*)", re.MULTILINE)

COMMON_SHORT = frozenset(
    """all and any are but can did for get had has her him his how its let may new not now one
    our out own put run see set she the too two use via was way who why yes yet you also into
    from that this with what some more other over only such than then them they will your""".split()
)
_GLUE = "\x00"  # a space inside an inserted link or title while a card is assembled
STOPWORDS = frozenset(
    """about above after again against also although among another because been before being
    below between both cannot could does doing down during each either every from further have
    having here hers herself himself however into itself just last least less like made make
    many might more most much must neither never none nothing once only other others ought ours
    ourselves over same several shall should since some such than that their theirs them
    themselves then there these they this those though through thus under until upon very were
    what when where whether which while whom whose will with within without would your yours
    yourself yourselves first second third used using uses well even still""".split()
)


# ------------------------------------------------------------------ sources


@dataclass(frozen=True, slots=True)
class Template:
    """The shape of one real note."""

    vault: int  # index into VAULTS
    folder: tuple[str, ...]  # real folder segments, () at the vault root
    title_words: int
    words: int
    links: int
    headings: int
    tags: int  # inline #tags
    frontmatter: bool


@dataclass(slots=True)
class Sources:
    """Everything measured from ../shared, in a deterministic order."""

    templates: list[Template] = field(default_factory=list)
    vault_sizes: list[int] = field(default_factory=list)  # notes per vault
    sentences: list[str] = field(default_factory=list)  # vault and IR prose, deduplicated
    ir_sentences: list[tuple[str, str]] = field(default_factory=list)  # (sentence, "set doc id")
    title_words: list[str] = field(default_factory=list)  # with repeats: weighted by use
    headings: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    alias_share: float = 0.0  # wikilinks written [[target|label]]
    heading_share: float = 0.0  # wikilinks written [[target#heading]]


class MissingData(Exception):
    """The shared data is not where it should be."""


def note_files(vault: Path) -> list[str]:
    """Vault-relative paths of the Markdown notes of ``vault``, sorted (hidden folders skipped)."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(vault):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        rel = os.path.relpath(dirpath, vault)
        for name in sorted(filenames):
            if name.endswith(".md") and not name.startswith("."):
                found.append(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/"))
    return sorted(found)


def split_frontmatter(text: str) -> tuple[str, str]:
    """``(frontmatter, body)``; the frontmatter is ``""`` when there is none."""
    m = _FRONTMATTER.match(text)
    return (m.group(1), text[m.end() :]) if m else ("", text)


def link_label(inner: str) -> str:
    """The text a reader sees for ``[[inner]]``."""
    target, _, label = inner.partition("|")
    return label or target.split("#", 1)[0].rsplit("/", 1)[-1]


def clean_prose(body: str) -> str:
    """Markdown body reduced to plain prose lines (no code, tables, headings, links or tags)."""
    if "```" in body or "~~~" in body:
        body = _FENCE.sub("", body)
    if "[" in body:
        body = _EMBED.sub("", body)
        body = _WIKILINK.sub(lambda m: link_label(m.group(1)), body)
        body = _MDLINK.sub(r"\1", body)
    if "http" in body:
        body = _URL.sub("", body)
    if "`" in body:
        body = _CODE.sub("", body)
    if "<" in body:
        body = _HTML.sub("", body)
    lines = [
        line
        for line in body.splitlines()
        if not line.lstrip().startswith(("#", "|", ">", "%%", "---", "- [", "!"))
    ]
    text = _LIST_MARK.sub("", "\n".join(lines))
    if "#" in text:
        text = _TAG.sub("", text)
    return _MARKUP.sub("", text)


def sentences_of(prose: str) -> Iterator[str]:
    """Well-formed sentences of 5 to 50 words (ASCII, no markup) in ``prose``."""
    for para in re.split(r"\n\s*\n", prose):
        flat = " ".join(para.split())
        for s in _SENTENCE_END.split(flat):
            n = s.count(" ") + 1
            if 5 <= n <= 50 and s[-2:-1].isalnum() and _GOOD_SENTENCE.fullmatch(s):
                yield s


def title_words_of(stem: str) -> list[str]:
    """Words of a file name usable in a title: letters only (Dendron's dots split too)."""
    return [w for w in _TITLE_SPLIT.split(stem) if _TITLE_WORD.fullmatch(w)]


def phrase(text: str, max_words: int = 6) -> str | None:
    """``text`` if it is a short plain phrase (a heading or a link label), else None."""
    text = " ".join(text.split())
    if _PHRASE.fullmatch(text) and 1 <= text.count(" ") + 1 <= max_words:
        return text
    return None


def yaml_tags(frontmatter: str) -> list[str]:
    """Tags listed in a frontmatter block (flow or block list, or a single value)."""
    m = _YAML_TAGS.search(frontmatter)
    if not m:
        return []
    raw = (
        m.group(1).strip().strip("[]")
        + ","
        + ",".join(line.strip()[2:] for line in m.group(2).splitlines() if line.strip())
    )
    return [t.strip().strip("'\"#") for t in raw.split(",") if t.strip()]


@dataclass(slots=True)
class _Tally:
    """Counters filled while reading the vaults."""

    sentences: dict[str, None] = field(default_factory=dict)  # ordered set
    headings: dict[str, None] = field(default_factory=dict)
    labels: dict[str, None] = field(default_factory=dict)
    tags: dict[str, None] = field(default_factory=dict)
    links: int = 0
    aliased: int = 0
    headed: int = 0


def read_note(vault: int, rel: str, text: str, tally: _Tally) -> Template | None:
    """Measure one real note into ``tally``; None for a drawing."""
    if "excalidraw-plugin" in text[:2000] or rel.lower().endswith(".excalidraw.md"):
        return None
    fm, body = split_frontmatter(text)
    inner = _WIKILINK.findall(body)
    for x in inner:
        target, bar, label = x.partition("|")
        tally.links += 1
        tally.aliased += bool(bar)
        tally.headed += "#" in target
        if bar and (p := phrase(label, 5)):
            tally.labels[p] = None
    headings = _HEADING.findall(body)
    for h in headings:
        if p := phrase(h):
            tally.headings[p] = None
    inline_tags = _TAG.findall(_CODE.sub("", _FENCE.sub("", body))) if "#" in body else []
    for t in [*inline_tags, *yaml_tags(fm)]:
        if _TAG_OK.fullmatch(t) and len(t) <= 30 and any(c.islower() for c in t):
            tally.tags[t] = None
    for s in sentences_of(clean_prose(body)):
        tally.sentences[s] = None
    stem = rel.rsplit("/", 1)[-1][:-3]
    return Template(
        vault=vault,
        folder=tuple(rel.split("/")[:-1]),
        title_words=min(max(len(title_words_of(stem)), 1), MAX_TITLE_WORDS),
        words=min(len(body.split()), MAX_WORDS),
        links=min(len(inner), MAX_LINKS),
        headings=len(headings),
        tags=min(len(inline_tags), 20),
        frontmatter=bool(fm),
    )


def read_ir(path: Path, name: str) -> Iterator[tuple[str, str]]:
    """``(sentence, "name doc-id")`` for the titles and texts of a BEIR corpus."""
    with path.open(encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            for s in sentences_of(f"{doc.get('title', '')}.\n\n{doc.get('text', '')}"):
                yield s, f"{name} {doc['_id']}"


def load_sources(shared: Path) -> Sources:
    """Read and measure the real vaults and IR corpora under ``shared`` (raises MissingData)."""
    vault_dirs = [shared / "data" / "vaults" / v for v in VAULTS]
    ir_files = [shared / "data" / "ir" / s / "corpus.jsonl" for s in IR_SETS]
    missing = [str(p) for p in [*vault_dirs, *ir_files] if not p.exists()]
    if missing:
        raise MissingData("shared data not found: " + ", ".join(missing))
    src = Sources()
    tally = _Tally()
    words: list[str] = []
    for vi, vdir in enumerate(vault_dirs):
        count = 0
        for rel in note_files(vdir):
            text = (vdir / rel).read_text(encoding="utf-8", errors="replace")
            template = read_note(vi, rel, text, tally)
            if template is not None:
                src.templates.append(template)
                words.extend(title_words_of(rel.rsplit("/", 1)[-1][:-3]))
                count += 1
        src.vault_sizes.append(count)
    seen = set(tally.sentences)
    for name, path in zip(IR_SETS, ir_files, strict=True):
        for s, doc in read_ir(path, name):
            if s not in seen:
                seen.add(s)
                src.ir_sentences.append((s, doc))
    src.sentences = [*tally.sentences, *(s for s, _ in src.ir_sentences)]
    src.title_words = words
    src.headings = list(tally.headings)
    src.labels = list(tally.labels)
    src.tags = list(tally.tags)
    src.alias_share = tally.aliased / max(tally.links, 1)
    src.heading_share = tally.headed / max(tally.links, 1)
    return src


# ------------------------------------------------------------------ plan


@dataclass(slots=True)
class CardPlan:
    """What card ``index`` will be; the text itself is made when the card is written."""

    index: int
    title: str
    folder: str  # vault-relative, "" at the root
    template: Template
    headings: list[str]
    aliases: list[str] = field(default_factory=list)
    big: bool = False

    @property
    def path(self) -> str:
        return f"{self.folder}/{self.title}.md" if self.folder else f"{self.title}.md"


def is_name_word(word: str) -> bool:
    """Whether a title may start or end with ``word``: not a function word ("The.md" would be
    mentioned by every card)."""
    low = word.lower()
    return len(word) >= 3 and low not in STOPWORDS and low not in COMMON_SHORT


def unique_title(
    rng: random.Random, n_words: int, pool: Sequence[str], names: Sequence[str], taken: set[str]
) -> str:
    """``n_words`` words: the first and the last from ``names``, the others from ``pool``, the
    first capitalised; then one more word of ``names``, then a number, until not in ``taken``
    (case-insensitive). Adds the chosen title to ``taken``."""
    words = [rng.choice(pool if 0 < k < n_words - 1 else names) for k in range(n_words)]
    words[0] = words[0][:1].upper() + words[0][1:]
    title = " ".join(words)
    for _ in range(3):
        if title.casefold() not in taken:
            break
        title = " ".join([*words, rng.choice(names)])
    k = 2
    base = title
    while title.casefold() in taken:
        title = f"{base} {k}"
        k += 1
    taken.add(title.casefold())
    return title


def folder_name(seed: int, key: str, pool: Sequence[str], siblings: set[str]) -> str:
    """A name for the synthetic folder ``key`` (title words), unique among ``siblings``."""
    rng = random.Random(f"{seed}:folder:{key}")
    base = " ".join(rng.choice(pool) for _ in range(rng.choice((1, 1, 2)))).capitalize()
    name, k = base, 2
    while name.casefold() in siblings:
        name, k = f"{base} {k}", k + 1
    siblings.add(name.casefold())
    return name


class FolderMap:
    """Real folders of the ``c``-th copy of a real vault -> synthetic folder paths. Top-level
    folders are shared by all copies of a vault; deeper ones belong to one copy."""

    def __init__(self, seed: int, pool: Sequence[str]) -> None:
        self._seed = seed
        self._pool = pool
        self._names: dict[tuple[int, int, tuple[str, ...]], str] = {}
        self._children: dict[str, set[str]] = {}

    def path(self, vault: int, copy: int, real: tuple[str, ...]) -> str:
        out = ""
        for depth in range(1, len(real) + 1):
            key = (vault, 0 if depth == 1 else copy, real[:depth])
            name = self._names.get(key)
            if name is None:
                siblings = self._children.setdefault(out, set())
                name = folder_name(self._seed, repr(key), self._pool, siblings)
                self._names[key] = name
            out = f"{out}/{name}" if out else name
        return out


def acronym(title: str) -> str | None:
    """The initials of a title of 3+ words, unless they spell a common word ("THE")."""
    letters = "".join(w[0] for w in title.split()).upper()
    if len(letters) < 3 or letters.lower() in COMMON_SHORT or letters.lower() in STOPWORDS:
        return None
    return letters


def plan_cards(n: int, seed: int, src: Sources) -> list[CardPlan]:
    """Titles, folders and templates of ``n`` cards (prefix-stable in ``n``)."""
    taken: set[str] = set()
    names = [w for w in src.title_words if is_name_word(w)]
    folders = FolderMap(seed, names)
    used = [0] * len(VAULTS)
    plans: list[CardPlan] = []
    for i in range(n):
        rng = random.Random(f"{seed}:plan:{i}")
        t = rng.choice(src.templates)
        copy = used[t.vault] // max(src.vault_sizes[t.vault], 1)
        used[t.vault] += 1
        title = unique_title(rng, t.title_words, src.title_words, names, taken)
        heads = [rng.choice(src.headings) for _ in range(min(t.headings, 40))]
        plan = CardPlan(i, title, folders.path(t.vault, copy, t.folder), t, heads)
        if t.frontmatter and rng.random() < 0.5 and (alias := acronym(title)):
            plan.aliases = [alias]
        plans.append(plan)
    return plans


def plan_links(n: int, counts: Sequence[int], seed: int) -> list[list[int]]:
    """Targets of every card's wikilinks: uniform with probability ``UNIFORM_SHARE``, else the
    target of a random earlier link (preferential attachment). Never the card itself."""
    rng = random.Random(f"{seed}:links:{n}")
    earlier: list[int] = []
    out: list[list[int]] = []
    for i, k in enumerate(counts):
        mine: list[int] = []
        for _ in range(k if n > 1 else 0):
            if earlier and rng.random() >= UNIFORM_SHARE:
                t = earlier[rng.randrange(len(earlier))]
            else:
                t = rng.randrange(n)
            if t == i:
                t = (t + 1 + rng.randrange(n - 1)) % n
            mine.append(t)
        earlier.extend(mine)
        out.append(mine)
    return out


# ------------------------------------------------------------------ judged set


@dataclass(frozen=True, slots=True)
class Planted:
    card: int
    sentence: str
    query: str
    source: str  # "corpus doc-id"


@dataclass(slots=True)
class Judged:
    planted: list[Planted]
    titles: list[int]  # cards whose exact title is a query


def content_words(sentence: str) -> list[str]:
    """Distinct lowercase words of 4+ letters that are not stopwords, in sentence order."""
    out: list[str] = []
    for w in _CONTENT_WORD.findall(sentence):
        lw = w.lower()
        if lw not in STOPWORDS and lw not in out:
            out.append(lw)
    return out


def word_frequencies(sentences: Iterable[str], wanted: set[str]) -> Counter[str]:
    """In how many of ``sentences`` each word of ``wanted`` occurs."""
    df: Counter[str] = Counter()
    for s in sentences:
        for w in {w.lower() for w in _CONTENT_WORD.findall(s)} & wanted:
            df[w] += 1
    return df


def make_query(rng: random.Random, words: list[str], df: Counter[str]) -> str:
    """3-6 of ``words``: the two rarest, then random ones, in the sentence's order."""
    k = min(rng.randint(3, 6), len(words))
    rarest = sorted(range(len(words)), key=lambda j: (df[words[j]], j))[:2]
    rest = [j for j in range(len(words)) if j not in rarest]
    chosen = sorted([*rarest, *rng.sample(rest, k - len(rarest))])
    return " ".join(words[j] for j in chosen)


def judged_candidates(plans: Sequence[CardPlan]) -> list[int]:
    """Cards of the judged span fit to host a passage: an ordinary length, not a hub list."""
    span = plans[: min(len(plans), JUDGED_SPAN)]
    return [
        p.index
        for p in span
        if 30 <= p.template.words <= 3000 and p.template.links * 8 <= p.template.words
    ]


def plan_judged(seed: int, src: Sources, plans: Sequence[CardPlan]) -> Judged:
    """Pick the planted sentences, their queries and host cards, and the title queries."""
    rng = random.Random(f"{seed}:judged")
    candidates = [(s, d) for s, d in src.ir_sentences if len(content_words(s)) >= 6]
    picked = rng.sample(candidates, min(PLANTED, len(candidates)))
    words = [content_words(s) for s, _ in picked]
    df = word_frequencies(src.sentences, {w for ws in words for w in ws})
    hosts = judged_candidates(plans)
    if not hosts:
        hosts = [p.index for p in plans]
    order = rng.sample(hosts, len(hosts))
    planted = [
        Planted(card, s, make_query(rng, ws, df), d)
        for card, (s, d), ws in zip(order, picked, words, strict=False)
    ]
    titles = [c for c in order[len(planted) :] if " " in plans[c].title][:TITLE_QUERIES]
    return Judged(planted, titles)


def pick_big(n: int, k: int, seed: int, busy: set[int]) -> list[int]:
    """``k`` cards (not judged) that become ~1 MB notes."""
    rng = random.Random(f"{seed}:big:{n}")
    free = [i for i in range(n) if i not in busy]
    return sorted(rng.sample(free, min(k, len(free))))


# ------------------------------------------------------------------ text


def render_link(rng: random.Random, target: CardPlan, src: Sources) -> str:
    """``[[Title]]``, sometimes with ``#Heading`` and/or ``|label``."""
    inner = target.title
    if target.headings and rng.random() < src.heading_share:
        inner += "#" + rng.choice(target.headings)
    if rng.random() < src.alias_share:
        inner += "|" + (rng.choice(src.labels) if rng.random() < 0.5 else target.title.lower())
    return f"[[{inner}]]"


def insert_words(rng: random.Random, sentence: str, text: str) -> str:
    """``text`` inserted between two words of ``sentence``; its spaces become ``_GLUE`` so
    that a later insertion cannot split it (:func:`card_text` turns them back)."""
    parts = sentence.split(" ")
    at = rng.randint(1, len(parts))
    return " ".join([*parts[:at], text.replace(" ", _GLUE), *parts[at:]])


def prose(rng: random.Random, pool: Sequence[str], n_words: int, n_chars: int = 0) -> list[str]:
    """Random sentences of ``pool``: at least one, about ``n_words`` words, ``n_chars``
    characters."""
    out: list[str] = []
    words = chars = 0
    while words < n_words or chars < n_chars or not out:
        s = rng.choice(pool)
        out.append(s)
        words += s.count(" ") + 1
        chars += len(s) + 1
    return out


def frontmatter(rng: random.Random, plan: CardPlan, src: Sources) -> str:
    lines = ["---"]
    if plan.aliases:
        lines.append("aliases: [" + ", ".join(plan.aliases) + "]")
    tags = sorted({rng.choice(src.tags) for _ in range(rng.randint(1, 3))})
    lines += ["tags: [" + ", ".join(tags) + "]", "---", ""]
    return "\n".join(lines)


def sections(rng: random.Random, heads: Sequence[str], sentences: list[str]) -> list[str]:
    """The sentences as paragraphs, under ``heads`` spread evenly."""
    blocks: list[str] = []
    n_sec = len(heads) + 1
    per = max(1, -(-len(sentences) // n_sec))
    for k in range(n_sec):
        chunk = sentences[k * per : (k + 1) * per]
        if k:
            blocks.append(("### " if rng.random() < 0.2 else "## ") + heads[k - 1])
        while chunk:
            size = rng.randint(1, 6)
            blocks.append(" ".join(chunk[:size]))
            chunk = chunk[size:]
    return blocks


def card_text(
    plan: CardPlan,
    plans: Sequence[CardPlan],
    links: Sequence[int],
    mentions: Sequence[int],
    planted: str | None,
    seed: int,
    src: Sources,
) -> str:
    """The Markdown of one card."""
    rng = random.Random(f"{seed}:card:{plan.index}")
    t = plan.template
    sentences = prose(rng, src.sentences, t.words, BIG_NOTE_CHARS if plan.big else 0)
    heads = plan.headings
    if plan.big:
        heads = [*heads, *(rng.choice(src.headings) for _ in range(len(sentences) // 40))]
    rendered = [render_link(rng, plans[j], src) for j in links]
    as_list = len(rendered) > 3 and len(rendered) * 8 > t.words
    if not as_list:
        for r in rendered:
            j = rng.randrange(len(sentences))
            sentences[j] = insert_words(rng, sentences[j], r)
    for j in mentions:
        k = rng.randrange(len(sentences))
        sentences[k] = insert_words(rng, sentences[k], plans[j].title)
    for _ in range(t.tags):
        k = rng.randrange(len(sentences))
        sentences[k] = f"{sentences[k]} #{rng.choice(src.tags)}"
    if planted is not None:
        sentences.insert(rng.randrange(len(sentences) + 1), planted)
    blocks = sections(rng, heads, sentences)
    if as_list:
        items = [
            f"- {r}" + (f": {rng.choice(src.sentences)}" if rng.random() < 0.3 else "")
            for r in rendered
        ]
        blocks.insert(rng.randint(0, len(blocks)), "\n".join(items))
    head = frontmatter(rng, plan, src) if t.frontmatter else ""
    return head + "\n\n".join(blocks).replace(_GLUE, " ") + "\n"


def pick_mentions(
    rng: random.Random, plan: CardPlan, links: Sequence[int], earlier: Sequence[int], n: int
) -> list[int]:
    """Cards whose titles this card mentions in plain text without linking to them."""
    k = min(rng.randint(0, max(1, plan.template.words // 150)), 10)
    out: list[int] = []
    for _ in range(k):
        j = earlier[rng.randrange(len(earlier))] if earlier and rng.random() < 0.5 else None
        j = rng.randrange(n) if j is None else j
        if j != plan.index and j not in links and j not in out:
            out.append(j)
    return out


# ------------------------------------------------------------------ driver


@dataclass(slots=True)
class Summary:
    cards: int = 0
    links: int = 0
    mentions: int = 0
    max_backlinks: int = 0
    hub: str = ""
    bytes: int = 0
    seconds: float = 0.0
    judged: int = 0

    def line(self, out: Path) -> str:
        return (
            f"{self.cards} cards, {self.links} links, {self.mentions} mentions, "
            f"max backlinks {self.max_backlinks} ({self.hub}), {self.judged} judged queries, "
            f"{self.bytes / 1e6:.1f} MB, {self.seconds:.1f} s -> {out}"
        )


def judged_path(out: Path) -> Path:
    """Where the judged set of the vault ``out`` goes: beside it, never inside."""
    return out.parent / f"{out.name}.judged.json"


def judged_entries(judged: Judged, plans: Sequence[CardPlan]) -> list[dict[str, object]]:
    """The judged set in the golden-set format (obsidian-help.golden.json)."""
    entries: list[dict[str, object]] = []
    for k, p in enumerate(judged.planted, 1):
        entries.append(
            {
                "id": f"p{k:03d}",
                "query": p.query,
                "relevant_paths": [plans[p.card].path],
                "partial_paths": [],
                "category": "planted",
                "notes": f"words of a sentence planted from ir/{p.source}: {p.sentence}",
            }
        )
    for k, c in enumerate(judged.titles, 1):
        entries.append(
            {
                "id": f"t{k:03d}",
                "query": plans[c].title,
                "relevant_paths": [plans[c].path],
                "partial_paths": [],
                "category": "title",
                "notes": "the card's exact title",
            }
        )
    return entries


def backlink_counts(n: int, targets: Sequence[Sequence[int]]) -> list[int]:
    """Distinct linking cards per card."""
    counts = [0] * n
    for i, ts in enumerate(targets):
        for t in set(ts):
            if t != i:
                counts[t] += 1
    return counts


def generate(n: int, out: Path, seed: int, src: Sources, big_notes: int | None = None) -> Summary:
    """Write the vault ``out`` and its judged set; ``src`` is not changed."""
    start = time.perf_counter()
    plans = plan_cards(n, seed, src)
    targets = plan_links(n, [p.template.links for p in plans], seed)
    judged = plan_judged(seed, src, plans)
    remove = {p.sentence for p in judged.planted}
    src = dataclasses.replace(src, sentences=[s for s in src.sentences if s not in remove])
    host = {p.card: p.sentence for p in judged.planted}
    busy = set(host) | set(judged.titles)
    k_big = n // 20000 + 1 if big_notes is None else big_notes
    for b in pick_big(n, k_big, seed, busy):
        plans[b].big = True
    summary = Summary(cards=n, judged=len(judged.planted) + len(judged.titles))
    out.mkdir(parents=True, exist_ok=True)
    made: set[str] = set()
    earlier: list[int] = []
    for plan in plans:
        mrng = random.Random(f"{seed}:mentions:{plan.index}")
        mentions = pick_mentions(mrng, plan, targets[plan.index], earlier, n)
        earlier.extend(targets[plan.index])
        text = card_text(
            plan, plans, targets[plan.index], mentions, host.get(plan.index), seed, src
        )
        folder = out / plan.folder if plan.folder else out
        if plan.folder not in made:
            folder.mkdir(parents=True, exist_ok=True)
            made.add(plan.folder)
        data = text.encode("utf-8")
        (folder / f"{plan.title}.md").write_bytes(data)
        summary.bytes += len(data)
        summary.links += len(targets[plan.index])
        summary.mentions += len(mentions)
    counts = backlink_counts(n, targets)
    top = max(range(n), key=lambda i: (counts[i], -i)) if n else 0
    summary.max_backlinks = counts[top] if n else 0
    summary.hub = plans[top].title if n else ""
    entries = judged_entries(judged, plans)
    judged_path(out).write_text(json.dumps(entries, indent=2, ensure_ascii=False) + "\n")
    summary.seconds = time.perf_counter() - start
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("n", type=int, help="number of cards")
    ap.add_argument("out", type=Path, help="vault folder to create (must not exist or be empty)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the ../shared folder")
    ap.add_argument("--big-notes", type=int, default=None, help="~1 MB notes (N // 20000 + 1)")
    args = ap.parse_args(argv)
    out: Path = args.out
    if args.n < 1:
        print("make_vault: N must be at least 1", file=sys.stderr)
        return 2
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"make_vault: {out} exists and is not an empty folder", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        src = load_sources(args.shared)
    except MissingData as e:
        print(
            f"make_vault: {e} (pass --shared DIR; ../shared is beside the project in CI)",
            file=sys.stderr,
        )
        return 2
    summary = generate(args.n, out, args.seed, src, args.big_notes)
    summary.seconds = time.perf_counter() - start
    print(summary.line(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
