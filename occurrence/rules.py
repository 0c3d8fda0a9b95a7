"""The screen's rules, one small pure function each: what a code line is, what a remark sounds like.

The screen (occurrence/screen.py) cuts a user message into a lead (the
instruction), an artifact (the pasted block) and a tail (what follows it), and
asks these functions whether each part is what it should be. They look at text
only, never at a model, and know English markers only (the corpus they were
written for is mostly English; a remark in another language passes only by its
shape: after code, or with a question mark). docs/OCCURRENCE.md lists every
rule with its reason; tests/test_occurrence_rules.py tries each on messages made
up for the purpose.
"""

from __future__ import annotations

import itertools
import math
import re

# ---------------------------------------------------------------------------------------------- sizes

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A white-space separated token with a letter or digit in it, matched from the token's start only: its
# first letter or digit after any run of punctuation, then the rest of the token. (`\S*?[^\W_]\S*`, the
# obvious spelling, is tried again at every character of a token without one: quadratic in a line of
# 100,000 dashes, minutes for one message.)
WORD = re.compile(r"(?<!\S)(?:[^\w\s]|_)*[^\W_]\S*")


def word_count(text: str) -> int:
    """Words: white-space separated tokens holding a letter or digit, and each Chinese or Japanese character
    (those scripts put no space between words, and a sentence of them must not count as one word).

    >>> word_count("fix this, please!  ->"), word_count("请帮我翻译"), word_count("")
    (3, 5, 0)
    """
    if CJK.search(text) is None:
        return len(WORD.findall(text))
    return len(CJK.findall(text)) + len(WORD.findall(CJK.sub(" ", text)))


def has_words(text: str, count: int) -> bool:
    """Whether the text has at least `count` words (`word_count`), reading no further than needed.

    >>> has_words("one two three", 3), has_words("one two", 3)
    (True, False)
    """
    if CJK.search(text) is not None:
        return word_count(text) >= count
    return sum(1 for _ in itertools.islice(WORD.finditer(text), count)) >= count


def is_blank(line: str) -> bool:
    """A line of white space only: it separates paragraphs.

    >>> is_blank(" \\t"), is_blank(" x ")
    (True, False)
    """
    return not line.strip()


# ---------------------------------------------------------------------------------------------- fences

FENCE = re.compile(r" {0,3}(```|~~~)")


def is_fence(line: str) -> bool:
    """A Markdown code fence line (``` or ~~~, at most three spaces in), opening or closing a block.

    >>> is_fence("```python"), is_fence("   ~~~"), is_fence("    ```"), is_fence("use ``` here")
    (True, True, False, False)
    """
    return FENCE.match(line) is not None


# ---------------------------------------------------------------------------------------------- code lines

CODE_START = re.compile(
    r"(?:def |class |import |from \S+ import |return\b|elif\b|else\s*[:{]|else$|try\s*[:{]|except\b|finally\b|"
    r"raise |yield\b|lambda\b|async |await |with \S.*:$|for \S.*(?::|\{|\))$|while\b.*(?::|\{|\))$|"
    r"if\s*\(|if \S.*(?::|\{)$|switch\s*\(|case .*:$|"
    r"function\b|const |let |var |export |module\.exports|require\(|console\.|document\.|window\.|"
    r"public |private |protected |static |void |int |float |double |bool |boolean |char |string |String |"
    r"package |using |namespace |template\s*<|struct |enum |interface |impl |fn |pub |mod |use |"
    r"#include|#define|#import|#pragma|#if|#endif|#!/|@\w+|"
    r"SELECT |INSERT |UPDATE |DELETE |CREATE |ALTER |DROP |FROM |WHERE |JOIN |GROUP BY |ORDER BY |"
    r"echo |print\(|printf\(|println|System\.out|std::|cout|cin|\$ |>>> |\.\.\. |npm |pip |sudo |cd |git |"
    r"//|/\*|\*/|<!--|-->)")
CODE_END = ("{", "}", ";", "):", "=>", "->", "[", "(", "\\", "*/", "-->", "{}", "[]", "()", "};", "],", "},")
CODE_ONLY = frozenset({"end", "fi", "done", "esac", "endif", "begin", "then", "do", "else", "pass", "break",
                       "continue", "return", "end;", "end if", "end function", "end sub", "}", "]", ")", "});",
                       "})", "]);", ");", "...", "</div>"})
TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>?")
CALL = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\(.*\)\s*;?|[a-z]+_\w*\(.*\)\s*;?")
# A `camelCase: value` or `key: "value"` line. The camelCase name is one run of letters, digits and
# underscores after its first capital or underscore: written as a repeated group, `(?:[A-Z_][A-Za-z0-9_]*)+`,
# the same names took exponential time on a line such as "atgCGTACGTACGT…" (a DNA sequence) with no colon.
KEY_VALUE = re.compile(r"[a-z]+[A-Z_][A-Za-z0-9_]*:\s+\S|\"?[\w.-]+\"?:\s*(?:['\"\[{\d]|true\b|false\b|null\b)")
ASSIGNMENT = re.compile(r"[A-Za-z_$][\w$.\[\]'\"]*\s*(?:[-+*/%|&^]|\?\?|//|\*\*)?=(?!=)\s*\S")
SYMBOL = re.compile(r"[{}\[\]()<>;=_$|&*/\\#@^~`]")


def symbol_share(line: str) -> float:
    """The share of a line's visible characters that are code symbols (brackets, =, ;, _, $, …), which prose
    seldom uses: 0 for prose, well above 0.15 for most code.

    >>> symbol_share("x = f(a[0]);"), symbol_share("Hello, world.")
    (0.6, 0.0)
    """
    visible = sum(map(len, line.split()))
    return len(SYMBOL.findall(line)) / visible if visible else 0.0


def is_code_line(line: str) -> bool:
    """A line that reads as code, markup, configuration or a shell command rather than prose: it starts with a
    keyword or comment marker, ends like a statement or block (`;`, `{`, `}`, `):`, …), is a tag, an
    assignment, a call of a dotted or snake_case name (`self.log(…)`), a `camelCase: value` or
    `key: "value"` line (YAML, JSON), a closing keyword, or is dense with symbols (more than 15 % of its
    visible characters, and three at least: a pair of brackets in a remark is not code).

    >>> [is_code_line(s) for s in ["    return x + 1", "}", "<div class='a'>", "total += 1", "end"]]
    [True, True, True, True, True]
    >>> [is_code_line(s) for s in ["Please fix it.", "why does foo() fail?", "# Introduction", ""]]
    [False, False, False, False]
    """
    text = line.strip()
    if not text:
        return False
    if text.lower() in CODE_ONLY or CODE_START.match(text) or text.endswith(CODE_END):
        return True
    if TAG.fullmatch(text) or (text.startswith("<") and TAG.match(text) and text.rstrip().endswith(">")):
        return True
    if ASSIGNMENT.match(text) and word_count(text) <= 12:
        return True
    if CALL.fullmatch(text) or KEY_VALUE.match(text):
        return True
    return symbol_share(text) > 0.15 and len(SYMBOL.findall(text)) >= 3


def code_share(lines: list[str]) -> float:
    """The share of the non-blank lines that are code lines (0 when there are none).

    >>> code_share(["def f():", "    return 1", "", "It returns one."])
    0.6666666666666666
    """
    visible = [line for line in lines if not is_blank(line)]
    return sum(is_code_line(line) for line in visible) / len(visible) if visible else 0.0


def mostly_code(lines: list[str]) -> bool:
    """Whether half or more of the non-blank lines are code lines (`code_share` >= 0.5), deciding as soon as
    the rest cannot change the outcome: a long paste is not read to its end to be told from prose.

    >>> mostly_code(["x = 1", "y = 2", "Some words."]), mostly_code(["Hello.", "x = 1", "Bye."]), mostly_code([])
    (True, False, False)
    """
    visible = [line for line in lines if not is_blank(line)]
    need = math.ceil(len(visible) * MIN_CODE_SHARE)  # code lines for a share of at least MIN_CODE_SHARE
    if not visible:
        return False
    code = prose = 0
    for line in visible:
        if is_code_line(line):
            code += 1
            if code >= need:
                return True
        else:
            prose += 1
            if prose > len(visible) - need:
                return False
    return False


def is_indented(line: str) -> bool:
    """A non-blank line that starts with a tab or four spaces (an indented code block, or code's body).

    >>> is_indented("    return x"), is_indented("\\tx = 1"), is_indented("  two spaces"), is_indented("    ")
    (True, True, False, False)
    """
    return not is_blank(line) and (line.startswith("\t") or line.startswith("    "))


