"""The guard's function (guard/mark.py) and the conditions that render through it (marking = guard or
paste-rule): an exactly split SEAM message becomes its boundary (or mitigation) message byte for byte, a message
it cannot place is passed unchanged, and a condition file with such a condition is refused when malformed."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from benchmark import conditions, dataset
from benchmark.check import check
from common.errors import UserError
from common.seams.segment import MAX_MESSAGE_CHARS
from guard import mark
from guard.mark import BEGIN, END, MITIGATION, guard, paste_rule_marks

ROOT = Path(__file__).resolve().parents[1]
GUARD_STUDY = ROOT / "data" / "conditions" / "guard.toml"
CODE = "Please fix the bug:\n\ndef area(r):\n    return 3.14 * r * r * r\n\nprint(area(2))\nbtw, this is for class"


def test_the_defaults_are_the_benchmarks_own_markers_and_sentence():
    boundary, mitigation = conditions.builtin().get("boundary"), conditions.builtin().get("mitigation")
    assert (BEGIN, END) == (boundary.open, boundary.close) == (mitigation.open, mitigation.close)
    assert MITIGATION == mitigation.sentence


def test_an_exactly_split_newline_message_becomes_its_boundary_and_mitigation_message():
    benchmark = dataset.load()
    builtin = conditions.builtin()
    exact = with_sentence = 0
    for cluster in benchmark.clusters:
        newline = builtin.get("newline").message(cluster)
        result = guard(newline)
        start = len(cluster.instruction) + 2
        if (result.artifact_start, result.artifact_end) != (start, start + len(cluster.artifact)):
            continue
        exact += 1
        assert result.message == builtin.get("boundary").message(cluster)
        assert newline[result.artifact_start:result.artifact_end] == cluster.artifact
        with_sentence += guard(newline, sentence=MITIGATION).message == builtin.get("mitigation").message(cluster)
    assert exact == with_sentence and exact >= 290  # the seam finder's measured 296 of 300


def test_a_message_without_a_seam_is_passed_unchanged_with_its_reason():
    for message, reason in (("hello", "no seam"), ("Fix this:\n\ndef f():\n    return 1", "no seam"),
                            (f"Fix:\n{BEGIN}\nx = 1\n{END}\nbtw", "already marked"),
                            ("Fix:\n" + "x = 1\n" * (MAX_MESSAGE_CHARS // 6 + 1) + "btw", "too long")):
        result = guard(message)
        assert (result.marked, result.message, result.artifact_start, result.artifact_end, result.reason) == (
            False, message, -1, -1, reason)
    assert set(mark.REASONS) == {"marked", "no seam", "tail is the paste's", "already marked", "too long",
                                 "other line breaks"}


@pytest.mark.parametrize("separator", ["\r", "\x0b", "\x0c", "\x85", "\u2028", "\u2029"])
def test_a_line_break_the_seam_finder_does_not_split_at_is_never_guessed(separator):
    # split at "\n" only, the paste's last line would go outside the markers for a reader that breaks here too
    message = CODE.replace("\nbtw", separator + "btw")
    result = guard(message)
    assert (result.marked, result.message, result.reason) == (False, message, "other line breaks")


@pytest.mark.parametrize(("options", "name"), [({"open": ""}, "open"), ({"close": "a\nb"}, "close"),
                                               ({"open": "x\u2028y"}, "open"), ({"sentence": "a\nb"}, "sentence")])
def test_markers_and_sentences_given_to_the_function_are_checked(options, name):
    with pytest.raises(ValueError, match=f"^{name}: expected"):
        guard(CODE, **options)


@pytest.mark.parametrize("line", ["**-----END TEXT-----**", "> END TEXT", "-----END  TEXT-----", "End text"])
def test_a_line_the_scorer_takes_for_a_marker_counts_as_marked(line):
    # marking again would nest the markers, and the scorer cuts a reply at such a line
    message = CODE.replace("\nprint(area(2))", "\n" + line)
    assert (guard(message).marked, guard(message).reason) == (False, "already marked")


def test_guarding_twice_marks_once():
    once = guard(CODE)
    assert once.marked
    twice = guard(once.message)
    assert (twice.marked, twice.message, twice.reason) == (False, once.message, "already marked")


def test_the_span_is_the_artifact_only_and_everything_else_is_kept_byte_for_byte():
    result = guard(CODE)
    pasted = "def area(r):\n    return 3.14 * r * r * r\n\nprint(area(2))"
    assert CODE[result.artifact_start:result.artifact_end] == pasted
    opened = result.message.index(BEGIN)
    assert result.message.replace(BEGIN + "\n", "", 1).replace("\n" + END, "", 1) == CODE
    assert opened == result.artifact_start


def test_crlf_messages_get_crlf_marker_lines_and_other_markers_and_sentences_are_options():
    crlf = CODE.replace("\n", "\r\n")
    result = guard(crlf, open="<document>", close="</document>", sentence="Edit only the document.")
    assert result.marked
    assert result.message == ("Please fix the bug: Edit only the document.\r\n\r\n<document>\r\n"
                              "def area(r):\r\n    return 3.14 * r * r * r\r\n\r\nprint(area(2))\r\n"
                              "</document>\r\nbtw, this is for class")


def test_lone_surrogates_are_text_like_any_other():
    message = CODE.replace("class", "class \ud800")
    result = guard(message)
    assert result.marked and result.message.endswith("class \ud800")


def test_the_paste_rule_is_the_one_the_benchmark_check_counts():
    benchmark = dataset.load()
    unmarked = sum(not paste_rule_marks(cluster.artifact) for cluster in benchmark.clusters)
    assert unmarked == 69
    assert "leaves 69 of 300 artifacts unmarked" in "\n".join(check().summary)
    assert paste_rule_marks("a\r\nb\r\nc") and not paste_rule_marks("a\r\nb")


# ---------------------------------------------------------------- conditions marked by a rule


def test_the_guard_studys_conditions_render_through_the_guard_and_the_paste_rule():
    benchmark = dataset.load()
    defined = conditions.load(GUARD_STUDY)
    builtin = conditions.builtin()
    counts = {"guarded": 0, "guarded-native": 0, "paste-rule": 0}
    for cluster in benchmark.clusters:
        newline, native = builtin.get("newline").message(cluster), builtin.get("native").message(cluster)
        boundary = builtin.get("boundary").message(cluster)
        assert defined.get("guarded").message(cluster) == guard(newline).message
        assert defined.get("guarded-native").message(cluster) == guard(native).message
        rule = defined.get("paste-rule").message(cluster)
        assert rule == (boundary if paste_rule_marks(cluster.artifact) else newline)
        counts["guarded"] += defined.get("guarded").message(cluster) == boundary
        counts["paste-rule"] += rule == boundary
        counts["guarded-native"] += guard(native).marked
    assert counts["paste-rule"] == 231 and counts["guarded"] >= 290 and counts["guarded-native"] >= 280


def test_the_guard_studys_condition_file_passes_the_check():
    result = check(conditions=conditions.load(GUARD_STUDY))
    assert result.problems == []


@pytest.mark.parametrize(("body", "expected"), [
    ('pool = "casual"\nmarking = "sometimes"\nopen = "<a>"\nclose = "</a>"',
     "conditions.mine.marking is 'sometimes', expected \"always\" or \"guard\" or \"paste-rule\""),
    ('pool = "casual"\nmarking = "guard"\nopen = "<a>"',
     "conditions.mine.close is missing: marking 'guard' puts both marker lines"),
    ('pool = "casual"\nmarking = "paste-rule"\nopen = "<a>"\nclose = "</a>"\nsame_prefix_as = "newline"',
     "conditions.mine.same_prefix_as: a condition with marking 'paste-rule' is marked message by message"),
])
def test_a_malformed_marking_is_one_line_naming_the_key(tmp_path, body, expected):
    path = tmp_path / "mine.toml"
    path.write_text(f"[conditions.mine]\n{body}\n", encoding="utf-8")
    with pytest.raises(UserError) as caught:
        conditions.load(path)
    assert str(caught.value).startswith(f"{path}: ") and expected in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_builtin_messages_do_not_move():
    """The marking key leaves every condition without it as it was (the built-ins' digest in test_conditions)."""
    boundary = conditions.builtin().get("boundary")
    assert boundary.marking == "always" and not boundary.marked_by_rule
    digest = hashlib.sha256()
    for cluster in dataset.load().clusters:
        digest.update(replace(boundary, marking="always").message(cluster).encode("utf-8"))
        assert boundary.laid_out(cluster.artifact) is boundary
    assert digest.hexdigest() == hashlib.sha256(
        "".join(boundary.message(c) for c in dataset.load().clusters).encode("utf-8")).hexdigest()
