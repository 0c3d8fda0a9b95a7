"""The guard's own rules on top of the seam finder (guard/tail.py, guard/lead.py): where the finder would cut the
paste's own last line, the guard does not mark; where the finder misses an instruction typed right above code,
the guard finds it. Every message here is made up for its rule; each has a control that stays as it was."""

from __future__ import annotations

import pytest

from guard.mark import BEGIN, END, guard

LETTER = ("Can you tidy this note?\n\nHi Sam,\n\nThe boiler man comes on Wednesday between nine and noon, so leave "
          "the side gate open for him and keep the dog inside.\n\n")
CODE = ("Why is this slow?\n\ndef total(rows):\n    result = 0\n    for row in rows:\n"
        "        result = result + row.price\n")
LINES = ("Make this flyer friendlier:\n\nThe garden club meets every Tuesday evening at the community hall on "
         "Elm Road.\nBring your own gloves and a trowel; seedlings are provided by the committee.\n")
POST = ("Improve the wording of my post:\n\nI moved my blog to a new host last week and since then every page "
        "loads twice as slowly, even the static ones.\n\n")
QUESTION = ("Tidy up my forum question:\n\nMy loop never stops:\n\n    while x > 0:\n        x = x + 1\n\n"
            "I expected it to end after a few steps, but it runs until I kill it.\n\n")
ABOVE = "why does this return None?\ndef first_even(numbers):\n    for n in numbers:\n        if n % 2 == 0:\n" \
        "            return n\n        break\n"


def pasted(message: str) -> str | None:
    """The text the guard put between its markers, or None when it did not mark."""
    result = guard(message)
    return message[result.artifact_start:result.artifact_end] if result.marked else None


@pytest.mark.parametrize("close", ["Cheers!\nJo", "With many thanks,\nPriya Shah (Year 11)",
                                   "Thank you for your patience,\nDr. Ana Ruiz\nClinic manager"])
def test_a_letters_close_and_signature_are_the_letters_own(close):
    """A sign-off line with a name under it, or any short closing that ends in a comma with a short signature
    under it, ends the pasted letter: marking the name (or the whole close) as the user's remark would put
    the letter's own last lines outside the markers. After the close, a remark is marked as before."""
    assert pasted(LETTER + close) is None
    assert pasted(LETTER + close + "\n\nbtw she is my sister") == LETTER.split("\n\n", 1)[1] + close


def test_an_indented_line_after_code_is_more_of_the_code():
    """A user does not indent a remark typed after code; a line indented under a code block (a last
    statement the finder does not read as code) is the block's own, not the user's."""
    assert pasted(CODE + "    assert result > 0") is None
    assert pasted(CODE + "btw it runs on python 3.12") == CODE.split("\n\n", 1)[1].rstrip("\n")


def test_a_line_set_apart_like_the_pastes_other_lines_says_nothing():
    """When every line of the paste's last paragraph is a unit of its own (a flyer, minutes, an invitation),
    one more written line under it stands on a line of its own only as the others do: without a marker of
    a remark it is the paste's last line. A typed remark under it, and a written one under a paragraph that
    runs on from line to line, are marked as before."""
    assert pasted(LINES + "Everyone is welcome to stay for tea afterwards.") is None
    assert pasted(LINES + "this goes on the noticeboard") == LINES.split("\n\n", 1)[1].rstrip("\n")
    runs_on = ("Make this flyer friendlier:\n\nThe garden club meets every Tuesday evening at the community hall "
               "on Elm Road, and\nbrings its own gloves and trowels, while seedlings are provided by the committee.")
    assert pasted(runs_on + "\nEveryone is welcome to stay for tea afterwards.") == runs_on.split("\n\n", 1)[1]


@pytest.mark.parametrize("ending", ["Has anyone else run into the same problem?", "Any ideas?"])
def test_a_written_question_that_points_nowhere_is_the_pastes_own(ending):
    """A question written as the paste is (a capital, no other sign of chat) that neither speaks to the reader
    nor points at the text ends a forum post as often as a user asks it: not marked. Typed in lower case, or
    pointing at the text ("Is this …"), it is the user's and is marked as before. The same after a paste that
    holds some code but ends in prose."""
    assert pasted(POST + ending) is None
    assert pasted(QUESTION + ending) is None
    body = POST.split("\n\n", 1)[1].rstrip("\n")
    assert pasted(POST + "is this too informal?") == pasted(POST + "Is this too informal?") == body