# ---------------------------------------------------------------------------------------------- artifacts

MIN_CODE_LINES = 2  # a pasted code block: at least this many non-blank lines …
MIN_CODE_SHARE = 0.5  # … at least this share of them code lines
MIN_PROSE_WORDS = 40  # a pasted prose block: at least this many words


def artifact_kind(lines: list[str]) -> str | None:
    """What a block pasted between the lead and the tail is: "code" (at least 2 non-blank lines, half of
    them or more code lines), "prose" (at least 40 words, mostly not code), or None (neither: too short
    to be a paste).

    >>> artifact_kind(["def f(x):", "    return x"]), artifact_kind(["word " * 40]), artifact_kind(["a short one"])
    ('code', 'prose', None)
    """
    visible = [line for line in lines if not is_blank(line)]
    if len(visible) >= MIN_CODE_LINES and mostly_code(visible):
        return "code"
    if has_words("\n".join(visible), MIN_PROSE_WORDS):
        return "prose"
    return None


# ---------------------------------------------------------------------------------------------- the lead

MAX_LEAD_WORDS = 80


def is_instruction(lead: str) -> bool:
    """The text before the artifact can be the user's instruction: it has a word, is at most 80 words
    (a longer opening is more likely the paste itself), and is not mostly code.

    >>> is_instruction("Fix the bug in this code:"), is_instruction(""), is_instruction("import os\\nimport re")
    (True, False, False)
    """
    words = word_count(lead)
    if not 1 <= words <= MAX_LEAD_WORDS:
        return False
    return not mostly_code(lead.split("\n"))


def ends_with_colon(lead: str) -> bool:
    """The lead announces what follows ("… this text:"), the clearest sign of an instruction before a paste.

    >>> ends_with_colon("Fix this code: "), ends_with_colon("翻译："), ends_with_colon("Fix this code.")
    (True, True, False)
    """
    return lead.rstrip().endswith((":", "："))


# ---------------------------------------------------------------------------------------------- the tail

MAX_REMARK_WORDS = 40
MAX_REMARK_LINES = 3
MIN_ARTIFACT_TO_REMARK = 2  # the artifact has at least twice the remark's characters

CASUAL = re.compile(r"\b(?:btw|by the way|fyi|thanks|thank you|thank u|thx|tks|ty|pls|plz|lol|haha+|hehe|lmao|"
                    r"ok|okay|cool|oh|anyway|anyways|tbh|idk|imo|imho|fwiw|ps|p\.s|cheers|no worries|"
                    r"also|just|gonna|wanna|kinda)\b|[:;]-?[)(dpDP]|[\U0001F600-\U0001F64F]", re.IGNORECASE)
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
LIST_ITEM = re.compile(r"\s*(?:[-*•+]\s|\d{1,3}[.)]\s|[a-zA-Z][.)]\s)")
URL_ONLY = re.compile(r"\s*(?:\S+://\S+|www\.\S+)\s*")
OUTPUT_LINE = re.compile(r"\s*(?:Traceback \(most recent call last\)|File \"|at [\w$.<>]+\(|"
                         r"\[?\d{4}-\d\d-\d\d[ T]\d|"
                         r"\[(?:INFO|WARN|WARNING|ERROR|DEBUG)\]|(?:INFO|WARN|ERROR|DEBUG)\s*[:\[]|"
                         r"Process finished|Exit code|Press any key|\(?\d{1,2}:\d\d(?::\d\d)?(?:[.,]\d+)?\)?\s)")
# An exception's name opening a line ("ValueError: …", "java.lang.NullPointerException: …"): the dotted
# name before the first colon, then the name checked on its own (one regex for both retried the name's end
# at every "Error" of a long dotted token: quadratic).
ERROR_NAME = re.compile(r"\s*([\w.]+):")
ERROR_WORD = re.compile(r"(?:Error|Exception|Warning)\b")
SIGN_OFF = re.compile(r"\s*(?:many thanks|thanks|thank you|best regards|kind regards|warm regards|regards|best|"
                      r"sincerely|yours sincerely|yours truly|yours|cheers|respectfully|warmly|all the best)"
                      r"\s*[,.!]?\s*", re.IGNORECASE)
