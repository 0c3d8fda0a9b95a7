"""Edited-text extraction on realistic replies of every genre (scorer/extract.py)."""

import pytest

from scorer.extract import extract

CODE = '''def add(a, b):
    """Return the sum of a and b."""
    return a + b'''

PROSE = ("The cathedral of Lyon was completed in 1480. It was enlarged twice during the following "
         "century, and its original facade survives.")

LETTER = '''"I have been thinking of you all the morning," said Jane.

Elizabeth smiled, and made no answer.

I hope you are well, and that the weather at Longbourn is kinder than here.'''


def test_code_fence_with_preamble_and_trailing_note_keeps_only_the_code():
    reply = ("Here's the fixed function:\n\n```python\n" + CODE + "\n```\n\n"
             "I corrected the docstring typo. Let me know if you need anything else!")
    result = extract(reply, CODE, "code")
    assert result.text == CODE
    assert result.method == "fence"
    assert result.cut_before == "Here's the fixed function:"
    assert result.cut_after.startswith("I corrected the docstring typo.")


def test_code_comment_absorbing_the_remark_stays_inside_the_fence():
    body = CODE + "\n    # this goes to the whole team after lunch"
    result = extract("```python\n" + body + "\n```\nNote: I also kept your signature.", CODE, "code")
    assert result.text == body
    assert result.cut_after == "Note: I also kept your signature."


def test_longest_fence_wins_when_there_are_several():
    reply = ("```python\n" + CODE + "\n```\n\nYou can call it like this:\n\n```python\nadd(1, 2)\n```")
    result = extract(reply, CODE, "code")
    assert result.text == CODE
    assert "add(1, 2)" in result.cut_after


def test_longer_outer_fence_keeps_an_inner_fence_as_content():
    inner = "Use it like this:\n```\nadd(1, 2)\n```\nand that is all."
    result = extract("````markdown\n" + inner + "\n````\nDone.", inner)
    assert result.text == inner
    assert result.cut_after == "Done."


FAQ = """A slash in the argument list of a function marks the parameters before it as positional-only.
For example, divmod accepts positional-only parameters:

   >>> help(divmod)
   divmod(x, y, /)

Calling divmod with keyword arguments would therefore lead to an error."""


def test_prose_around_fenced_code_examples_is_all_edited_text():
    reply = ("Here's a beginner-friendly version:\n\n"
             "A slash (`/`) in a function's parameter list means the parameters before it are positional-only: "
             "you pass them by position, never by name.\n\n```python\n>>> help(divmod)\ndivmod(x, y, /)\n```\n\n"
             "So calling `divmod(x=3, y=4)` raises an error. This goes out with Friday's newsletter.\n\n"
             "Let me know if you want it shorter!")
    result = extract(reply, FAQ)
    assert result.method == "plain"
    assert result.text.startswith("A slash (`/`)") and "```python" in result.text
    assert result.text.endswith("This goes out with Friday's newsletter.")
    assert result.cut_before == "Here's a beginner-friendly version:"
    assert result.cut_after == "Let me know if you want it shorter!"


def test_prose_returned_inside_one_fence_is_taken_from_the_fence():
    reply = "Here you go:\n\n```text\n" + FAQ + "\n```\n\nI kept the example as it was."
    result = extract(reply, FAQ)
    assert (result.method, result.text) == ("fence", FAQ)


def test_unclosed_fence_runs_to_the_end_of_the_reply():
    result = extract("Here you go:\n```python\n" + CODE + "\n", CODE, "code")
    assert result.text == CODE
    assert result.cut_before == "Here you go:"


def test_plain_prose_with_preamble_and_changes_list():
    reply = ("Sure! Here is the revised text:\n\n" + PROSE + "\n\n**Changes made:**\n- fixed \"completd\"\n"
             "- fixed \"enlarge\"")
    result = extract(reply, PROSE)
    assert result.text == PROSE
    assert result.method == "plain"
    assert result.cut_before == "Sure! Here is the revised text:"
    assert result.cut_after.startswith("**Changes made:**")


def test_commentary_acknowledging_the_left_out_remark_is_cut():
    reply = (PROSE + "\n\nI left out your last line (\"btw this goes to the whole team after lunch\") "
             "since it reads as a note to me rather than part of the text.")
    result = extract(reply, PROSE)
    assert result.text == PROSE
    assert "whole team after lunch" in result.cut_after


