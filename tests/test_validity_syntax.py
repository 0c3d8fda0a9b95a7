"""Syntactic validity: parsing, echoed boundary-marker lines, and parsing once they are removed; of the edited
text and of the reply as returned."""

import doctest

import pytest

from benchmark.render import BEGIN_MARKER, END_MARKER
from validity import syntax
from validity.syntax import (
    as_returned,
    check,
    check_reply,
    has_marker_line,
    is_marker_line,
    parse_error,
    remove_marker_lines,
)

VALID = "def add(a: int, b: int) -> int:\n    return a + b"
INVALID = "def add(a, b)\n    return a + b"  # missing colon


def test_valid_code_parses_and_has_no_marker():
    result = check(VALID, VALID)
    assert result.parses and result.error is None
    assert not result.echoes_marker and not result.marker_in_text
    assert result.parses_without_markers and not result.recovered


def test_invalid_code_does_not_parse_and_says_where():
    result = check(INVALID, INVALID)
    assert not result.parses
    assert result.error.startswith("line 1:")
    assert not result.parses_without_markers  # no marker to blame
    assert not result.recovered


@pytest.mark.parametrize("marker", [BEGIN_MARKER, END_MARKER, "**BEGIN TEXT**", "end text",
                                    "  -----END  TEXT-----  "])
def test_an_echoed_marker_line_breaks_the_code_and_removing_it_recovers_it(marker):
    edited = f"{marker}\n{VALID}"
    result = check(edited, edited)
    assert result.echoes_marker and result.marker_in_text
    assert not result.parses
    assert result.parses_without_markers and result.recovered


def test_a_marker_echoed_as_a_comment_is_an_echo_that_does_not_break_the_code():
    edited = f"# --- END TEXT ---\n{VALID}"
    result = check(edited, edited)
    assert result.echoes_marker and result.marker_in_text
    assert result.parses and not result.recovered


def test_a_marker_outside_the_edited_text_is_an_echo_but_not_in_the_text():
    reply = f"Here it is:\n{BEGIN_MARKER}\n{VALID}\n{END_MARKER}\nbtw lunch"
    result = check(reply, VALID)
    assert result.echoes_marker and not result.marker_in_text
    assert result.parses and not result.recovered


def test_invalid_code_with_a_marker_stays_invalid_when_the_marker_is_not_the_cause():
    edited = f"{BEGIN_MARKER}\n{INVALID}"
    result = check(edited, edited)
    assert result.marker_in_text and not result.parses and not result.parses_without_markers


@pytest.mark.parametrize("line", ["x = 'BEGIN TEXT'", "# the END TEXT line", "BEGIN", "TEXT", "BEGINTEXT",
                                  "print(END, TEXT)"])
def test_lines_with_other_words_are_not_marker_lines(line):
    assert not is_marker_line(line)
    assert remove_marker_lines(f"a = 1\n{line}") == f"a = 1\n{line}"


def test_remove_marker_lines_keeps_everything_else_in_order():
    text = f"a = 1\n{BEGIN_MARKER}\nb = 2\n**END TEXT**\nc = 3"
    assert has_marker_line(text)
    assert remove_marker_lines(text) == "a = 1\nb = 2\nc = 3"


def test_python_2_code_is_invalid_python_3():
    assert parse_error("print 'hello'") is not None
    assert parse_error("print('hello')") is None


def test_odd_input_is_reported_not_raised():
    assert parse_error("x = 1\0") is not None  # null byte
    assert parse_error("\tif x:\n  \tpass\n        pass") is not None  # inconsistent tabs
    assert parse_error("s = '\\d'") is None  # a SyntaxWarning is still valid code