NAME = re.compile(r"(?:\[[^\]\n]{1,40}\]|[A-Z][\w.'-]*(?:[ \t]+[A-Z][\w.'-]*){0,3})\s*")


def remark_size_ok(tail: str) -> bool:
    """A remark is short: 1 to 40 words on at most 3 non-blank lines.

    >>> remark_size_ok("btw this goes out friday"), remark_size_ok(""), remark_size_ok("a\\nb\\nc\\nd")
    (True, False, False)
    """
    lines = [line for line in tail.split("\n") if not is_blank(line)]
    return 1 <= word_count(tail) <= MAX_REMARK_WORDS and len(lines) <= MAX_REMARK_LINES


def shorter_than_artifact(artifact: str, tail: str) -> bool:
    """The remark is an aside to the paste, not the bulk of the message: the artifact has at least twice
    as many characters (white space at the ends aside).

    >>> shorter_than_artifact("x" * 40, "thanks a lot"), shorter_than_artifact("x = 1", "thanks a lot")
    (True, False)
    """
    return len(artifact.strip()) >= MIN_ARTIFACT_TO_REMARK * len(tail.strip())


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
    return any(OUTPUT_LINE.match(line) or _error_name(line) for line in tail.split("\n") if not is_blank(line))


def _error_name(line: str) -> bool:
    """The line opens with an exception's name and a colon ("TypeError: …", "a.b.FooException: …")."""
    match = ERROR_NAME.match(line)
    return match is not None and ERROR_WORD.search(match.group(1)) is not None


def is_url_only(tail: str) -> bool:
    """The tail is a link and nothing else: a source line of the paste more often than a remark.

    >>> is_url_only(" https://example.org/a?b=1 "), is_url_only("see https://example.org")
    (True, False)
    """
    return URL_ONLY.fullmatch(tail) is not None


def is_list_item(tail: str) -> bool:
    """The tail starts like a list item (`- `, `* `, `3. `, `b) `): the next item of a pasted list.

    >>> is_list_item("- and the last item"), is_list_item("3) third"), is_list_item("a short note")
    (True, True, False)
    """
    return LIST_ITEM.match(tail) is not None


def is_sign_off(tail: str) -> bool:
    """The tail closes a letter ("Best regards,\\nAnna", "Thanks,\\n[Your Name]"): the end of a pasted email,
    not a remark to the model. A bare "thanks!" with no name after it is a remark, not a sign-off.

    >>> is_sign_off("Best regards,\\nAnna Smith"), is_sign_off("Thanks,\\n[Your Name]"), is_sign_off("thanks!")
    (True, True, False)
    >>> is_sign_off("thanks a lot"), is_sign_off("Thanks, John")
    (False, True)
    """
    match = SIGN_OFF.match(tail)
    if match is None:
        return False
    name = tail[match.end():]
    return bool(name.strip()) and NAME.fullmatch(name) is not None


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


def continues_questions(tail: str, artifact: str) -> bool:
    """The artifact's last line is a question and so is the tail: the next question of a pasted list of
    questions (a questionnaire, an exam) more often than the user's own.

    >>> continues_questions("And why?", "Q1: What is it?\\nQ2: Who made it?"), continues_questions("Why?", "It is.")
    (True, False)
    """
    last = artifact.rstrip().rsplit("\n", 1)[-1].rstrip()
    return last.endswith(("?", "？")) and tail.rstrip().endswith(("?", "？"))


SPEAKER = re.compile(r"\s*([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2})\s*(?:\([^)\n]{0,40}\))?:\s+\S")
USER_LABELS = frozenset({"note", "ps", "p.s.", "p.s", "edit", "update", "question", "request", "task",
                         "instruction", "instructions", "context", "btw", "fyi", "also", "important", "reminder"})


def is_dialogue_line(tail: str) -> bool:
    """The tail opens with a speaker's name and a colon ("Anna: …", "Dr. Lee (smiling): …"): the next line
    of a pasted script or chat log. Labels a user puts before their own words (Note, PS, Edit, Question,
    …) do not count.

    >>> is_dialogue_line("Anna: I told you so."), is_dialogue_line("Note: keep it short"), is_dialogue_line("hi")
    (True, False, False)
    """
    match = SPEAKER.match(tail)
    return match is not None and match.group(1).lower() not in USER_LABELS