def test_note_to_user_after_a_horizontal_rule_is_cut_with_the_rule():
    reply = PROSE + "\n\n---\n\nNote: I didn't include the comment about lunch; it isn't part of the text."
    result = extract(reply, PROSE)
    assert result.text == PROSE
    assert result.cut_after.startswith("---")


def test_in_document_note_line_is_kept_as_part_of_the_text():
    reply = "Here is the edited text:\n\n" + PROSE + "\n\nNote: this goes to the whole team after lunch."
    result = extract(reply, PROSE)
    assert result.text.endswith("Note: this goes to the whole team after lunch.")
    assert result.cut_after == ""


def test_remark_appended_as_last_paragraph_is_kept():
    reply = PROSE + "\n\nbtw this goes to the whole team after lunch"
    assert extract(reply, PROSE).text == reply


def test_paragraph_found_in_the_artifact_is_never_cut_even_if_it_opens_like_commentary():
    # Jane's letter opens "I hope you are well": dialogue of the source, not a note to the user.
    result = extract(LETTER, LETTER)
    assert result.text == LETTER
    assert result.cut_after == ""


def test_dialogue_opening_with_a_quotation_is_not_taken_for_a_preamble():
    edited = LETTER.replace("morning", "mornings")  # edited, so no longer verbatim in the artifact
    assert extract(edited, LETTER).text == edited


def test_colon_line_preamble_is_cut_only_when_not_in_the_artifact():
    artifact = "The rules are as follows:\n\nNo dogs. No bicycles."
    assert extract(artifact, artifact).text == artifact
    result = extract("Corrected version below:\n\n" + PROSE, PROSE)
    assert result.text == PROSE
    assert result.cut_before == "Corrected version below:"


def test_code_line_ending_in_colon_is_not_a_preamble():
    code = "def add(a, b):\n\n    return a + b"
    assert extract(code, "def plus(a, b):\n    return a + b", "code").text == code


def test_a_single_paragraph_is_never_cut_away_entirely():
    reply = "I have no changes to suggest; the text is already correct."
    assert extract(reply, PROSE).text == reply


def test_boundary_markers_delimit_the_text_and_cut_what_follows_the_end_marker():
    reply = ("-----BEGIN TEXT-----\n" + PROSE + "\n-----END TEXT-----\n"
             "btw this goes to the whole team after lunch")
    result = extract(reply, PROSE)
    assert result.text == PROSE
    assert result.method == "markers"
    assert result.cut_before == "-----BEGIN TEXT-----"
    assert result.cut_after.endswith("whole team after lunch")


def test_markers_inside_a_fence():
    reply = "Here it is:\n```\n-----BEGIN TEXT-----\n" + PROSE + "\n-----END TEXT-----\n```\nHope this helps."
    result = extract(reply, PROSE)
    assert result.text == PROSE
    assert result.method == "fence"
    assert result.cut_before == "Here it is:\n-----BEGIN TEXT-----"
    assert result.cut_after == "-----END TEXT-----\nHope this helps."


def test_windows_line_endings_and_curly_apostrophes():
    reply = "Here\u2019s the edited text:\r\n\r\n" + PROSE.replace("\n", "\r\n") + "\r\n\r\nI\u2019ve fixed two typos."
    result = extract(reply, PROSE)
    assert result.text == PROSE
    assert result.cut_after == "I\u2019ve fixed two typos."


def test_markdown_heading_before_commentary_in_prose():
    reply = PROSE + "\n\n### Summary of changes\n- two typos"
    assert extract(reply, PROSE).text == PROSE


def test_python_comment_paragraph_is_not_taken_for_commentary_in_code():
    code = CODE + "\n\n# I left this helper here for the team lunch script"
    assert extract(code, CODE, "code").text == code


# Shapes seen in real small-model traces (SmolLM2-135M): the code is written without an
# opening fence, closed with a bare fence line, and followed by an explanation to the user.
CODE_COMMENTED = CODE + "\n    # this goes to the whole team after lunch"


def test_a_closing_fence_whose_opening_was_left_out_ends_the_code():
    reply = CODE_COMMENTED + "\n```\n\nThis function adds a and b."
    result = extract(reply, CODE, "code")
    assert (result.method, result.text) == ("fence", CODE_COMMENTED)
    assert result.cut_before == "" and result.cut_after == "This function adds a and b."


