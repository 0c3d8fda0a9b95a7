"""The occurrence screen's rules, each on messages made up for it, and find_seam on whole messages.

Every public function of common.seams.rules has a test here (the last test keeps it so), with a case it must
accept and one it must refuse. None of these texts comes from a real chat log.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from common.seams import layout, letters, remarks, rules, segment, tone
from common.seams.segment import find_seam

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
    assert rules.artifact_kind(["x = 1", "and some words", "and more"]) is None
    # one code line is a block when it is long: a shell pipeline, a query
    assert rules.artifact_kind(["find . -type f -name '*.log' -mtime +30 | xargs gzip"]) == "code"
    assert rules.artifact_kind(["ls -la"]) is None


def test_artifact_kind_prose_needs_ten_words():
    assert rules.artifact_kind([PROSE]) == "prose"
    assert rules.artifact_kind(["a few words", "on two lines"]) is None
    assert rules.artifact_kind(["word " * 9]) is None and rules.artifact_kind(["word " * 10]) == "prose"


def test_yaml_keys_make_a_block_code_but_not_a_tail():
    yaml = ["apiVersion: apps/v1", "kind: Deployment", "metadata:", "  name: billing-api", "spec:", "  replicas: 2"]
    assert rules.artifact_kind(yaml) == "code"
    assert rules.is_block_line("metadata:") and rules.is_block_line("  name: billing-api")
    assert not rules.is_code_line("kind: Deployment")  # so "fyi: urgent" after a paste stays a remark
    assert not rules.is_block_line("Note: this is for the staging cluster")
    assert rules.is_instruction("Proofread:")  # a one-word lead with a colon is an instruction, not a YAML key


def test_csv_rows_plain_calls_shell_options_are_code_lines_and_output_lines_block_lines():
    for line in ["2024-01-03,north,120.50", "a\tb\tc", "foo(v)", "map(f, x)", "grep -rn --include '*.py' x .",
                 "exit 0"]:
        assert rules.is_code_line(line), line
    for line in ["  at com.acme.App.main(App.java:27)", "[09:35] Marta: ok thx"]:
        assert rules.is_block_line(line) and not rules.is_code_line(line), line
    for line in ["thanks (really)", "one, two, three words", "I use -v sometimes", "a well-known fact"]:
        assert not rules.is_code_line(line), line


def test_is_output_line():
    assert rules.is_output_line("Traceback (most recent call last):")
    assert rules.is_output_line("[09:35] Marta: ok thx") and rules.is_output_line("(05:49) the end")
    assert not rules.is_output_line("see you at 10:30 tomorrow")


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
    assert remarks.remark_size_ok("thanks")
    assert remarks.remark_size_ok("one\ntwo\nthree")
    assert not remarks.remark_size_ok("one\ntwo\nthree\nfour")
    assert not remarks.remark_size_ok("word " * 41)
    assert not remarks.remark_size_ok("?!")


def test_shorter_than_artifact_asks_for_the_artifact_at_most():
    assert remarks.shorter_than_artifact("x" * 100, "y" * 100)
    assert not remarks.shorter_than_artifact("word " * 20, "word " * 21)
    # or as many words: Japanese says in few characters what English says in many
    japanese = "「もう帰るの？」「うん、明日早いから。」"
    assert remarks.shorter_than_artifact(japanese, "it's from a manga a friend translates")


def test_has_code_line():
    assert remarks.has_code_line("looks fine\n}")
    assert not remarks.has_code_line("looks fine to me")


def test_is_output_recognises_tracebacks_errors_logs_and_time_stamps():
    for tail in ["Traceback (most recent call last):", "ValueError: bad input", "[ERROR] disk full",
                 "2024-01-02 10:00:01 started", "(05:49) and that's the end of the video", "Process finished"]:
        assert remarks.is_output(tail), tail
    for tail in ["java.lang.NullPointerException: null", "requests.exceptions.ConnectionError: refused",
                 "  DeprecationWarning: old API", "ErrorCode.ValueError.x: 3"]:
        assert remarks.is_output(tail), tail
    for tail in ["I get an error when I run it", "Errors: none that I can see", "MyErrorHandler: is it ok?",
                 "see ValueError: above"]:
        assert not remarks.is_output(tail), tail


def test_is_url_only():
    assert remarks.is_url_only("https://example.org/a?b=c") and remarks.is_url_only(" www.example.org ")
    assert not remarks.is_url_only("see https://example.org for more")


def test_is_list_item():
    assert remarks.is_list_item("- another item") and remarks.is_list_item("3. third")
    assert remarks.is_list_item("b) two") and remarks.is_list_item("5/ Try it for a week.")
    assert not remarks.is_list_item("make it a list")


def test_is_sign_off_needs_a_closing_and_a_name():
    assert letters.is_sign_off("Best regards,\nMaria Lopez")
    assert letters.is_sign_off("Cheers, Tom")
    assert letters.is_sign_off("Sincerely,\n[Your Name]")
    assert not letters.is_sign_off("thanks!")
    assert not letters.is_sign_off("thanks for the help")
    assert not letters.is_sign_off("make it warmer")


def test_is_heading_takes_title_case_of_three_words_or_more():
    assert remarks.is_heading("Ten Tips For Better Sleep")
    assert not remarks.is_heading("Better Sleep")
    assert not remarks.is_heading("Can You Shorten It?")
    assert not remarks.is_heading("make it about sleep")


def test_introduces_more():
    assert remarks.introduces_more("And the second file:\nname,age")
    assert not remarks.introduces_more("what do you think:")


def test_continues_questions():
    assert layout.continues_questions("What is your name?", "Q1. Where do you live?\nQ2. How old are you?")
    assert not layout.continues_questions("can you answer these?", "The survey has two parts.")
    assert not layout.continues_questions("thanks", "Where do you live?")


def test_is_dialogue_line_takes_a_speakers_name_and_a_colon_but_not_a_users_own_label():
    assert remarks.is_dialogue_line("Maria: I never said that.")
    assert remarks.is_dialogue_line("Dr. Patel (quietly): We should go.")
    assert not remarks.is_dialogue_line("PS: it's for a school play")
    assert not remarks.is_dialogue_line("Note: keep the names")
    assert not remarks.is_dialogue_line("make Maria angrier")


def test_continues_sentence():
    assert layout.continues_sentence("and the river beyond it.", "We walked past the mill,")
    assert layout.continues_sentence("which closed in 1990.", "the old factory")
    assert not layout.continues_sentence("make it shorter", "The end.")
    assert not layout.continues_sentence("Make it shorter", "the old factory")


def test_is_interface_text_is_a_button_label_and_nothing_else():
    assert remarks.is_interface_text("Share Prompt") and remarks.is_interface_text(" Translate now ")
    assert remarks.is_interface_text("지금 번역하기")
    assert not remarks.is_interface_text("please translate it now")
    assert not remarks.is_interface_text("Answer in English.지금 번역하기")


def test_is_template_line_recognises_what_prompt_extensions_append():
    for tail in ["Please write in English language.", "Reply in Français", "Answer in English.지금 번역하기",
                 "make it funnier\nPlease write in English (UK) language."]:
        assert tone.is_template_line(tail), tail
    assert not tone.is_template_line("Please write it in a formal tone, thanks")
    assert not tone.is_template_line("Reply in English.\nand keep it short")


def test_is_casual():
    for tail in ["btw it's for work", "FYI the deadline moved", "thx", "lol that's long", "ok now shorter :)"]:
        assert tone.is_casual(tail), tail
    assert not tone.is_casual("The deadline is in May.")
    # "also" and "just" are everywhere in written prose ("You can also access …"); "also …" at the start is a
    # request (is_request), and a typed "just …" starts in lower case (reads_as_typed)
    assert not tone.is_casual("You can also access the development version.")
    assert not tone.is_casual("It just works.")


def test_is_request():
    for tail in ["Make it shorter", "can you add tests", "Please check the grammar", "btw, keep the rhyme",
                 "in Spanish", "rewrite it for kids", "do the same for chapter two"]:
        assert tone.is_request(tail), tail
    assert not tone.is_request("The dog barked at the mailman.")
    assert not tone.is_request("Notes were taken by the clerk.")


def test_is_question():
    assert tone.is_question("is that right?") and tone.is_question("对吗？")
    assert not tone.is_question("that is right.")


def test_addresses_model():
    assert tone.addresses_model("can you help") and tone.addresses_model("thank u")
    assert not tone.addresses_model("the youth club")


def test_is_first_person():
    assert tone.is_first_person("I need it by Monday") and tone.is_first_person("it's for my boss")
    assert not tone.is_first_person("The report is due Monday.")


def test_starts_lowercase():
    assert rules.starts_lowercase("  make it short")
    assert not rules.starts_lowercase("Make it short") and not rules.starts_lowercase("123")


def test_lacks_final_period():
    assert tone.lacks_final_period("make it short")
    assert not tone.lacks_final_period("Make it short.") and not tone.lacks_final_period("Short?")


def test_markers_names_every_marker_that_fires_in_a_fixed_order():
    assert tone.markers("Thanks.") == ("remark_casual",)
    assert tone.markers("I wrote this myself.") == ("remark_first_person",)
    assert tone.markers("I wrote this myself") == ("remark_typed", "remark_first_person", "remark_no_final_period")
    assert set(tone.markers("btw can you make it shorter? my boss wants it")) == set(segment.FEATURES[9:]) - {
        "remark_template", "remark_about_paste"}
    assert "remark_about_paste" in tone.markers("btw this is for my class")
    assert "remark_template" in tone.markers("Please write in English language.")


def test_rejects_gives_the_first_reason_or_none():
    code = CODE.strip()
    assert remarks.rejects("it's for my class", code, "code") is None
    assert remarks.rejects("it's for my class", code, "fenced") is None
    assert remarks.rejects("word " * 41, code, "code") == "size"
    assert remarks.rejects("x" * 100, "y" * 150, "code") != "longer than the artifact"  # code has syntax to end
    assert remarks.rejects("x " * 30, "y " * 20, "prose") == "longer than the artifact"
    assert remarks.rejects("+44 20 7946 0321", code, "code") == "no letter"
    assert remarks.rejects("MIT", "Install it.\n\n## License", "prose") == "content of the paste's last section"
    assert remarks.rejects("print(area(2))", code, "code") == "code"
    assert remarks.rejects("NameError: name 'pi' is not defined", code, "code") == "output"
    assert remarks.rejects("https://example.org/x", code, "code") == "link"
    assert remarks.rejects("- and one more", code, "code") == "list item"
    assert remarks.rejects("Best,\nSam", code, "code") == "sign-off"
    assert remarks.rejects("Part two:\nmore data", code, "code") == "announces more"
    assert remarks.rejects("The Next Big Chapter", code, "code") == "heading"
    assert remarks.rejects("Tom: I'll be there at six.", code, "code") == "dialogue"
    assert remarks.rejects("Share Prompt", code, "code") == "interface text"
    letter = "Dear Mo,\nThanks again for the cake.\n\nBest,\nLeo"
    assert remarks.rejects("P.S. Sam left his scarf here.", letter, "prose") == "postscript"
    assert remarks.rejects("Head of Sales", letter, "prose", "newline") == "signature block"
    assert remarks.rejects("She's my landlord.", letter, "prose", "blank") is None
    assert remarks.rejects("make it one paragraph", letter, "prose", "newline") is None


def test_after_prose_a_remark_needs_a_strong_marker_and_must_not_continue_a_list_of_questions():
    assert remarks.rejects("It was founded in 1998.", PROSE, "prose") == "no strong marker after prose"
    assert remarks.rejects("I founded it in 1998.", PROSE, "prose") == "no strong marker after prose"  # weak only
    assert remarks.rejects("I founded it in 1998", PROSE, "prose") is None  # typed: first person, no full stop
    assert remarks.rejects("make it sound friendlier", PROSE, "prose") is None
    assert remarks.rejects("Why did you choose us?", "Who are you?\nWhat do you do?\n" * 5, "prose") == \
        "next question of a list"
    # "you" is weak
    assert remarks.rejects("You will love our bread.", PROSE, "prose") == "no strong marker after prose"
    wrapped = "Our bakery opened in 1998 in a small shop near the station. Since\nthen we have grown, and our founder"
    assert remarks.rejects("kitchen, please keep this", wrapped, "prose", "newline") == "rest of a wrapped sentence"
    assert remarks.rejects("kitchen, please keep this", wrapped, "prose", "blank") is None
    # a paragraph on one line of its own is not hard-wrapped: the next line does not continue its sentence
    cut = PROSE.removesuffix(" kitchen.")
    assert remarks.rejects("too cringe? be honest", cut, "prose", "newline") is None
    # nor does the line after a list item
    bullets = "- Made reports in Excel every week for the whole sales team\n- Answered questions from the managers"
    assert remarks.rejects("applying for an analyst role", bullets, "prose", "newline") is None


def test_after_prose_a_sentence_on_its_own_line_stands_apart_but_not_after_verse_or_a_wrap():
    # SEAM's native condition: a sentence in the paste's register, typed on the next line
    assert remarks.rejects("A bronze statue was unveiled in 1987.", PROSE, "prose", "newline") is None
    assert remarks.rejects("A bronze statue was unveiled in 1987.", PROSE, "prose", "blank") == \
        "no strong marker after prose"  # after a blank line it may be the paste's last paragraph
    poem = "I left the gate unlatched at dusk\nand let the garden in,\nthe whole night, folded, on my step."
    assert remarks.rejects("I kept it.", poem, "prose", "newline") == "no strong marker after prose"
    wrapped = "\n".join(["A line of the pasted text, wrapped at a width of sixty or so"] * 3) + "."
    tail = "For more, see the chapter on all the wrapped lines of pasted\ntext in the manual, thanks"
    assert remarks.rejects(tail, wrapped, "prose", "blank") == "a paragraph wrapped like the paste"


def test_wrap_width_and_deliberate_breaks():
    assert layout.wrap_width(["a" * 70, "b" * 72, ""]) == 72 and layout.wrap_width(["a" * 101]) is None
    assert layout.breaks_deliberately("short.", "Then more", 72)
    assert not layout.breaks_deliberately("a" * 70, "Then", 72)
    assert layout.breaks_deliberately("a" * 70, "Then", None)  # not hard-wrapped: every break is the writer's
    assert layout.wraps_like_artifact("a " * 34 + "b\nc d", "x" * 70 + "\n" + "y" * 70)
    assert not layout.wraps_like_artifact("one line", "x" * 70)


def test_on_own_line_ends_sentence_and_is_verse():
    assert layout.on_own_line("The parcel was unopened.", PROSE)
    assert not layout.on_own_line("The parcel was unopened.", PROSE.removesuffix("."))  # mid-sentence
    assert layout.ends_sentence("It ended.)") and layout.ends_sentence("终。") and not layout.ends_sentence("and so")
    assert layout.is_verse("Roses are red,\nviolets are blue,") and not layout.is_verse(PROSE)
    assert not layout.is_verse("one short line")


def test_closing_lines_end_prose_but_not_code():
    for tail in ["Enjoy!", "The end.", "Thanks for reading! See you next week.", "Love you", "Bonne journée !",
                 "Any help would be appreciated."]:
        assert letters.is_closing_line(tail), tail
    assert not letters.is_closing_line("thanks!") and not letters.is_closing_line("enjoy the rewrite")
    assert remarks.rejects("Thanks in advance.", PROSE, "prose") == "sign-off"
    assert remarks.rejects("Thanks in advance.", CODE.strip(), "code") is None  # after code, the user's own


def test_a_heading_line_makes_the_tail_a_section_of_the_paste_after_prose_or_with_more_lines():
    assert remarks.has_heading_line("## License\nMIT") and not remarks.has_heading_line("#1 fan here")
    assert remarks.rejects("## License\nMIT", CODE.strip(), "code") == "content of the paste's last section"
    assert remarks.rejects("# owned by the payments squad", CODE.strip(), "code") is None  # a comment after code
    assert remarks.rejects("# Conclusion", PROSE, "prose") == "content of the paste's last section"


def test_is_quoted_speech():
    assert remarks.is_quoted_speech('"Okay," she said to no one.') and remarks.is_quoted_speech("«Oui», dit-il.")
    assert not remarks.is_quoted_speech("okay, shorter please")


def test_sets_off_last_line():
    assert layout.sets_off_last_line("Also see the reference manual.\nthis goes on the intranet")
    assert layout.sets_off_last_line("Cheers,\nDev\nmake it one paragraph max")  # after a signed letter
    assert not layout.sets_off_last_line("thanks!\nbtw it's for class")
    assert not layout.sets_off_last_line("It was late.\nThe end.")


def test_letters_sign_offs_and_postscripts():
    assert letters.ends_with_sign_off("Hi,\nSee you.\n\nBest,\nLeo") and letters.ends_with_sign_off("x\nThanks, Jo")
    assert not letters.ends_with_sign_off("See you soon.")
    assert letters.is_postscript("P.S. bring the scarf", "Hi,\nSee you.\nBest,\nLeo")
    assert letters.is_postscript("PS: bring the scarf", "Hi,\nSee you.\nBest,\nLeo")
    assert not letters.is_postscript("P.S. bring the scarf", "Some text without a sign-off.")
    assert not letters.is_postscript("ps make it shorter", "Hi,\nSee you.\nBest,\nLeo")
    assert remarks.opens_section("## Usage") and remarks.opens_section("Steps:") and not remarks.opens_section("Done.")
    assert not remarks.has_letter("12:30, 14:45") and remarks.has_letter("ok")


def test_is_about_paste_and_reads_as_typed():
    for tail in ["It's for my dad's 70th birthday card.", "This is for the department newsletter.",
                 "our audience is mostly managers", "Ist für einen Kollegen aus Irland.", "Es para mi jefe.",
                 "btw this goes to the whole team", "so this is due friday"]:
        assert tone.is_about_paste(tail), tail
    for tail in ["It was founded in 1998.", "This is a problem for most teams.", "The audience cheered."]:
        assert not tone.is_about_paste(tail), tail
    assert tone.reads_as_typed("there are about 40k rows") and tone.reads_as_typed("I only have an air fryer")
    assert tone.reads_as_typed("my boss wants it formal") and not tone.reads_as_typed("My boss wants it formal.")
    assert not tone.reads_as_typed("The rest is history")


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
    assert _within(10, remarks.is_output, "Error." * 100_000 + "Error: x")
    message = "Fix this:\n" + ("-" * 200_000 + "\n") * 3 + "\nbtw thanks " + "Error." * 50_000
    assert _within(20, find_seam, message) is None


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="needs signal.setitimer (POSIX)")
@pytest.mark.parametrize("line", ["a," * 150_000, "a-" * 150_000, "f(" * 150_000, "f(" + "x" * 300_000,
                                  "a." * 150_000 + "(", "so " * 100_000, "-x " * 100_000, "=A(" * 100_000,
                                  "Best, " * 50_000, '"' * 300_000, "x" * 300_000])
def test_the_rules_added_for_screen_version_2_stay_linear(line):
    """Every rule screen version 2 added, on a line of 300,000 characters: CSV rows, YAML keys, plain calls,
    shell options, formulas, the remark markers, sign-offs, quoted speech, verse and wrap widths."""
    for rule in (rules.is_code_line, rules.is_block_line, tone.is_about_paste, tone.reads_as_typed,
                 remarks.is_quoted_speech, letters.is_sign_off, letters.ends_with_sign_off, layout.is_verse,
                 remarks.has_letter, remarks.opens_section):
        _within(10, rule, line)
    _within(10, letters.is_postscript, line, line)
    _within(10, layout.on_own_line, line, line)
    _within(10, layout.wraps_like_artifact, line + "\n" + line, line)
    _within(10, layout.sets_off_last_line, line + "\n" + line)
    for tail in (line, "thanks"):
        _within(20, find_seam, f"Fix this:\n{line}\n{line}\n{tail}")


RULE_MODULES = (rules, remarks, tone, layout, letters)


def _public_rules():
    return [(module, name) for module in RULE_MODULES for name, value in vars(module).items()
            if inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("_")]


def test_every_rule_has_a_test_here():
    source = Path(__file__).read_text(encoding="utf-8")
    untested = [f"{module.__name__}.{name}" for module, name in _public_rules()
                if f"{module.__name__.rsplit('.', 1)[-1]}.{name}(" not in source]
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
    "Shorten:\n\nWe opened in 1998 near the station and still bake every loaf by hand.\n\n" +
    "and then, please, " * 7,  # the tail is longer than the paste
])
def test_messages_without_the_shape_are_not_candidates(message):
    assert find_seam(message) is None


def test_a_sentence_on_its_own_line_after_prose_records_the_feature():
    seam = find_seam(f"Shorten this:\n\n{PROSE}\nA bronze statue of the founder was unveiled in 1987.")
    assert seam is not None and "remark_own_line" in seam.features and "remark_after_newline" in seam.features
    seam = find_seam(f"Shorten this:\n\n{PROSE}\n\nbtw it's for our website")
    assert "remark_own_line" not in seam.features


def test_features_are_known_names_in_a_fixed_order():
    seam = find_seam(f"Make this friendlier:\n{PROSE}\nbtw this goes on our website, can you keep it short?")
    assert list(seam.features) == [name for name in segment.FEATURES if name in seam.features]


def test_every_rule_has_a_docstring_example():
    """docs/OCCURRENCE.md promises one (they run in tests/test_occurrence_records.py); 13 rules had none."""
    assert [f"{module.__name__}.{name}" for module, name in _public_rules()
            if ">>> " not in (getattr(module, name).__doc__ or "")] == []


@pytest.mark.parametrize("remark", [
    "return only the fixed code", "import it into a table pls", "class is tomorrow so hurry pls",
    "static typing would be nice", "string should be trimmed i think", "echo the tone of the original",
    "exit the loop earlier?", "sudo make me a sandwich lol", "Note: 200 words max", "Tone: formal",
    "Thanks ChatGPT", "Length: 200 words max",
])
def test_ordinary_remarks_that_open_with_a_code_word_are_remarks(remark):
    """Screen version 3: a keyword counts as code only in a code shape, a user's label is no YAML key, and an
    assistant's name is no signature (all were refused, found by a review pass)."""
    seam = find_seam(f"Fix this:\ndef f(x):\n    return x + 1\n{remark}")
    assert seam is not None, remark
    for code in ("import os", "import numpy as np", "class Foo(Base):", "return x + 1", "return;", "return",
                 "public static void main(String[] args) {", "echo $PATH", "exit 0", "sudo apt install git"):
        assert rules.is_code_line(code), code


@pytest.mark.parametrize("sentence", ["It's going to be a long night.", "It was for the king that he had come.",
                                      "The audience is restless.", "My boss said no.", "Das ist für dich."])
def test_a_storys_own_last_sentence_is_no_remark_about_the_paste(sentence):
    story = "She walked to the station in the rain and waited for the last train home that night. " * 2
    assert find_seam(f"Shorten this story:\n\n{story}\n\n{sentence}") is None
    assert not tone.is_about_paste(sentence)


def test_a_link_alone_is_decided_in_linear_time_and_a_remark_has_a_length_cap():
    message = "Fix this:\ndef f(x):\n    return x + 1\n" + ("a" * 20 + "://") * 10_000 + " x"
    _within(5, find_seam, message)  # decided at once (18.7 s at 200,000 characters before)
    assert not remarks.remark_size_ok("a" * (remarks.MAX_REMARK_CHARS + 1))
    assert remarks.is_url_only("https://example.org/x") and not remarks.is_url_only("see https://x.org and y")