def continues_sentence(tail: str, artifact: str) -> bool:
    """The artifact's last line stops mid-sentence (a letter, a digit or a comma) and the tail starts in
    lower case: the rest of a sentence wrapped onto the next line, not a remark. Only meaningful when the
    tail follows on the next line.

    >>> continues_sentence("do not exist yet.", "projects that"), continues_sentence("make it short", "The end.")
    (True, False)
    """
    last = artifact.rstrip()[-1:]
    return (last.isalnum() or last == ",") and starts_lowercase(tail)


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


def starts_lowercase(tail: str) -> bool:
    """The tail starts with a lower-case letter, as typed chat does and edited prose does not.

    >>> starts_lowercase("  make it short"), starts_lowercase("Make it short"), starts_lowercase("42 words")
    (True, False, False)
    """
    first = tail.strip()[:1]
    return first.isalpha() and first.islower()


def lacks_final_period(tail: str) -> bool:
    """The tail does not end in sentence punctuation, as typed chat often does not.

    >>> lacks_final_period("make it short"), lacks_final_period("Make it short."), lacks_final_period("why?")
    (True, False, False)
    """
    return not tail.rstrip().endswith((".", "!", "?", "。", "！", "？", ":", ";", '"', "'", ")"))


# Markers strong enough to tell a remark after prose from the prose's own last paragraph; the weak ones are
# recorded as features but never decide (pasted prose says "you" and "I" as often as users do).
STRONG_MARKERS = {"remark_casual": is_casual, "remark_request": is_request, "remark_question": is_question}
WEAK_MARKERS = {"remark_second_person": addresses_model, "remark_first_person": is_first_person,
                "remark_lowercase": starts_lowercase, "remark_no_final_period": lacks_final_period,
                "remark_template": is_template_line}


def markers(tail: str) -> tuple[str, ...]:
    """The names of the remark markers that fire on the tail, strong ones first, in a fixed order.

    >>> markers("btw can you keep it short?")
    ('remark_casual', 'remark_request', 'remark_question', 'remark_second_person', 'remark_lowercase')
    """
    return tuple(name for name, rule in {**STRONG_MARKERS, **WEAK_MARKERS}.items() if rule(tail))


def rejects(tail: str, artifact: str, kind: str, separator: str = "blank") -> str | None:
    """Why the tail cannot be a remark after an artifact of this kind, or None when it can.

    Every kind: the tail must be short (`remark_size_ok`), shorter than the artifact, not code, not program
    output, not a bare link, not a list item, not a letter's sign-off, not a heading, not the announcement
    of another paste, not the next line of a dialogue and not an extension's button label. After prose
    (which has no syntax to end), it must also carry a strong marker (casual, a request or a question),
    must not be the next of a list of questions, and, on the line right after the prose, must not be the
    rest of a wrapped sentence.

    >>> rejects("btw it's for class", "def area(r):\\n    return 3.14159 * r ** 2", "code") is None
    True
    >>> rejects("def g(): pass", "def f(x):\\n    return 2 * x + 1", "code")
    'code'
    """
    # Asked in this order, and no further than the first that fails: the size check comes first, so that
    # the other rules only ever read a tail of 40 words (though its lines may still be long).
    checks = (("size", lambda: not remark_size_ok(tail)),
              ("longer than half the artifact", lambda: not shorter_than_artifact(artifact, tail)),
              ("code", lambda: has_code_line(tail)), ("output", lambda: is_output(tail)),
              ("link", lambda: is_url_only(tail)), ("list item", lambda: is_list_item(tail)),
              ("sign-off", lambda: is_sign_off(tail)), ("announces more", lambda: introduces_more(tail)),
              ("heading", lambda: is_heading(tail)), ("dialogue", lambda: is_dialogue_line(tail)),
              ("interface text", lambda: is_interface_text(tail)))
    for reason, failed in checks:
        if failed():
            return reason
    if kind == "prose" and not any(rule(tail) for rule in STRONG_MARKERS.values()):
        return "no strong marker after prose"
    if kind == "prose" and continues_questions(tail, artifact):
        return "next question of a list"
    if kind == "prose" and separator == "newline" and continues_sentence(tail, artifact):
        return "rest of a wrapped sentence"
    return None
