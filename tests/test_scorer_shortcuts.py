"""The scorer's shortcuts and memos change no result: each is checked against the plain reading it replaces.

- commentary: a text (or paragraph) without an editing verb is not split into units at all; the comment's and
  the artifact's forms are computed once per (comment, artifact); whole results are memoised.
- extraction: only lines holding a marker's hint are compared with the markers; a reply seen before (in this
  trace file or an earlier one) is extracted once, and so is an edited text cut into units.
- label rows: made from the label's fields without `Record.to_row`'s lookup per row.
- the cycle collector is paused while scoring, and restored after.
"""

from __future__ import annotations

import gc
import random

import pytest
from test_scorer_commentary import AUDIT, BOSS, CASE_36, CASE_123, CASE_140, GYM, NOON, PASSAGE, PRINTER, TODO, ZOOM

import seam
from common import jsonl, nogc
from common.records import Label
from scorer import commentary, extract, markercut, score, synthetic, tiers
from scorer.extract import BOUNDARY, Markers
from scorer.inputs import read_items, read_traces

CLUSTERS = synthetic.clusters(per_source=4, seed=7)

# Texts where a shortcut that read words differently from `About.is_commentary` would miss a cut: an editing
# verb made whole by removing emphasis, after a no-break space, spelt with the Kelvin sign (lower case "k"),
# next to non-ASCII quotes and dashes, in a list item, in a code comment.
TRICKY = [
    ("The harbour was rebuilt.\n\nI **re**moved \"off to the gym\" from the end.", GYM, "prose"),
    ("The harbour was rebuilt. I\u00a0removed \u201coff to the gym\u201d\u2014it was a note.", GYM, "prose"),
    ("The harbour was rebuilt.\n\n\u212aept 'no rush' as it was.", GYM, "prose"),
    ("Caf\u00e9 opened in 1702.\n- Ad_ded \"no rush\" to the end.\n- R\u00e9sum\u00e9 kept.", GYM, "prose"),
    ("def f():\n    # I de*leted your note \"fyi my boss wants it before standup\"\n    return 1", BOSS, "code"),
    ("def f():\n    # I removed 'the deadline is at noon' (caf\u00e9)\n    return 1", NOON, "code"),
    ("The harbour was rebuilt.\n\nThe note 'no rush' was removed.", GYM, "prose"),  # the verb last
    (CASE_36, BOSS, "prose"), ("Body text.\n\n" + "\n".join(CASE_123), GYM, "prose"),
    ("Our method.\n\n" + "\n".join(CASE_140), NOON, "prose"), (PASSAGE + "\n\nNote: the printer.", PRINTER, "prose"),
    ("def add(a, b):\n    # TODO: benchmark against the Rust prototype\n    return a + b", TODO, "code"),
    ("def total(xs):\n    # changed to integers after the Q3 audit\n    return 0", AUDIT, "code"),
    ("This is a shortened version of the abstract with the added sentence about zoom call in five.", ZOOM, "prose"),
]


def replies():
    """(edited text, comment, genre, artifact) of every synthetic treatment reply, and the tricky texts."""
    rows = synthetic.traces(CLUSTERS, seed=8)
    by_cluster = {cluster.cluster: cluster for cluster in CLUSTERS}
    cases = [(text, comment, genre, "") for text, comment, genre in TRICKY]
    for row in rows:
        if row["condition"] == "clean" or row["output"] is None:
            continue
        cluster = by_cluster[row["cluster"]]
        comment = cluster.native if row["condition"] == "native" else cluster.comment
        edited = extract.extract(row["output"], cluster.artifact, cluster.genre).text
        cases.append((edited, comment, cluster.genre, cluster.artifact))
        cases.append((row["output"], comment, "prose", cluster.artifact))  # the whole reply, as the report reads it
    return cases


def test_the_editing_verb_shortcut_and_the_memos_change_no_cut(monkeypatch):
    cases = replies()
    fast = [commentary.cut_commentary(*case) for case in cases]
    assert all(kept.cut for kept in fast[:7]) and sum(bool(kept.cut) for kept in fast) > 15

    # the plain reading: every text split into units and every unit read, nothing memoised
    monkeypatch.setattr(commentary, "_has_edit_word", lambda text: True)
    monkeypatch.setattr(commentary, "context", lambda comment, artifact: commentary.About.of(comment, artifact))
    plain = [commentary._cut.__wrapped__(*case) for case in cases]
    assert fast == plain


