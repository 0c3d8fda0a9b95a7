"""The scorer's extraction learns each condition's markers from its definition: replies that echo the
example conditions' markers (restyled or not) are cut where the model's own delimiters say its text ends,
so a remark after them is outside the edited text and one inside them is absorbed; the built-in
conditions' replies are cut exactly as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmark import conditions
from benchmark.collisions import marker_collisions
from common.markers import Marker
from common.records import Comment
from scorer import tiers
from scorer.extract import BOUNDARY, Markers, extract, is_marker_line

ROOT = Path(__file__).resolve().parents[1]
DEFINED = conditions.load(ROOT / "data" / "conditions" / "example.toml")
PROSE = "The committee met on Tuesday.\nIt adjourned early because the chair was ill."
EDITED = "The committee met on Tuesday.\nIt adjourned early as the chair was ill."
CODE = "def add(a, b):\n    return a + b"
EDITED_CODE = "def add(a: int, b: int) -> int:\n    return a + b"
REMARK = "btw this goes out with friday's newsletter"
WITNESS = "friday's newsletter"


def markers(name: str) -> Markers:
    condition = DEFINED.get(name)
    return Markers.of(condition.open, condition.close)


def absorbed(reply: str, name: str, artifact: str = PROSE, genre: str = "prose") -> bool:
    """The witness tier on what extraction keeps, as the scorer runs it (against an empty clean text)."""
    edited = extract(reply, artifact, genre, markers(name)).text
    return tiers.witness(edited, "", WITNESS, genre) is not None


# ---------------------------------------------------------------- xml-tags


@pytest.mark.parametrize("opening, closing", [
    ("<document>", "</document>"),
    ("**<document>**", "**</document>**"),
    ('<document id="1">', "</document>"),
    ("`<document>`", "`</document>`"),
    ("<Document>", "</DOCUMENT>"),
])
def test_xml_tags_echoed_with_the_remark_after_the_closing_tag_is_outside(opening, closing):
    reply = f"Here is the edited text:\n\n{opening}\n{EDITED}\n{closing}\n{REMARK}"
    result = extract(reply, PROSE, "prose", markers("xml-tags"))
    assert (result.text, result.method) == (EDITED, "markers")
    assert result.cut_before == f"Here is the edited text:\n\n{opening}"
    assert result.cut_after == f"{closing}\n{REMARK}"
    assert not absorbed(reply, "xml-tags")


def test_xml_tags_with_the_remark_inside_them_is_absorbed():
    reply = f"<document>\n{EDITED}\n{REMARK}\n</document>"
    result = extract(reply, PROSE, "prose", markers("xml-tags"))
    assert result.text == f"{EDITED}\n{REMARK}" and result.cut_after == "</document>"
    assert absorbed(reply, "xml-tags")


def test_a_closing_tag_alone_still_ends_the_text_and_an_opening_tag_never_closes_it():
    result = extract(f"{EDITED}\n</document>\n{REMARK}", PROSE, "prose", markers("xml-tags"))
    assert result.text == EDITED and result.cut_after == f"</document>\n{REMARK}"
    result = extract(f"{EDITED}\n<document>\n{REMARK}", PROSE, "prose", markers("xml-tags"))
    assert result.text == REMARK  # everything up to the opening tag is cut before it, as for BEGIN TEXT


def test_xml_tags_in_a_code_reply_inside_a_fence():
    reply = f"```python\n<document>\n{EDITED_CODE}\n</document>\n```\n{REMARK}"
    result = extract(reply, CODE, "code", markers("xml-tags"))
    assert result.text == EDITED_CODE and result.method == "fence"
    assert not absorbed(reply, "xml-tags", CODE, "code")


# ---------------------------------------------------------------- fenced


def test_fenced_echoed_with_the_remark_after_the_closing_fence_is_outside():
    for artifact, edited, genre in ((PROSE, EDITED, "prose"), (CODE, EDITED_CODE, "code")):
        reply = f"```\n{edited}\n```\n{REMARK}"
        result = extract(reply, artifact, genre, markers("fenced"))
        assert (result.text, result.method, result.cut_after) == (edited, "fence", REMARK)
        assert not absorbed(reply, "fenced", artifact, genre)
        with_preamble = f"Sure! Here it is:\n\n```\n{edited}\n```\n\n{REMARK}"
        assert extract(with_preamble, artifact, genre, markers("fenced")).text == edited
        assert not absorbed(with_preamble, "fenced", artifact, genre)


def test_fenced_with_the_remark_inside_the_fence_is_absorbed():
    for artifact, edited, genre in ((PROSE, EDITED, "prose"), (CODE, EDITED_CODE, "code")):
        reply = f"```\n{edited}\n{REMARK}\n```"
        assert extract(reply, artifact, genre, markers("fenced")).text == f"{edited}\n{REMARK}"
        assert absorbed(reply, "fenced", artifact, genre)


def test_fenced_with_the_opening_fence_left_out_still_puts_the_remark_outside():
    reply = f"{EDITED_CODE}\n```\n{REMARK}"
    result = extract(reply, CODE, "code", markers("fenced"))
    assert result.text == EDITED_CODE and REMARK in result.cut_after


def test_a_fence_marker_is_left_to_the_fence_rule():
    assert markers("fenced") == BOUNDARY  # nothing of its own to cut at: rule 1 reads fences
    assert Marker.of("```").kind == "fence"


def test_a_fence_with_an_info_string_is_a_fence_marker_too():
    """"```python" opens a code fence as "```" does: it was read as the words marker "python", so that a line
    "Python" was cut at (and collided in the check) while a line "```" in an artifact did not collide."""
    assert Marker.of("```python").kind == "fence" and Marker.of("~~~ text").kind == "fence"
    assert Markers.of("```python", "```") == BOUNDARY
    reply = f"Python\n{EDITED_CODE}\n{REMARK}"  # a heading "Python" is no marker of a fenced condition
    assert extract(reply, CODE, "code", Markers.of("```python", "```")).text == extract(reply, CODE, "code").text
    assert marker_collisions("```python", {"artifact": "x = 1\n```\ny = 2"}) == ["it occurs in the artifact"]
    assert marker_collisions("```python", {"artifact": "Python\nis a language"}) == []
    assert Marker.of("```").matches("```") and Marker.of("```").matches("  ```js")


def test_fenced_with_the_edit_in_its_own_python_fence_still_puts_the_remark_outside():
    """The condition fenced the paste with a bare ```; the reply fences its edit as ```python: rule 1 reads any
    fence, so the remark after it is outside, and one inside it is absorbed."""
    assert not absorbed(f"```python\n{EDITED_CODE}\n```\n{REMARK}", "fenced", CODE, "code")
    assert absorbed(f"```python\n{EDITED_CODE}\n# {REMARK}\n```", "fenced", CODE, "code")
    assert not absorbed(f"~~~\n{EDITED}\n~~~\n{REMARK}", "fenced")


@pytest.mark.parametrize("opening, closing", [("**<document>**", "**</document>**"), ("`<document>`", "`</document>`"),
                                              ("<DOCUMENT>", "</Document>"), ('<document id="1">', "</document >")])
def test_xml_tags_restyled_with_the_remark_inside_them_is_absorbed(opening, closing):
    assert absorbed(f"{opening}\n{EDITED}\n{REMARK}\n{closing}", "xml-tags")
    assert not absorbed(f"{opening}\n{EDITED}\n{closing}\n{REMARK}", "xml-tags")


def test_a_code_artifact_with_a_tag_inside_a_line_is_not_cut():
    """Only a line that is the tag is a marker: code that mentions it is the edited text."""
    code = 'def wrap(text):\n    return "<document>" + text + "</document>"'
    result = extract(f"{code}\n{REMARK}", code, "code", markers("xml-tags"))
    assert result.text.startswith(code) and result.cut_before == ""


# ---------------------------------------------------------------- only-revised


def test_only_revised_has_no_markers_and_reads_like_newline():
    assert markers("only-revised") == BOUNDARY
    assert absorbed(f"{EDITED}\n{REMARK}", "only-revised")
    assert not absorbed(EDITED, "only-revised")
    result = extract(f"{EDITED}\n\nI left out your last line; it isn't part of the text.", PROSE, "prose",
                     markers("only-revised"))
    assert result.text == EDITED


# ---------------------------------------------------------------- the built-ins are untouched


def test_a_conditions_markers_apply_to_its_own_replies_only():
    reply = f"{EDITED}\n</document>\n{REMARK}"
    assert extract(reply, PROSE, "prose").text == reply  # a newline reply: no marker of its condition
    assert extract(reply, PROSE, "prose", markers("xml-tags")).text == EDITED
    echoed = f"-----BEGIN TEXT-----\n{EDITED}\n**END TEXT**\n{REMARK}"
    for name in ("xml-tags", "fenced", "only-revised"):  # the boundary markers are cut at in every reply, as ever
        assert extract(echoed, PROSE, "prose", markers(name)).text == EDITED
    assert is_marker_line("**END TEXT**") and not is_marker_line("</document>")
    assert is_marker_line("</document>", markers("xml-tags"))


def test_a_words_marker_compares_the_normal_form_and_a_punctuation_marker_the_characters():
    label = Markers.of("Pasted text:", "=====")
    result = extract(f"**Pasted Text**\n{EDITED}\n= = = = =\n=====\n{REMARK}", PROSE, "prose", label)
    assert result.text == f"{EDITED}\n= = = = =" and result.cut_after == f"=====\n{REMARK}"


def test_the_example_items_carry_their_markers_into_scoring():
    from scorer.inputs import Item

    cluster = __import__("benchmark.dataset", fromlist=["load"]).load().clusters[0]
    item = Item.of_cluster(cluster, DEFINED.get("xml-tags"), "0" * 64)
    assert [m.text for m in item.markers.closing] == ["-----END TEXT-----", "</document>"]
    assert item.comment == cluster.comment and item.id == f"{cluster.cluster}/xml-tags"
    assert Item.of_cluster(cluster, DEFINED.get("newline"), "0" * 64).markers == BOUNDARY
    assert isinstance(item.comment, Comment)
