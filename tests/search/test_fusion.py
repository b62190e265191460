"""RRF fusion per card, against hand-computed scores."""

from __future__ import annotations

import pytest

from zettel_lsp.search.fusion import (
    LegHit,
    card_ranking,
    convex_scores,
    fuse,
    normalised,
    rrf_scores,
)


def hit(path: str, chunk: int = 0) -> LegHit:
    return LegHit(path, {"chunk": chunk, "title": path.upper()})


def test_rrf_by_hand() -> None:
    scores = rrf_scores({"a": ["x", "y"], "b": ["y", "z"]}, k=60)
    assert scores["x"] == pytest.approx(1 / 61)
    assert scores["y"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["z"] == pytest.approx(1 / 62)
    weighted = rrf_scores({"a": ["x"], "b": ["x"]}, k=60, weights={"a": 2.0})
    assert weighted["x"] == pytest.approx(3 / 61)


def test_chunks_of_one_card_count_once_per_leg() -> None:
    hits = [hit("a", 0), hit("a", 1), hit("b", 0), hit("a", 2), hit("c", 0)]
    assert [(h.path, h.chunk["chunk"]) for h in card_ranking(hits)] == [
        ("a", 0),
        ("b", 0),
        ("c", 0),
    ]
    # c is third among cards, not fifth among chunks
    assert rrf_scores({"leg": [h.path for h in card_ranking(hits)]})["c"] == pytest.approx(1 / 63)


def test_fuse_keeps_best_chunk_and_leg_ranks() -> None:
    results = fuse(
        {
            "dense": [hit("a", 3), hit("b", 0)],
            "bm25": [hit("b", 1), hit("a", 0), hit("c", 0)],
        }
    )
    assert [r.path for r in results] == ["a", "b", "c"]  # a and b tie; a's best rank is dense #1
    a, b, c = results
    assert a.score == pytest.approx(1 / 61 + 1 / 62) == b.score
    assert a.chunk["chunk"] == 3 and b.chunk["chunk"] == 1  # the chunk that ranked best
    assert a.legs == {"dense": 1, "bm25": 2} and c.legs == {"bm25": 3}
    assert a.title == "A"


def test_empty_legs() -> None:
    assert fuse({"dense": [], "bm25": []}) == []


def scored(path: str, score: float) -> LegHit:
    return LegHit(path, {"chunk": 0, "title": path}, score)


def test_convex_by_hand() -> None:
    # dense: x 0.8 (top), y 0.4; bm25: y 10 (top), z 5; title (no scores): z first, x second
    legs = {
        "dense": [scored("x", 0.8), scored("y", 0.4)],
        "bm25": [scored("y", 10.0), scored("z", 5.0)],
        "title": [scored("z", 0.0), scored("x", 0.0)],
    }
    scores = convex_scores(legs, {"dense": 2.0, "bm25": 1.0, "title": 0.5})
    assert scores["x"] == pytest.approx(2.0 * 1.0 + 0.5 * 1 / 2)
    assert scores["y"] == pytest.approx(2.0 * 0.5 + 1.0 * 1.0)
    assert scores["z"] == pytest.approx(1.0 * 0.5 + 0.5 * 1.0)
    assert [r.path for r in fuse(legs, weights={"dense": 2.0, "title": 0.5}, norm="top")] == [
        "x",
        "y",
        "z",
    ]


def test_convex_keeps_margins_that_rrf_drops() -> None:
    # a wins dense by a wide margin, b wins bm25 by a hair: RRF ties them, convex does not
    legs = {
        "dense": [scored("a", 0.9), scored("b", 0.3)],
        "bm25": [scored("b", 10.0), scored("a", 9.9)],
    }
    rrf = fuse(legs)
    assert rrf[0].score == pytest.approx(rrf[1].score)
    assert [r.path for r in fuse(legs, norm="top")] == ["a", "b"]


def test_convex_counts_a_card_once_per_leg_and_ignores_negative_scores() -> None:
    legs = {"dense": [scored("a", 0.5), scored("a", 0.4), scored("b", -0.2)]}
    scores = convex_scores({"dense": card_ranking(legs["dense"])})
    assert scores == {"a": pytest.approx(1.0), "b": 0.0}


def test_dbsf_by_hand() -> None:
    # mean 2, standard deviation sqrt(2/3): mean - 3 sd .. mean + 3 sd mapped to 0..1
    sd = (2 / 3) ** 0.5
    want = [(s - (2 - 3 * sd)) / (6 * sd) for s in (3.0, 2.0, 1.0)]
    assert normalised([3.0, 2.0, 1.0], "dbsf") == pytest.approx(want)
    assert normalised([3.0, 2.0, 1.0], "dbsf")[1] == pytest.approx(0.5)
    # not clipped above: an outlier lies past 1; below mean - 3 sd a hit counts 0, not less
    spread = normalised([100.0] + [1.0] * 99, "dbsf")
    assert spread[0] > 1.0 and spread[1] < 0.5
    assert normalised([-100.0] + [1.0] * 99, "dbsf")[0] == 0.0
    # no spread: every hit is the top of the range, as a lone hit is
    assert normalised([4.0], "dbsf") == [1.0]
    assert normalised([0.3, 0.3, 0.3], "dbsf") == [1.0, 1.0, 1.0]
    assert normalised([], "dbsf") == []
    assert normalised([2.0, 1.0, -1.0], "top") == [1.0, 0.5, 0.0]
    with pytest.raises(ValueError, match="unknown normalisation"):
        normalised([1.0], "median")


def test_dbsf_keeps_a_first_hit_far_above_the_rest() -> None:
    """A dense leg whose cosines lie close together (a bag of words) against a BM25 leg whose first
    hit stands far above the rest (the only card holding those words together): dividing by the
    top score lets the dense leg decide (its ten cards all score about its weight); DBSF lets the
    BM25 outlier through, and keeps the dense order among the rest."""
    dense = [scored(f"d{i}", 0.50 - i * 0.002) for i in range(30)]  # a leg's depth: 30
    bm25 = [scored("memo", 20.0), *(scored(f"b{i}", 6.0 - i * 0.1) for i in range(29))]
    legs = {"dense": dense, "bm25": bm25}
    weights = {"dense": 1.5, "bm25": 1.0}
    assert fuse(legs, weights=weights, norm="top")[0].path == "d0"
    ranked = [r.path for r in fuse(legs, weights=weights, norm="dbsf")]
    assert ranked[0] == "memo"
    assert [p for p in ranked if p.startswith("d")] == [f"d{i}" for i in range(30)]
    # a leg without scores (titles) counts 1 / rank under either normalisation
    titles = {"title": [scored("t", 0.0), scored("u", 0.0)]}
    assert convex_scores(titles, norm="dbsf") == {"t": 1.0, "u": 0.5}


def test_a_few_multilingual_hits_are_read_on_the_dense_legs_scale() -> None:
    """An English query's ``dense_ml`` leg over the few non-English cards of a vault: on its own
    scale its best hit always counts high (two or three hits make no distribution); on the
    dense leg's it counts by how its similarity compares with the English cards'. It weighs as
    dense and BM25 together (BM25 cannot read the card)."""
    from zettel_lsp.search.engine import DEFAULT_WEIGHTS, SearchOptions, fuse_legs

    dense = [scored(f"en{i}", 0.60 - i * 0.01) for i in range(30)]
    near = [scored("Sauerteig", 0.62), scored("Zeitung", 0.15)]  # close to the query, far
    far = [scored("Zeitung", 0.15), scored("Fahrrad", 0.12)]  # both far from it
    ref = [h.score for h in dense]
    assert normalised([0.62, 0.15], "dbsf", ref)[0] > normalised(ref, "dbsf")[0]
    assert normalised([0.15, 0.12], "dbsf", ref) == [0.0, 0.0]  # below the dense leg's range
    assert normalised([0.15, 0.12], "dbsf")[0] > 0.5  # on their own: the first counts high
    assert normalised([0.3, 0.6], "top", [1.2]) == [0.25, 0.5]
    opts = SearchOptions()
    for ml, first in ((near, "Sauerteig"), (far, "en0")):
        legs = {"dense": dense, "bm25": [scored("en0", 9.0), scored("en1", 3.0)], "dense_ml": ml}
        assert fuse_legs(legs, opts)[0].path == first
        weights = {**DEFAULT_WEIGHTS, "dense_ml": DEFAULT_WEIGHTS["dense"] + 1.0}
        assert fuse(legs, weights=weights, norm="dbsf", scale={"dense_ml": "dense"}) == (
            fuse_legs(legs, opts)
        )


def _known_item_legs(keyword: list[LegHit]) -> dict[str, list[LegHit]]:
    # the dense leg's cosines lie close together (a bag of words); "memo" is first in BM25
    # and holds the query's words, which the keyword leg finds
    dense = [scored(f"d{i}", 0.50 - i * 0.002) for i in range(10)]
    bm25 = [scored("memo", 12.0), *(scored(f"b{i}", 11.0 - i) for i in range(5))]
    return {"dense": dense, "bm25": bm25, "keyword": keyword}


def test_the_known_item_boost_lifts_the_only_card_holding_the_words() -> None:
    from zettel_lsp.search.engine import DEFAULT_WEIGHTS, SearchOptions, fuse_legs, known_item

    legs = _known_item_legs([scored("memo", 7.0)])
    # the arithmetic below is the convex fusion's (each leg divided by its top score)
    off = SearchOptions(fusion="convex", known_item=0.0)
    on = SearchOptions(fusion="convex", known_item=1.0)
    assert SearchOptions().known_item == 1.0  # on by default
    assert known_item(legs["keyword"], on.leg_depth)
    assert fuse_legs(legs, off)[0].path == "d0"  # by default, dense decides
    fused = fuse_legs(legs, on)
    assert fused[0].path == "memo"
    w = DEFAULT_WEIGHTS
    assert fused[0].score == pytest.approx(w["bm25"] + w["keyword"] + 1.0)
    assert fuse_legs(legs, off)[0].score == pytest.approx(w["dense"])
    # the weights given to a call are kept apart from the boost
    assert fuse_legs(legs, on, {"dense": 1.5, "bm25": 1.0, "keyword": 0.0})[0].path == "memo"


def test_no_known_item_when_the_words_are_common_or_the_leg_was_cut() -> None:
    from zettel_lsp.search.engine import KNOWN_ITEM_CARDS, SearchOptions, fuse_legs, known_item

    on = SearchOptions(fusion="convex", known_item=1.0, depth=30)
    # more cards than KNOWN_ITEM_CARDS hold the words: no boost
    common = [scored(f"k{i}", 5.0 - i) for i in range(KNOWN_ITEM_CARDS)] + [scored("memo", 1.0)]
    assert not known_item(common, 30)
    assert fuse_legs(_known_item_legs(common), on)[0].path == "d0"
    # one card, but the leg filled its depth (chunks of one long card): the match set may go on
    cut = [LegHit("memo", {"chunk": i, "title": "memo"}, 7.0 - i * 0.1) for i in range(30)]
    assert not known_item(cut, 30) and known_item(cut[:29], 30)
    assert fuse_legs(_known_item_legs(cut), on)[0].path == "d0"
    assert not known_item([], 30)
