"""The screen's rules for the tail: whether the text after a pasted artifact is the user's remark (what it
sounds like, the markers recorded as features, is `common.seams.tone`).

`rejects` asks the rules in order and gives the first reason the tail is not a
remark, or None. The markers it asks (`tone`) are English, with a few openings in
four other languages; a remark in another language passes after code by its shape,
after prose with a question mark, on a line of its own or after a letter's sign-off.
docs/OCCURRENCE.md lists every rule with its reason; tests/test_occurrence_rules.py
tries each on messages made up for the purpose.
"""

from __future__ import annotations

import re

from common.seams.layout import (
    continues_questions,
    continues_sentence,
    is_verse,
    on_own_line,
    wrap_width,
    wraps_like_artifact,
)
from common.seams.letters import ends_with_sign_off, is_closing_line, is_postscript, is_sign_off
from common.seams.rules import (
    USER_LABELS,
    ends_with_colon,
    is_blank,
    is_block_line,
    is_code_line,
    is_output_line,
    word_count,
)
from common.seams.tone import INTERFACE, STRONG_MARKERS, is_about_paste, is_casual, is_question, is_request

# ---------------------------------------------------------------------------------------------- the tail

MAX_REMARK_WORDS = 40
MAX_REMARK_LINES = 3
MAX_REMARK_CHARS = 400  # … and this many characters: a 100,000-character token (a hash, base64) is no remark
MIN_ARTIFACT_TO_REMARK = 1  # the artifact has at least as many characters as the remark

LIST_ITEM = re.compile(r"\s*(?:[-*•+]\s|\d{1,3}[.)/]\s|[a-zA-Z][.)]\s)")
URL_ONLY = re.compile(r"\s*(?:\S+://\S+|www\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)\s*")


def remark_size_ok(tail: str) -> bool:
    """A remark is short: 1 to 40 words on at most 3 non-blank lines.

    >>> remark_size_ok("btw this goes out friday"), remark_size_ok(""), remark_size_ok("a\\nb\\nc\\nd")
    (True, False, False)
    """
    lines = [line for line in tail.split("\n") if not is_blank(line)]
    return (1 <= word_count(tail) <= MAX_REMARK_WORDS and len(lines) <= MAX_REMARK_LINES
            and len(tail.strip()) <= MAX_REMARK_CHARS)


def shorter_than_artifact(artifact: str, tail: str) -> bool:
    """The remark is an aside to the paste, not the bulk of the message: the artifact has at least as many
    characters (white space at the ends aside) or as many words (`word_count`: a line of Chinese or
    Japanese says in 20 characters what English says in 60).

    >>> shorter_than_artifact("x" * 40, "thanks a lot"), shorter_than_artifact("x = 1", "thanks a lot")
    (True, False)
    >>> shorter_than_artifact("「もう帰るの？」「うん、明日早いから。」", "it's from a manga, casual is fine")
    True
    """
    if len(artifact.strip()) >= MIN_ARTIFACT_TO_REMARK * len(tail.strip()):
        return True
    return word_count(artifact) >= MIN_ARTIFACT_TO_REMARK * word_count(tail)


def has_code_line(tail: str) -> bool:
    """Some line of the tail reads as code: the tail then continues the artifact (a last statement,
    a closing brace), it is not user speech.

    >>> has_code_line("looks fine\\n}"), has_code_line("looks fine to me")
    (True, False)
    """
    return any(is_code_line(line) for line in tail.split("\n"))


def is_output(tail: str) -> bool:
    """The tail is program output, a log or a transcript (a traceback, an error line, a line opening with a
    date or a time stamp such as "(05:49)"), which a user pastes as part of the artifact.

    >>> is_output("TypeError: 'NoneType' object is not subscriptable"), is_output("it throws an error")
    (True, False)
    """
    return any(is_output_line(line) for line in tail.split("\n") if not is_blank(line))


def is_url_only(tail: str) -> bool:
    """The tail is a link or an e-mail address and nothing else: a source or signature line of the paste more
    often than a remark.

    >>> is_url_only(" https://example.org/a?b=1 "), is_url_only("see https://example.org"), is_url_only("a@b.org")
    (True, False, True)
    """
    token = tail.strip()
    return " " not in token and "\n" not in token and URL_ONLY.fullmatch(token) is not None