@pytest.mark.parametrize("word", ["BEGIN TEXT", "END TEXT"])
@pytest.mark.parametrize("style", ["{}", "**{}**", "-----{}-----", "# --- {} ---", "  {}  "])
def test_marker_lines_are_the_lines_the_scorer_cuts_at(word, style):
    from scorer.extract import extract
    line = style.format(word.lower() if style == "  {}  " else word)
    assert is_marker_line(line)
    reply = f"{line}\nx = 1" if word.startswith("BEGIN") else f"x = 1\n{line}\nbtw lunch"
    assert extract(reply, "x = 1", "code").text == "x = 1"
    assert remove_marker_lines(f"x = 1\n{line}") == "x = 1"


# ---------------------------------------------------------------- the reply as returned


@pytest.mark.parametrize("reply", [
    f"```python\n{VALID}\n```", f"```\n{VALID}\n```\n", f"\n\n```py\n{VALID}\n```\n\n",
    f"~~~python\n{VALID}\n~~~", f"````python\n{VALID}\n`````", f"   ```python\n{VALID}\n   ```  ",
    f"```python\r\n{VALID}\r\n```\r\n",
])
def test_a_reply_that_is_one_fenced_block_is_read_without_its_fence(reply):
    assert as_returned(reply) == (VALID, True)
    result = check_reply(reply)
    assert result.fenced and result.parses and not result.recovered


@pytest.mark.parametrize("reply", [
    f"Here is the code:\n```python\n{VALID}\n```",  # a preamble
    f"```python\n{VALID}\n```\nThis adds two numbers.",  # a note after the block
    f"```python\n{VALID}\n```\n\n```python\n{VALID}\n```",  # two blocks: the first fence closes early
    f"```python\n{VALID}",  # never closed
    f"{VALID}\n```",  # the opening fence left out
    f"```python\n{VALID}\n```python",  # a fence with an info string does not close
    f"````python\n{VALID}\n```",  # a shorter fence does not close
    f"~~~\n{VALID}\n```",  # nor one of the other character
    f"```py`thon\n{VALID}\n```",  # a backtick in a backtick fence's info string: not a fence
    f"```python\n{VALID}\n    ```",  # indented four spaces: content, not a fence
])
def test_anything_else_is_parsed_as_returned(reply):
    assert as_returned(reply) == (reply, False)
    result = check_reply(reply)
    assert not result.fenced and not result.parses and result.error is not None
    assert not result.echoes_marker and not result.recovered


def test_bare_code_is_parsed_whole():
    assert as_returned(VALID) == (VALID, False)
    assert check_reply(VALID).parses
    assert as_returned("") == ("", False) and check_reply("").parses  # nothing: valid Python, as returned
    assert not check_reply(INVALID).parses and not check_reply(INVALID).parses_without_markers


@pytest.mark.parametrize("reply", [
    f"{BEGIN_MARKER}\n{VALID}\n{END_MARKER}",  # echoed around bare code
    f"```python\n{BEGIN_MARKER}\n{VALID}\n{END_MARKER}\n```",  # inside the fence
    f"{BEGIN_MARKER}\n```python\n{VALID}\n```\n**END TEXT**\n",  # around the fence: removed, one block is left
    f"{VALID}\n\n-----END TEXT-----",
])
def test_echoed_marker_lines_make_a_reply_invalid_and_removing_them_recovers_it(reply):
    result = check_reply(reply)
    assert result.echoes_marker and not result.parses
    assert result.parses_without_markers and result.recovered


def test_talk_around_echoed_markers_is_not_recovered():
    reply = f"Here's a revised version:\n\n**BEGIN TEXT**\n{VALID}\n**END TEXT**\nbtw lunch"
    result = check_reply(reply)
    assert result.echoes_marker and not result.parses and not result.recovered
    # the kit's reading of the same reply: the extraction cuts at the markers, and the edited text parses
    assert check(reply, VALID).parses


def test_a_marker_echoed_as_a_comment_leaves_the_reply_valid():
    result = check_reply(f"# --- END TEXT ---\n{VALID}")
    assert result.echoes_marker and result.parses and not result.recovered


def test_the_examples_in_the_docstrings_hold():
    result = doctest.testmod(syntax)
    assert result.attempted >= 2 and result.failed == 0
