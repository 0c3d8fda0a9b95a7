"""How pasted letters, posts and stories end: sign-offs with a name, signature blocks, postscripts and closing
lines, which are the paste's own last lines and not a remark after it.

A letter's "Best,\\nLeo", its signature block and its "P.S." belong to the paste;
after them, the user's own words may follow. A post's or a story's closing line
("Thanks for reading!", "The end.") ends the paste too. English, with the common
sign-offs of German, French, Spanish and Italian. Pure functions of text
(docs/OCCURRENCE.md, "The screen's rules").
"""

from __future__ import annotations

import re

from common.seams.rules import is_blank, word_count

SIGN_OFF = re.compile(r"\s*(?:many thanks|thanks in advance|thank you in advance|thanks|thank you|thx|love|"
                      r"best regards|kind regards|warm regards|regards|best|"
                      r"sincerely|yours sincerely|yours truly|yours|cheers|respectfully|warmly|all the best|"
                      r"mit freundlichen grüßen|viele grüße|liebe grüße|beste grüße|bien cordialement|cordialement|"
                      r"bien à vous|saludos cordiales|un saludo|saludos|atentamente|cordiali saluti|distinti saluti)"
                      r"\s*[,.!]?\s*", re.IGNORECASE)


# A name under a sign-off; an assistant's name ("Thanks ChatGPT") is the user speaking to it, not signing.
NAME = re.compile(r"(?!(?:ChatGPT|GPT|Claude|Gemini|Bard|Copilot|AI|Assistant)\b)"
                  r"(?:\[[^\]\n]{1,40}\]|[A-Z][\w.'-]*(?:[ \t]+[A-Z][\w.'-]*){0,3})\s*")


# The last line of a letter, a post or a story, alone: part of the paste ("Love you", "Enjoy!", "The end.",
# "Thanks for reading! See you next week.", "Any help would be appreciated, thanks!", "Bonne journée !").
CLOSING = (r"(?:love you|love|lots of love|hugs|xoxo|xx+|sent from my \w+|enjoy|the end|fin|"
           r"thanks for (?:reading|watching|listening|your time|your attention)|see you (?:next \w+|soon|then)|"
           r"(?:any|all) (?:help|feedback|advice) (?:would be|is|will be) (?:greatly |much |very much )?appreciated|"
           r"thanks in advance|thank you in advance|"
           r"bonne (?:journée|soirée|semaine)|bis (?:bald|morgen)|hasta (?:pronto|luego|mañana))")


CLOSING_ALONE = re.compile(rf"\s*{CLOSING}(?:\s*[,.!]+\s*{CLOSING})*\s*[,.!]*\s*",
                           re.IGNORECASE)


def is_closing_line(tail: str) -> bool:
    """The tail is a letter's, a post's or a story's closing line alone ("Love you", "Enjoy!", "The end.",
    "Thanks for reading!"): after prose, the end of the paste; after code, the user's own ("Thanks in advance.").

    >>> is_closing_line("Thanks for reading! See you next week."), is_closing_line("Enjoy!")
    (True, True)
    >>> is_closing_line("enjoy it"), is_closing_line("thanks!")
    (False, False)
    """
    return CLOSING_ALONE.fullmatch(tail) is not None


def is_sign_off(tail: str) -> bool:
    """The tail closes a letter ("Best regards,\\nAnna", "Thanks,\\n[Your Name]"): the end of a pasted email,
    not a remark to the model. A bare "thanks!" with no name after it is a remark, not a sign-off.

    >>> is_sign_off("Best regards,\\nAnna Smith"), is_sign_off("Thanks,\\n[Your Name]"), is_sign_off("thanks!")
    (True, True, False)
    >>> is_sign_off("thanks a lot"), is_sign_off("Thanks, John"), is_sign_off("Love,\\nTom")
    (False, True, True)
    """
    match = SIGN_OFF.match(tail)
    if match is None:
        return False
    name = tail[match.end():]
    return bool(name.strip()) and NAME.fullmatch(name) is not None


MAX_SIGNATURE_LINES = 5  # a signature block under the sign-off: name, title, company, phone, address
SIGNATURE_LINE_WORDS = 8


def ends_with_sign_off(text: str) -> bool:
    """The text's last lines close a letter: a sign-off and a name ("Best,\\nLeo"), both on one line, or a
    sign-off line followed by a short signature block (name, title, company, phone: at most five lines of
    at most eight words).

    >>> ends_with_sign_off("Hi Maria,\\nSee you soon.\\n\\nBest,\\nLeo"), ends_with_sign_off("It ended there.")
    (True, False)
    >>> ends_with_sign_off("Hi,\\nKind regards,\\n\\nMichael Brandt\\nSenior Consultant\\n+44 20 7946 0321")
    True
    """
    lines = [line for line in text.split("\n") if not is_blank(line)]
    if any(is_sign_off("\n".join(lines[-count:])) for count in (1, 2) if len(lines) >= count):
        return True
    for back in range(2, min(len(lines), MAX_SIGNATURE_LINES + 1) + 1):
        if SIGN_OFF.fullmatch(lines[-back]):
            return all(word_count(line) <= SIGNATURE_LINE_WORDS for line in lines[-back + 1:])
    return False


POSTSCRIPT = re.compile(r"\s*(?:P\.S\.|P\.S\b|PS[:.]|PPS\b|P\.P\.S\.)")


def is_postscript(tail: str, artifact: str) -> bool:
    """A letter's P.S. after its sign-off ("Best,\\nLeo" then "P.S. Sam left his scarf"): part of the pasted
    letter, not the user's remark after it.

    >>> is_postscript("P.S. Sam left his scarf here.", "Dear Mo,\\nThanks again.\\nBest,\\nLeo")
    True
    >>> is_postscript("ps make it shorter", "Dear Mo,\\nThanks again.\\nBest,\\nLeo")
    False
    """
    return POSTSCRIPT.match(tail) is not None and ends_with_sign_off(artifact)