def is_list_item(tail: str) -> bool:
    """The tail starts like a list item (`- `, `* `, `3. `, `b) `): the next item of a pasted list.

    >>> is_list_item("- and the last item"), is_list_item("3) third"), is_list_item("a short note")
    (True, True, False)
    """
    return LIST_ITEM.match(tail) is not None


HEADING_LINE = re.compile(r"\s{0,3}#{1,6}\s+\S")  # a Markdown heading


def has_heading_line(tail: str) -> bool:
    """A line of the tail is a Markdown heading ("## License"): the tail is a section of the paste (after prose,
    or when more lines follow: after code, a lone "# …" line is a comment).

    >>> has_heading_line("## License\\nMIT"), has_heading_line("#1 fan here")
    (True, False)
    """
    return any(HEADING_LINE.match(line) for line in tail.split("\n"))


def opens_section(artifact: str) -> bool:
    """The artifact's last line is a heading or ends in a colon ("## License", "Ingredients:"): what follows
    is that section's content, still the paste, not a remark after it.

    >>> opens_section("Intro text.\\n\\n## License"), opens_section("x = 1\\nThe steps:"), opens_section("Done.")
    (True, True, False)
    """
    last = artifact.rstrip().rsplit("\n", 1)[-1]
    return HEADING_LINE.match(last) is not None or ends_with_colon(last)


def has_letter(tail: str) -> bool:
    """The tail has a letter of some script: a phone number or a row of figures is no remark.

    >>> has_letter("+44 20 7946 0321"), has_letter("ok 👍"), has_letter("好")
    (False, True, True)
    """
    return any(character.isalpha() for character in tail)


def is_heading(tail: str) -> bool:
    """The tail is a title in Title Case ("Unlock Your Potential With Our App"): at least three words, nearly
    all capitalised, no question: the heading of a pasted text, not a remark.

    >>> is_heading("Revolutionize Your Social Media Game"), is_heading("Make It Short?"), is_heading("Expand it")
    (True, False, False)
    """
    words = [word for word in tail.split() if word[:1].isalpha()]
    if len(words) < 3 or is_question(tail):
        return False
    return sum(word[0].isupper() for word in words) >= 0.75 * len(words)


def introduces_more(tail: str) -> bool:
    """A line of the tail other than its last ends in a colon ("The second table:\\n<data>"): the tail
    announces another paste, it is not a remark after the first.

    >>> introduces_more("The pv dataset contains:\\ntimestamp, power"), introduces_more("thanks:")
    (True, False)
    """
    lines = [line for line in tail.split("\n") if not is_blank(line)]
    return any(ends_with_colon(line) for line in lines[:-1])


SPEAKER = re.compile(r"\s*([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2})\s*(?:\([^)\n]{0,40}\))?:\s+\S")


def is_dialogue_line(tail: str) -> bool:
    """The tail opens with a speaker's name and a colon ("Anna: …", "Dr. Lee (smiling): …"): the next line
    of a pasted script or chat log. Labels a user puts before their own words (Note, PS, Edit, Question,
    …) do not count.

    >>> is_dialogue_line("Anna: I told you so."), is_dialogue_line("Note: keep it short"), is_dialogue_line("hi")
    (True, False, False)
    """
    match = SPEAKER.match(tail)
    return match is not None and match.group(1).lower() not in USER_LABELS


QUOTE_OPENING = re.compile(r"\s*[\"“„«「『]")


def is_quoted_speech(tail: str) -> bool:
    """The tail opens with a quotation mark ('"Okay," she said.', '「またね」'): a line of a pasted story or script,
    which a user's own remark seldom is.

    >>> is_quoted_speech('"Okay," she said to no one.'), is_quoted_speech("「またね」"), is_quoted_speech("okay")
    (True, True, False)
    """
    return QUOTE_OPENING.match(tail) is not None


