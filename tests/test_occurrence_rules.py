"""The occurrence screen's rules, each on messages made up for it, and find_seam on whole messages.

Every public function of occurrence.rules has a test here (the last test keeps it so), with a case it must
accept and one it must refuse. None of these texts comes from a real chat log.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from occurrence import rules, segment
from occurrence.segment import find_seam

CODE = ("def area(radius):\n"
        "    \"\"\"The area of a circle of this radius.\"\"\"\n"
        "    return 3.14159 * radius ** 2\n")
PROSE = ("Our bakery opened in 1998 in a small shop near the station. Since then we have grown to three "
         "locations and a catering service, but we still bake every loaf by hand each morning before dawn, "
         "using the same sourdough starter our founder brought from her grandmother's kitchen.")


# ------------------------------------------------------------------------------------------- sizes and lines

def test_word_count_counts_tokens_with_a_letter_or_digit_and_each_chinese_or_japanese_character():
    assert rules.word_count("make it  shorter -- please 2x") == 5
    assert rules.word_count("这是一个测试") == 6
    assert rules.word_count("ok 好的") == 3
    assert rules.word_count(" \n ") == 0


def test_has_words_agrees_with_word_count():
    for text in ["", "one", "one two three", "这是 a test", "-- -- ok"]:
        for count in range(0, 6):
            assert rules.has_words(text, count) == (rules.word_count(text) >= count), (text, count)


def test_is_blank():
    assert rules.is_blank("  \t") and rules.is_blank("")
    assert not rules.is_blank(" x ")


def test_is_fence_takes_backticks_or_tildes_at_most_three_spaces_in():
    assert rules.is_fence("```") and rules.is_fence("```js") and rules.is_fence("  ~~~")
    assert not rules.is_fence("    ```")  # four spaces: an indented code line
    assert not rules.is_fence("see ``` above")


def test_symbol_share():
    assert rules.symbol_share("") == 0.0
    assert rules.symbol_share("a{}") == pytest.approx(2 / 3)
    assert rules.symbol_share("Plain words, no symbols.") == 0.0


@pytest.mark.parametrize("line", [
    "def area(radius):", "    return 3.14159 * radius ** 2", "import numpy as np", "}", "});", "end",
    "const total = items.length;", "SELECT name FROM users", "<div class=\"card\">", "</p>", "x = 1",
    "for (let i = 0; i < n; i++) {", "if x > 0:", "#include <stdio.h>", "// a comment", "@app.route('/')",
    "$ npm install", ">>> print(x)", "matrix[i][j] = {a_b: $c}", "self.log(f\"done: {n} items\")",
    "save_results(path, rows)", "displayName: 'Build the image'", "\"port\": 8080,", "enabled: true",
])
def test_is_code_line_accepts_code(line):
    assert rules.is_code_line(line)


@pytest.mark.parametrize("line", [
    "", "Please make it shorter.", "why does area() return a float?", "# Introduction", "I love this song",
    "The total is 3 (roughly).", "thanks!", "Return policy: Thirty days", "Note: keep it short",
    "Thanks (again)",
])
def test_is_code_line_refuses_prose(line):
    assert not rules.is_code_line(line)


def test_code_share_counts_non_blank_lines():
    assert rules.code_share(["def f():", "", "    return 1", "It returns one."]) == pytest.approx(2 / 3)
    assert rules.code_share(["", " "]) == 0.0


def test_mostly_code_is_a_code_share_of_one_half_or_more():
    assert rules.mostly_code(["x = 1", "", "Some words here."])
    assert not rules.mostly_code(["x = 1", "Some words.", "More words."])
    assert not rules.mostly_code(["", " "])
    lines = ["x = 1", "Words.", "y = 2", "Words.", "More words."]
    assert rules.mostly_code(lines) == (rules.code_share(lines) >= 0.5)


def test_is_indented():
    assert rules.is_indented("    x = 1") and rules.is_indented("\tx = 1")
    assert not rules.is_indented("  x = 1") and not rules.is_indented("    ")


# ------------------------------------------------------------------------------------------- the artifact

def test_artifact_kind_code_needs_two_lines_half_of_them_code():
    assert rules.artifact_kind(CODE.split("\n")) == "code"
    assert rules.artifact_kind(["x = 1"]) is None  # one line is no pasted block
    assert rules.artifact_kind(["x = 1", "and some words here", "and more words here"]) is None


def test_artifact_kind_prose_needs_forty_words():
    assert rules.artifact_kind([PROSE]) == "prose"
    assert rules.artifact_kind(["a few words", "on two lines"]) is None
    assert rules.artifact_kind(["word " * 39]) is None and rules.artifact_kind(["word " * 40]) == "prose"


# ------------------------------------------------------------------------------------------- the lead

def test_is_instruction_is_one_to_eighty_words_and_not_code():
    assert rules.is_instruction("Shorten this:")
    assert not rules.is_instruction("")
    assert not rules.is_instruction("word " * 81)
    assert not rules.is_instruction("import os\nimport sys")


def test_ends_with_colon():
    assert rules.ends_with_colon("Fix this code:  ") and rules.ends_with_colon("请翻译：")
    assert not rules.ends_with_colon("Fix this code.")


# ------------------------------------------------------------------------------------------- the tail

def test_remark_size_ok_is_one_to_forty_words_on_three_lines_at_most():
    assert rules.remark_size_ok("thanks")
    assert rules.remark_size_ok("one\ntwo\nthree")
    assert not rules.remark_size_ok("one\ntwo\nthree\nfour")
    assert not rules.remark_size_ok("word " * 41)
    assert not rules.remark_size_ok("?!")


def test_shorter_than_artifact_asks_for_half_the_artifact_at_most():
    assert rules.shorter_than_artifact("x" * 100, "y" * 50)
    assert not rules.shorter_than_artifact("x" * 100, "y" * 51)


def test_has_code_line():
    assert rules.has_code_line("looks fine\n}")
    assert not rules.has_code_line("looks fine to me")


def test_is_output_recognises_tracebacks_errors_logs_and_time_stamps():
    for tail in ["Traceback (most recent call last):", "ValueError: bad input", "[ERROR] disk full",
                 "2024-01-02 10:00:01 started", "(05:49) and that's the end of the video", "Process finished"]:
        assert rules.is_output(tail), tail
    for tail in ["java.lang.NullPointerException: null", "requests.exceptions.ConnectionError: refused",
                 "  DeprecationWarning: old API", "ErrorCode.ValueError.x: 3"]:
        assert rules.is_output(tail), tail
    for tail in ["I get an error when I run it", "Errors: none that I can see", "MyErrorHandler: is it ok?",
                 "see ValueError: above"]:
        assert not rules.is_output(tail), tail


def test_is_url_only():
    assert rules.is_url_only("https://example.org/a?b=c") and rules.is_url_only(" www.example.org ")
    assert not rules.is_url_only("see https://example.org for more")


def test_is_list_item():
    assert rules.is_list_item("- another item") and rules.is_list_item("3. third") and rules.is_list_item("b) two")
    assert not rules.is_list_item("make it a list")


def test_is_sign_off_needs_a_closing_and_a_name():
    assert rules.is_sign_off("Best regards,\nMaria Lopez")
    assert rules.is_sign_off("Cheers, Tom")
    assert rules.is_sign_off("Sincerely,\n[Your Name]")
    assert not rules.is_sign_off("thanks!")
    assert not rules.is_sign_off("thanks for the help")
    assert not rules.is_sign_off("make it warmer")


def test_is_heading_takes_title_case_of_three_words_or_more():
    assert rules.is_heading("Ten Tips For Better Sleep")
    assert not rules.is_heading("Better Sleep")
    assert not rules.is_heading("Can You Shorten It?")
    assert not rules.is_heading("make it about sleep")


def test_introduces_more():
    assert rules.introduces_more("And the second file:\nname,age")
    assert not rules.introduces_more("what do you think:")


def test_continues_questions():
    assert rules.continues_questions("What is your name?", "Q1. Where do you live?\nQ2. How old are you?")
    assert not rules.continues_questions("can you answer these?", "The survey has two parts.")
    assert not rules.continues_questions("thanks", "Where do you live?")


def test_is_dialogue_line_takes_a_speakers_name_and_a_colon_but_not_a_users_own_label():
    assert rules.is_dialogue_line("Maria: I never said that.")
    assert rules.is_dialogue_line("Dr. Patel (quietly): We should go.")
    assert not rules.is_dialogue_line("PS: it's for a school play")
    assert not rules.is_dialogue_line("Note: keep the names")
    assert not rules.is_dialogue_line("make Maria angrier")


def test_continues_sentence():
    assert rules.continues_sentence("and the river beyond it.", "We walked past the mill,")
    assert rules.continues_sentence("which closed in 1990.", "the old factory")
    assert not rules.continues_sentence("make it shorter", "The end.")
    assert not rules.continues_sentence("Make it shorter", "the old factory")


def test_is_interface_text_is_a_button_label_and_nothing_else():
    assert rules.is_interface_text("Share Prompt") and rules.is_interface_text(" Translate now ")
    assert rules.is_interface_text("지금 번역하기")
    assert not rules.is_interface_text("please translate it now")
    assert not rules.is_interface_text("Answer in English.지금 번역하기")


def test_is_template_line_recognises_what_prompt_extensions_append():
    for tail in ["Please write in English language.", "Reply in Français", "Answer in English.지금 번역하기",
                 "make it funnier\nPlease write in English (UK) language."]:
        assert rules.is_template_line(tail), tail
    assert not rules.is_template_line("Please write it in a formal tone, thanks")
    assert not rules.is_template_line("Reply in English.\nand keep it short")


def test_is_casual():
    for tail in ["btw it's for work", "FYI the deadline moved", "thx", "lol that's long", "ok now shorter :)",
                 "also keep the title"]:
        assert rules.is_casual(tail), tail
    assert not rules.is_casual("The deadline is in May.")


def test_is_request():
    for tail in ["Make it shorter", "can you add tests", "Please check the grammar", "btw, keep the rhyme",
                 "in Spanish", "rewrite it for kids", "do the same for chapter two"]:
        assert rules.is_request(tail), tail
    assert not rules.is_request("The dog barked at the mailman.")
    assert not rules.is_request("Notes were taken by the clerk.")


def test_is_question():
    assert rules.is_question("is that right?") and rules.is_question("对吗？")
    assert not rules.is_question("that is right.")


def test_addresses_model():
    assert rules.addresses_model("can you help") and rules.addresses_model("thank u")
    assert not rules.addresses_model("the youth club")


def test_is_first_person():
    assert rules.is_first_person("I need it by Monday") and rules.is_first_person("it's for my boss")
    assert not rules.is_first_person("The report is due Monday.")


def test_starts_lowercase():
    assert rules.starts_lowercase("  make it short")
    assert not rules.starts_lowercase("Make it short") and not rules.starts_lowercase("123")


def test_lacks_final_period():
    assert rules.lacks_final_period("make it short")
    assert not rules.lacks_final_period("Make it short.") and not rules.lacks_final_period("Short?")


def test_markers_names_every_marker_that_fires_in_a_fixed_order():
    assert rules.markers("Thanks.") == ("remark_casual",)
    assert rules.markers("I wrote this myself") == ("remark_first_person", "remark_no_final_period")
    assert set(rules.markers("btw can you make it shorter? my boss wants it")) == set(segment.FEATURES[8:]) - {
        "remark_template"}
    assert "remark_template" in rules.markers("Please write in English language.")


def test_rejects_gives_the_first_reason_or_none():
    code = CODE.strip()
    assert rules.rejects("it's for my class", code, "code") is None
    assert rules.rejects("it's for my class", code, "fenced") is None
    assert rules.rejects("word " * 41, code, "code") == "size"
    assert rules.rejects("x" * 100, "y" * 150, "code") == "longer than half the artifact"
    assert rules.rejects("print(area(2))", code, "code") == "code"
    assert rules.rejects("NameError: name 'pi' is not defined", code, "code") == "output"
    assert rules.rejects("https://example.org/x", code, "code") == "link"
    assert rules.rejects("- and one more", code, "code") == "list item"
    assert rules.rejects("Best,\nSam", code, "code") == "sign-off"
    assert rules.rejects("Part two:\nmore data", code, "code") == "announces more"
    assert rules.rejects("The Next Big Chapter", code, "code") == "heading"
    assert rules.rejects("Tom: I'll be there at six.", code, "code") == "dialogue"
    assert rules.rejects("Share Prompt", code, "code") == "interface text"


def test_after_prose_a_remark_needs_a_strong_marker_and_must_not_continue_a_list_of_questions():
    assert rules.rejects("It was founded in 1998.", PROSE, "prose") == "no strong marker after prose"
    assert rules.rejects("I founded it in 1998", PROSE, "prose") == "no strong marker after prose"  # weak only
    assert rules.rejects("make it sound friendlier", PROSE, "prose") is None
    assert rules.rejects("Why did you choose us?", "Who are you?\nWhat do you do?\n" * 5, "prose") == \
        "next question of a list"
    assert rules.rejects("You will love our bread.", PROSE, "prose") == "no strong marker after prose"  # "you" is weak
    cut = PROSE.removesuffix(" kitchen.")
    assert rules.rejects("kitchen, please keep this", cut, "prose", "newline") == "rest of a wrapped sentence"
    assert rules.rejects("kitchen, please keep this", cut, "prose", "blank") is None


def _within(seconds: float, call, *args):
    """call(*args), failed if it runs longer than `seconds` (SIGALRM interrupts the regular expression engine,
    which checks for signals as it goes)."""
    import signal

    def late(signum, frame):
        raise AssertionError(f"{call.__name__} took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return call(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="needs signal.setitimer (POSIX)")
def test_no_rule_takes_more_than_linear_time_on_a_long_line():
    """Lines that took the rules quadratic or exponential time, stalling the screen on one message: a long run
    of punctuation (word counting retried it at every character), a lower-case word followed by capitals and
    no colon (a DNA sequence: the camelCase key pattern backtracked exponentially), a dotted name of many
    "Error." parts (the exception-name pattern retried its end at each)."""
    assert _within(10, rules.word_count, "-" * 300_000) == 0
    assert _within(10, rules.has_words, "=" * 300_000 + " ok", 1)
    assert not _within(10, rules.is_code_line, "atg" + "CGTA" * 20)
    assert _within(10, rules.is_code_line, "atg" + "CGTA" * 20 + ": yes")  # still a camelCase key line
    assert _within(10, rules.is_code_line, "a_" * 40)  # code by its symbols, decided after the key pattern
    assert _within(10, rules.is_output, "Error." * 100_000 + "Error: x")
    message = "Fix this:\n" + ("-" * 200_000 + "\n") * 3 + "\nbtw thanks " + "Error." * 50_000
    assert _within(20, find_seam, message) is None


def test_every_rule_has_a_test_here():
    source = Path(__file__).read_text(encoding="utf-8")
    public = [name for name, value in vars(rules).items()
              if inspect.isfunction(value) and value.__module__ == rules.__name__ and not name.startswith("_")]
    untested = [name for name in public if f"rules.{name}(" not in source]
    assert untested == []


# ------------------------------------------------------------------------------------------- whole messages

def _parts(message: str):
    seam = find_seam(message)
    assert seam is not None
    return (message[:seam.lead_end], message[seam.artifact_start:seam.artifact_end],
            message[seam.remark_start:seam.remark_end], seam)


def test_code_then_a_remark_after_a_blank_line():
    lead, artifact, remark, seam = _parts(f"Add type hints:\n\n{CODE}\nbtw it's for my class\n")
    assert (lead, artifact, remark) == ("Add type hints:", CODE.rstrip("\n"), "btw it's for my class")
    assert (seam.artifact_kind, seam.separator) == ("code", "blank")
    assert "code_block" in seam.features and "lead_colon" in seam.features and "remark_casual" in seam.features
    assert (seam.artifact_lines, seam.remark_lines, seam.remark_words, seam.lead_words) == (3, 1, 5, 3)


def test_prose_then_a_remark_on_the_next_line():
    lead, artifact, remark, seam = _parts(f"Make this friendlier:\n{PROSE}\nbtw this goes on our website")
    assert (artifact, remark, seam.separator, seam.artifact_kind) == (PROSE, "btw this goes on our website",
                                                                       "newline", "prose")
    assert "remark_after_newline" in seam.features


def test_the_lead_is_the_first_paragraph_when_no_line_ends_in_a_colon():
    lead, artifact, remark, _ = _parts(f"Please proofread this for me\n\n{PROSE}\n\nthanks a lot!")
    assert (lead, remark) == ("Please proofread this for me", "thanks a lot!")


def test_fenced_code_then_a_question():
    message = f"This crashes.\n\n```python\n{CODE}```\n\nwhat am I missing?"
    lead, artifact, remark, seam = _parts(message)
    assert artifact.startswith("```python") and artifact.endswith("```") and remark == "what am I missing?"
    assert seam.artifact_kind == "fenced" and "code_fence" in seam.features


def test_offsets_are_python_string_indices_through_crlf_and_non_ascii():
    message = f"Übersetze das:\r\n\r\n{PROSE}\r\n\r\nbitte kurz halten, thanks 🙂"
    lead, artifact, remark, seam = _parts(message)
    assert lead == "Übersetze das:" and artifact == PROSE and remark == "bitte kurz halten, thanks 🙂"
    assert seam.separator == "blank"


@pytest.mark.parametrize("message", [
    "",
    "just a question?",
    f"{CODE}\nwhy does it fail?",  # no instruction before the paste
    f"Fix it:\n\n{CODE}",  # nothing after the paste
    f"Fix it:\n\n{CODE}\nprint(area(2))",  # the last line is code
    f"Fix it:\n```\n{CODE}\nand why?",  # an unclosed fence
    f"Shorten:\n\n{PROSE}\n\nIt remains family-owned today.",  # prose's own last sentence
    f"Shorten:\n\n{PROSE}\n\nKind regards,\nAnna",  # a letter's sign-off
    "Fix it:\n\nx = 1\n\nthanks",  # the paste is one short line
    f"Shorten:\n\n{PROSE}\n\n" + "and then, please, " * 12,  # the tail is as long as the paste
])
def test_messages_without_the_shape_are_not_candidates(message):
    assert find_seam(message) is None


def test_features_are_known_names_in_a_fixed_order():
    seam = find_seam(f"Make this friendlier:\n{PROSE}\nbtw this goes on our website, can you keep it short?")
    assert list(seam.features) == [name for name in segment.FEATURES if name in seam.features]


def test_every_rule_has_a_docstring_example():
    """docs/OCCURRENCE.md promises one (they run in tests/test_occurrence_records.py); 13 rules had none."""
    public = [name for name, value in vars(rules).items()
              if inspect.isfunction(value) and value.__module__ == rules.__name__ and not name.startswith("_")]
    assert [name for name in public if ">>> " not in (getattr(rules, name).__doc__ or "")] == []
