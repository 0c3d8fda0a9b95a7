"""The screen's rules for the tail: whether the text after a pasted artifact is the user's remark, and what
it sounds like (the markers recorded as features).

`rejects` asks the rules in order and gives the first reason the tail is not a
remark, or None. The markers are English, with a few openings in four other
languages; a remark in another language passes after code by its shape, after
prose with a question mark, on a line of its own or after a letter's sign-off.
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
    starts_lowercase,
    word_count,
)

# ---------------------------------------------------------------------------------------------- the tail

MAX_REMARK_WORDS = 40
MAX_REMARK_LINES = 3
MAX_REMARK_CHARS = 400  # … and this many characters: a 100,000-character token (a hash, base64) is no remark
MIN_ARTIFACT_TO_REMARK = 1  # the artifact has at least as many characters as the remark

CASUAL = re.compile(r"\b(?:btw|by the way|fyi|thanks|thank you|thank u|thx|tks|ty|pls|plz|lol|haha+|hehe|lmao|"
                    r"ok|okay|cool|oh|anyway|anyways|tbh|idk|imo|imho|fwiw|ps|p\.s|cheers|no worries|"
                    r"gonna|wanna|kinda)\b|[:;]-?[)(dpDP]|[\U0001F600-\U0001F64F]", re.IGNORECASE)


REQUEST = re.compile(r"(?:(?:btw|by the way|fyi|oh|ok|okay|and|so|but|hey|hi|also|one more thing)[,!.:]?\s+)*"
                     r"(?:please|pls|plz|can you|could you|would you|will you|can u|make|add|use|keep|change|"
                     r"include|remove|delete|write|rewrite|translate|also|and also|now|don'?t|do not|try|give|"
                     r"explain|summari[sz]e|fix|shorten|expand|let me know|i want|i need|i'?d like|i would like|"
                     r"tell me|show me|list|focus|avoid|remember|same|do it|do the same|continue|go on|"
                     r"answer|reply|respond|format|check|correct|improve|edit|update|convert|in (?:english|"
                     r"spanish|french|german|chinese|korean|japanese))\b", re.IGNORECASE)


PLEASE = re.compile(r"\b(?:please|pls|plz)\b", re.IGNORECASE)
SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|u|ur)\b", re.IGNORECASE)
FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'll|i'd|my|me|mine|myself|we|we're|our|us)\b", re.IGNORECASE)
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


# Buttons of browser extensions that ShareGPT's capture kept at the end of messages; never sent as user text.
INTERFACE = re.compile(r"share prompt|translate now|지금 번역하기|copy code|regenerate response", re.IGNORECASE)
# Lines that prompt-template extensions (e.g. AIPRM) append to the user's message: "Please write in English
# language.", "Reply in Français", "Answer in English.". After a paste they are a trailing instruction the
# model does see; the feature records them so that counts can be given with and without them.
TEMPLATE = re.compile(r"(?:please )?(?:write|answer|reply|respond)(?: to me)? in [^\n.?!]{1,40}?(?: language)?\.?",
                      re.IGNORECASE)


def is_interface_text(tail: str) -> bool:
    """The tail is nothing but an extension's button label ("Share Prompt", "Translate now", "지금 번역하기"),
    captured with the page: not text the user sent.

    >>> is_interface_text("Share Prompt"), is_interface_text("지금 번역하기"), is_interface_text("translate it now")
    (True, True, False)
    """
    return not INTERFACE.sub("", tail).strip(" \t\n.")


def is_template_line(tail: str) -> bool:
    """The tail's last line is one that prompt-template extensions append ("Please write in English
    language.", "Reply in Español"), button labels aside.

    >>> is_template_line("Please write in English language."), is_template_line("Answer in English.지금 번역하기")
    (True, True)
    >>> is_template_line("write it in a friendlier tone please")
    False
    """
    last = INTERFACE.sub("", tail).strip().rsplit("\n", 1)[-1].strip()
    return TEMPLATE.fullmatch(last) is not None


# The user speaks about the paste itself: what it is for, who reads it, where it goes. In English, and the same
# openings in German, French, Spanish and Italian ("Ist für …", "C'est pour …", "Es para …", "È per …").
ABOUT_PASTE = re.compile(
    r"(?:(?:so|and|but|oh|btw|fyi|also|ok)[,!.:]?\s+)*"
    r"(?:(?:it|this|that|this one|the (?:text|email|letter|post|paragraph|poem|code|script|abstract|essay|piece|"
    r"draft|message|page|bio|speech|toast))(?:(?:'s|’s| is| will be| needs| has to| should| must|'ll)"
    r"\s+(?:for|going (?:on|out|up|into)|due|needed|meant|supposed|about to|headed|to be (?:read|sent|posted|used))|"
    r" goes (?:to|out|in|on|into))\b|"
    r"(?:my |our |the target |target )(?:audience|readers?|recipients?) (?:is|are|will be|would be)\b|"
    r"(?:my|our) (?:boss|manager|teacher|professor|prof|client|supervisor|editor|advisor|tutor|lecturer|landlord)"
    r" (?:will|is going to|wants|needs|asked|likes|hates|reads)\b|"
    r"(?:the )?(?:word|character|page) (?:limit|count|maximum|max) is\b|"
    r"(?:i'?m|i am|we'?re|we are) (?:the )?\w+ (?:in|of|for|on) (?:this|the) (?:contract|agreement|email|letter|"
    r"document|text|post|thread|project|code)\b|"
    r"(?:ist für|c'est pour|c’est pour|(?:esto |eso )?es para|è per)\b)", re.IGNORECASE)


def is_about_paste(tail: str) -> bool:
    """The tail says what the paste is for, or who will read it ("it's for my dad's birthday card", "This is
    for the newsletter.", "The audience is managers", "C'est pour un client."): a remark about the text,
    in any register, never a sentence of it.

    >>> is_about_paste("It's for a first-year course."), is_about_paste("C'est pour un client américain.")
    (True, True)
    >>> is_about_paste("It was a dark and stormy night.")
    False
    """
    return ABOUT_PASTE.match(tail.strip()) is not None


def is_casual(tail: str) -> bool:
    """A casual marker: btw, fyi, thanks, lol, ok, also, just, an emoticon…

    >>> is_casual("btw it's for class"), is_casual("ok :)"), is_casual("The end.")
    (True, True, False)
    """
    return CASUAL.search(tail) is not None


def is_request(tail: str) -> bool:
    """The tail asks the model for something: it opens with a request ("make it shorter", "can you…",
    "also…", "in Spanish"), perhaps after an interjection ("btw", "oh and"), or says please anywhere.

    >>> is_request("oh and make it rhyme"), is_request("It was a dark night.")
    (True, False)
    """
    return REQUEST.match(tail.strip()) is not None or PLEASE.search(tail) is not None


def is_question(tail: str) -> bool:
    """The tail asks a question (a question mark, in any script's form).

    >>> is_question("why?"), is_question("为什么？"), is_question("Because.")
    (True, True, False)
    """
    return "?" in tail or "？" in tail


FIRST_PERSON_START = re.compile(r"\s*(?:i|i'm|im|i've|i'll|i'd|my|we|we're|our)\b", re.IGNORECASE)


def reads_as_typed(tail: str) -> bool:
    """The tail reads as typed chat rather than written text: it starts in lower case, or it opens in the
    first person and ends with no sentence punctuation ("I only have an air fryer").

    >>> reads_as_typed("there are 40k rows in the real file"), reads_as_typed("I only have an air fryer")
    (True, True)
    >>> reads_as_typed("I only have an air fryer."), reads_as_typed("The rest is history")
    (False, False)
    """
    return starts_lowercase(tail) or (FIRST_PERSON_START.match(tail) is not None and lacks_final_period(tail))


def addresses_model(tail: str) -> bool:
    """The tail speaks to the model in the second person ("you", "your", "u").

    >>> addresses_model("can u shorten it"), addresses_model("shorten it")
    (True, False)
    """
    return SECOND_PERSON.search(tail) is not None


def is_first_person(tail: str) -> bool:
    """The tail speaks in the first person ("I", "my", "we"): weak alone, pasted prose says "I" too.

    >>> is_first_person("I'm not sure it works"), is_first_person("not sure it works")
    (True, False)
    """
    return FIRST_PERSON.search(tail) is not None


def lacks_final_period(tail: str) -> bool:
    """The tail does not end in sentence punctuation, as typed chat often does not.

    >>> lacks_final_period("make it short"), lacks_final_period("Make it short."), lacks_final_period("why?")
    (True, False, False)
    """
    return not tail.rstrip().endswith((".", "!", "?", "。", "！", "？", ":", ";", '"', "'", ")"))


# Markers strong enough to tell a remark after prose from the prose's own last paragraph; the weak ones are
# recorded as features but never decide (pasted prose says "you" and "I" as often as users do).
STRONG_MARKERS = {"remark_casual": is_casual, "remark_request": is_request, "remark_question": is_question,
                  "remark_about_paste": is_about_paste, "remark_typed": reads_as_typed}


WEAK_MARKERS = {"remark_second_person": addresses_model, "remark_first_person": is_first_person,
                "remark_lowercase": starts_lowercase, "remark_no_final_period": lacks_final_period,
                "remark_template": is_template_line}


def markers(tail: str) -> tuple[str, ...]:
    """The names of the remark markers that fire on the tail, strong ones first, in a fixed order.

    >>> markers("btw can you keep it short?")
    ('remark_casual', 'remark_request', 'remark_question', 'remark_typed', 'remark_second_person', 'remark_lowercase')
    """
    return tuple(name for name, rule in {**STRONG_MARKERS, **WEAK_MARKERS}.items() if rule(tail))


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