def is_interface_text(tail: str) -> bool:
    """The tail is nothing but an extension's button label ("Share Prompt", "Translate now", "지금 번역하기"),
    captured with the page: not text the user sent.

    >>> is_interface_text("Share Prompt"), is_interface_text("지금 번역하기"), is_interface_text("translate it now")
    (True, True, False)
    """
    return not INTERFACE.sub("", tail).strip(" \t\n.")


def rejects(tail: str, artifact: str, kind: str, separator: str = "blank") -> str | None:
    """Why the tail cannot be a remark after an artifact of this kind, or None when it can.

    Every kind: the tail must be short (`remark_size_ok`), no longer than the artifact, not code, not program
    output, not a bare link, not a list item, not a letter's sign-off, not a heading, not the announcement
    of another paste, not the next line of a dialogue and not an extension's button label; on the line
    right after an artifact whose last line is not code, it must not be the rest of a wrapped sentence.
    After prose (which has no syntax to end), it must also not be a paragraph wrapped like the paste, not
    the next of a list of questions, and it must stand apart from the prose: a strong marker (casual, a
    request, a question, a lower-case start), or, on the next line, a line of its own (`on_own_line`).

    >>> rejects("btw it's for class", "def area(r):\\n    return 3.14159 * r ** 2", "code") is None
    True
    >>> rejects("def g(): pass", "def f(x):\\n    return 2 * x + 1", "code")
    'code'
    """
    # Asked in this order, and no further than the first that fails: the size check comes first, so that
    # the other rules only ever read a tail of 40 words (though its lines may still be long).
    checks = (("size", lambda: not remark_size_ok(tail)), ("no letter", lambda: not has_letter(tail)),
              ("content of the paste's last section", lambda: opens_section(artifact) or (
                  has_heading_line(tail) and (kind == "prose" or "\n" in tail.strip()))),
              ("longer than the artifact", lambda: kind == "prose" and not shorter_than_artifact(artifact, tail)),
              ("code", lambda: has_code_line(tail)), ("output", lambda: is_output(tail)),
              ("link", lambda: is_url_only(tail)), ("list item", lambda: is_list_item(tail)),
              ("sign-off", lambda: is_sign_off(tail) or (kind == "prose" and is_closing_line(tail))),
              ("postscript", lambda: is_postscript(tail, artifact)),
              ("announces more", lambda: introduces_more(tail)),
              ("heading", lambda: is_heading(tail)), ("dialogue", lambda: is_dialogue_line(tail)),
              ("quoted speech", lambda: is_quoted_speech(tail)),
              ("interface text", lambda: is_interface_text(tail)))
    for reason, failed in checks:
        if failed():
            return reason
    last_line = artifact.rstrip().rsplit("\n", 1)[-1]
    signed = ends_with_sign_off(artifact)
    # In verse a line may start in lower case and lack a full stop: there only what the tail says counts, and
    # a tail that says what it is about stands apart even on the next line.
    verse = is_verse(artifact)
    strong = any(rule(tail) for name, rule in STRONG_MARKERS.items()
                 if not (verse and separator == "newline" and name == "remark_typed"))
    said = verse and (is_about_paste(tail) or is_request(tail) or is_casual(tail) or is_question(tail))
    # A sentence runs on to the next line only in hard-wrapped text or verse, and not after a list item.
    lines = [line for line in artifact.split("\n") if not is_blank(line)]
    wrapped = verse or wrap_width(lines[:-1]) is not None
    if separator == "newline" and wrapped and not is_block_line(last_line) and not is_list_item(last_line) \
            and continues_sentence(tail, artifact) and not signed and not said:
        return "rest of a wrapped sentence"
    if signed:  # after a letter's sign-off: a remark after a blank line, or typed on the next line with a marker
        return None if separator == "blank" or strong else "signature block"
    if kind != "prose":
        return None
    if wraps_like_artifact(tail, artifact):
        return "a paragraph wrapped like the paste"
    if continues_questions(tail, artifact):
        return "next question of a list"
    if strong:
        return None
    if separator == "newline" and on_own_line(tail, artifact):
        return None
    return "no strong marker after prose"