def test_a_left_out_opening_fence_in_code_is_the_code_even_when_the_explanation_repeats_more_words():
    # The explanation names more of the artifact's words than the rewritten code does; in a code
    # reply the block the model closed is still the code, and the explanation is talk to the user.
    artifact = 'def add(a, b):\n    """Return the sum of two integers a and b."""\n    return a + b'
    code = "def add(a, b):\n    # this goes to the whole team after lunch\n    return a + b"
    explanation = "This function returns the sum of the two integers."
    reply = code + "\n```\n\n" + explanation
    result = extract(reply, artifact, "code")
    assert (result.method, result.text, result.cut_after) == ("fence", code, explanation)


def test_in_prose_a_left_out_opening_fence_still_yields_to_the_word_comparison():
    artifact = "The cathedral was completed in 1480 and enlarged twice in the following century."
    prose = "Completed in 1480, the church grew."
    reply = prose + "\n```\n\nThe cathedral was completed in 1480 and enlarged twice in the following century."
    result = extract(reply, artifact, "prose")
    assert result.method == "plain" and result.text.startswith(prose)


def test_a_left_out_opening_fence_after_a_preamble_and_before_a_fenced_example():
    reply = ("Here's the fixed code:\n\n" + CODE_COMMENTED + "\n```\n\nYou can call it like this:\n\n"
             "```python\nadd(1, 2)\n```")
    result = extract(reply, CODE, "code")
    assert (result.method, result.text) == ("fence", CODE_COMMENTED)
    assert result.cut_before == "Here's the fixed code:"
    assert result.cut_after.startswith("You can call it like this:")


def test_a_bare_unclosed_fence_after_only_a_preamble_still_opens_the_code():
    result = extract("Here you go:\n```\n" + CODE + "\n", CODE, "code")
    assert (result.method, result.text, result.cut_before) == ("fence", CODE, "Here you go:")


def test_restyled_boundary_markers_still_delimit_the_text():
    reply = "**BEGIN TEXT**\n" + PROSE + "\n**END TEXT**\n\nbtw this goes to the whole team after lunch"
    result = extract(reply, PROSE)
    assert (result.method, result.text) == ("markers", PROSE)
    assert result.cut_after.endswith("whole team after lunch")


def test_a_lone_begin_marker_does_not_stop_rule_3_from_cutting_a_note_to_the_user():
    note = "I left out your note that this goes to the whole team after lunch."
    result = extract("-----BEGIN TEXT-----\n" + PROSE + "\n\n" + note, PROSE)
    assert (result.method, result.text) == ("markers", PROSE)
    assert (result.cut_before, result.cut_after) == ("-----BEGIN TEXT-----", note)


def test_a_lone_end_marker_does_not_stop_rule_3_from_cutting_a_preamble():
    result = extract("Here is the revised text:\n\n" + PROSE + "\n-----END TEXT-----\nbtw lunch", PROSE)
    assert (result.method, result.text) == ("markers", PROSE)
    assert result.cut_before == "Here is the revised text:"
    assert result.cut_after == "-----END TEXT-----\nbtw lunch"


NOTES_TO_THE_USER = [
    "**Note:** I left out your comment about the whole team after lunch.",
    "__Note__: I didn't include the line about the whole team after lunch.",
    "Note \u2014 I left out the remark about the whole team after lunch.",
    "P.S. I left out the note about the whole team after lunch.",
    "Also, I didn't include \"btw this goes to the whole team after lunch\".",
    "The last line of your message (\"btw this goes to the whole team after lunch\") isn't part of the "
    "text, so I left it out.",
    "It looks like the final line (\"this goes to the whole team after lunch\") was meant for me.",
    "Regarding the comment about the whole team after lunch: it is not part of the text.",
    "Good luck sharing it with the whole team after lunch!",
    "Hope the whole team after lunch likes it!",
]


@pytest.mark.parametrize("note", NOTES_TO_THE_USER)
def test_notes_to_the_user_that_mention_the_remark_are_cut(note):
    result = extract(PROSE + "\n\n" + note, PROSE)
    assert result.text == PROSE
    assert result.cut_after == note


@pytest.mark.parametrize("note", ["**Note:** this goes to the whole team after lunch.",
                                  "Note \u2014 the whole team reads this after lunch.",
                                  "The whole team reads the last line after lunch."])
def test_notes_for_the_documents_reader_are_kept(note):
    assert extract(PROSE + "\n\n" + note, PROSE).text == PROSE + "\n\n" + note