def test_an_instruction_typed_right_above_code_is_found():
    """A one-line instruction with the code pasted on the very next line (no blank line between them): the
    finder takes the lead up to the first line ending in a colon (a `def …:`), which makes it code, and
    finds nothing; the guard reads the first line as the instruction and marks the code."""
    code = ABOVE.split("\n", 1)[1].rstrip("\n")
    result = guard(ABOVE + "\nbtw this is python 3.11")
    assert ABOVE[result.artifact_start:result.artifact_end] == code
    assert result.message == ("why does this return None?\n" + BEGIN + "\n" + code + "\n" + END + "\n\n"
                              "btw this is python 3.11")
    crlf = (ABOVE + "\nbtw this is python 3.11").replace("\n", "\r\n")
    assert guard(crlf).message == result.message.replace("\n", "\r\n")
    assert pasted(ABOVE.rstrip("\n")) is None  # nothing after the code: nothing to mark


@pytest.mark.parametrize("tail", ["Thanks,\nCan you keep it under 50 words?", "Also,\nPlease keep the tone formal."])
def test_a_comma_line_over_a_request_is_a_remark_not_a_signature(tail):
    """What stands under a comma line may look like a signature only if it does not ask for anything: a request
    or a question under "Thanks," is the user's (review of the letter rule)."""
    assert pasted(LETTER + tail) == LETTER.split("\n\n", 1)[1].rstrip("\n")


@pytest.mark.parametrize("question", ["Is the ending too abrupt?", "Should the tone be more formal?",
                                      "Is my essay too long?", "Would a shorter title work better?"])
def test_a_written_question_about_the_text_is_a_remark(question):
    """A question naming the text or a part or quality of it (ending, tone, essay, title) is about the paste,
    written with a capital or not."""
    assert pasted(POST + question) == POST.split("\n\n", 1)[1].rstrip("\n")


def test_a_file_name_above_code_is_not_an_instruction():
    """The lead rule wants words over the code, not a file name: a message that is all paste stays unmarked."""
    message = "helpers.py\nimport os\nimport sys\n\ndef main():\n    print(os.getcwd())\n\n# end of file"
    assert pasted(message) is None
    assert pasted(message.replace("helpers.py", "tidy up helpers.py")) is not None


@pytest.mark.parametrize("message", ["\n\n", "\r\n\r\n", " \n\t\n ", "", "\n"])
def test_white_space_alone_is_not_marked(message):
    """A message of white space has no paragraph: no seam (it raised IndexError in the seam finder)."""
    result = guard(message)
    assert not result.marked and result.message == message


@pytest.mark.parametrize(("line", "code"), [("exit" + " " * 400 + "x", False), ("public " + "a" * 20000, False),
                                           ("return" + " " * 20000 + "x", True), ("thanks" + " " * 20000 + "x", False)],
                         ids=["exit-spaces", "public-word", "return-spaces", "sign-off-spaces"])
def test_lines_that_made_the_patterns_backtrack_are_classified(line, code):
    """Lines on which the code patterns (or the sign-off pattern) backtracked for seconds to hours are read as
    any other (their speed is measured in perf/guard_proxy.py, not here): the guard gives its answer."""
    from common.seams import rules

    assert rules.is_code_line(line) is code
    message = f"Fix the grammar:\n\nThe meeting went well and we agreed on all the points.\n{line}\n\nbtw for class"
    assert guard(message).marked in (True, False)


def test_a_refused_seam_says_so_in_its_reason():
    """Where the finder found a seam and the guard's own rules refused it, the reason says that (the proxy's
    X-Seam-Guard-Reason and counts), not "no seam": an operator can tell the two apart."""
    assert guard(LETTER + "Cheers!\nJo").reason == "tail is the paste's"
    assert guard("hello").reason == "no seam"
