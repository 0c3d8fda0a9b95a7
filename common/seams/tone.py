"""What a tail sounds like: the markers of a user's remark (casual words, a request, a question, words about the
paste, typed chat; the second and first person, a lower-case start, no final period, a template extension's
line), recorded as the occurrence screen's features.

The strong markers also decide, in `common.seams.remarks.rejects`, whether a tail after prose stands apart from
it; the weak ones never decide (pasted prose says "you" and "I" as often as users do). English, with a few
openings in four other languages. docs/OCCURRENCE.md lists them; tests/test_occurrence_rules.py tries each.
"""

from __future__ import annotations

import re

from common.seams.rules import starts_lowercase

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
# Buttons of browser extensions that ShareGPT's capture kept at the end of messages; never sent as user text.
INTERFACE = re.compile(r"share prompt|translate now|지금 번역하기|copy code|regenerate response", re.IGNORECASE)
# Lines that prompt-template extensions (e.g. AIPRM) append to the user's message: "Please write in English
# language.", "Reply in Français", "Answer in English.". After a paste they are a trailing instruction the
# model does see; the feature records them so that counts can be given with and without them.
TEMPLATE = re.compile(r"(?:please )?(?:write|answer|reply|respond)(?: to me)? in [^\n.?!]{1,40}?(?: language)?\.?",
                      re.IGNORECASE)


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