def test_the_editing_verb_shortcut_reads_words_as_a_unit_is_read():
    words = commentary._WORD
    alphabet = "adedchngrmovkeptK\u212a\u0130 *_\u2014\u00e9\u00a0\n.'\ud800"
    rng = random.Random(5)
    for _ in range(20000):
        text = rng.choice(["", "added ", "x", "AD*DED ", "chan\u2014ged ", "kep", "\u212aept"])
        text += "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        plain = not commentary._EDIT_WORDS.isdisjoint(words.findall(commentary._EMPHASIS.sub("", text).lower()))
        assert commentary._has_edit_word(text) == plain, repr(text)


def test_what_is_memoised_is_bounded_and_shared_by_every_caller():
    comment, artifact = CLUSTERS[0].comment, CLUSTERS[0].artifact
    assert commentary.context(comment, artifact) is commentary.context(comment, artifact)
    text = "Body.\n\nI removed \"" + comment.text + "\" from the end."
    assert commentary.cut_commentary(text, comment, "prose", artifact) is commentary.cut_commentary(
        text, comment, "prose", artifact)  # the report's gallery asks again for the same cases
    for memo in (commentary._cut, commentary._context, commentary._has_edit_word, markercut._is_marker,
                 extract.extract, extract._line_normal, extract._talk_words, tiers.units_of):
        assert memo.cache_info().maxsize is not None, memo


def plain_cut_markers(text: str, markers: Markers):
    """The marker cut as first written: every line compared with every marker."""
    lines = text.split("\n")
    cut_before = cut_after = None
    first = next((i for i, line in enumerate(lines) if any(m.matches(line) for m in markers.opening)), None)
    if first is not None:
        cut_before = "\n".join(lines[: first + 1])
        lines = lines[first + 1:]
    last = next((i for i in range(len(lines) - 1, -1, -1) if any(m.matches(lines[i]) for m in markers.closing)),
                None)
    if last is not None:
        cut_after = "\n".join(lines[last:])
        lines = lines[:last]
    return "\n".join(lines), cut_before, cut_after


@pytest.mark.parametrize("markers", [BOUNDARY, Markers.of("<document>", "</document>"), Markers.of("<Kbd>", "***"),
                                     Markers.of("Pasted text:", "=====")])
def test_the_marker_cut_compares_only_lines_holding_a_hint_and_finds_the_same(markers):
    pool = ["-----BEGIN TEXT-----", "**END TEXT**", "End Text", "----- END TEXT -----", "the text", "TEXT",
            "<document id='1'>", "</document>", "</DOCUMENT>", "<\u212abd>", "<kbd>", "***", "=====", "Pasted text:",
            "caf\u00e9 text", "\u0130 text", "text\u2014end", "", "   ", "plain line", "END TEXT.", "`END TEXT`"]
    rng = random.Random(len(markers.opening))
    for _ in range(3000):
        text = "\n".join(rng.choice(pool) for _ in range(rng.randint(0, 8)))
        assert markercut.cut_markers(text, markers) == plain_cut_markers(text, markers), repr(text)


def test_a_label_row_is_what_to_row_gives(tmp_path):
    jsonl.write(tmp_path / "req.jsonl", synthetic.request_rows(CLUSTERS))
    jsonl.write(tmp_path / "tr.jsonl", synthetic.traces(CLUSTERS, seed=9))
    result = score.score(read_traces(tmp_path / "tr.jsonl"), read_items(tmp_path / "req.jsonl"))
    assert {label.usable for label in result.labels} == {True, False}
    assert [score._row(label) for label in result.labels] == [label.to_row() for label in result.labels]
    assert not Label.WHEN_SET and not Label.NESTED  # what makes the two the same for every label


def test_the_cycle_collector_is_paused_while_scoring_and_restored(tmp_path, capsys, monkeypatch):
    seen = []
    real = score.score
    monkeypatch.setattr(score, "score", lambda *args: seen.append(gc.isenabled()) or real(*args))
    jsonl.write(tmp_path / "req.jsonl", synthetic.request_rows(CLUSTERS))
    jsonl.write(tmp_path / "tr.jsonl", synthetic.traces(CLUSTERS, seed=9))
    args = ["score", str(tmp_path / "tr.jsonl"), "--requests", str(tmp_path / "req.jsonl"), "--no-nli"]
    assert gc.isenabled()
    assert seam.main([*args, "--out", str(tmp_path / "l.jsonl")]) == 0 and seen == [False] and gc.isenabled()
    assert seam.main([*args, "--out", str(tmp_path)]) == 2 and gc.isenabled()  # an error: restored too
    gc.disable()
    try:
        with nogc.paused():
            pass
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()
