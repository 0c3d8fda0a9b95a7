"""British and American spellings folded to one form, so that a remark respelt by the model is still its words.

A model asked to edit a text often respells the user's words in its own variety: "behaviour under WSL2"
comes back as "behavior under WSL2". `fold` maps a normalised token (lower case, letters and digits) to
one spelling, and the scorer folds the comment and the output alike, so which variety either is written
in does not matter. The rules are a small fixed set, part of the scorer's version like the stopwords:

1. a short list of pairs that no suffix rule covers (grey/gray, programme/program, defence/defense, ...);
2. -our to -or in words of six letters or more, with their endings: colour(s/ed/ful/ing), behaviour(al),
   favourite, neighbourhood (hour, four, your, tour and flour are shorter and never touched);
3. -ise to -ize and -yse to -yze, with -ised, -ising, -ises, -isation(s), -isational, -isable, -iser(s);
4. -tre, -bre, -gre, -vre to -ter, -ber, -ger, -ver (centre, fibre, meagre, manoeuvre; plural -s too),
   in words of five letters or more, timbre (a word of its own beside timber) excepted;
5. a doubled l before -ed, -ing, -er, -ers folded after a vowel that ends four letters or more
   (travelled, cancelling, modeller), so filled, called and smaller are untouched.

Folding both sides can only make two different words meet when both fold to the same form; the rules
are chosen, and `KEPT` lists the exceptions, so that the forms they make are not other words (the
length limits keep "four" from becoming the stopword "for"). The rules act on a word's shape, not on a
dictionary, so some words already American are folded too ("raise" becomes "raize", "installed"
"instaled"): harmless, since the comment and the output fold alike. A few deliberate pairs merge a
British word with an American homograph (storey/story, cheque/check, tyre/tire, mum/mom): a remark
about either is still the same remark.
"""

from __future__ import annotations

import re
from functools import lru_cache

PAIRS = {
    "grey": "gray", "greys": "grays", "programme": "program", "programmes": "programs", "defence": "defense",
    "offence": "offense", "licence": "license", "licences": "licenses", "practise": "practice",
    "practised": "practiced", "practising": "practicing", "judgement": "judgment", "judgements": "judgments",
    "ageing": "aging", "catalogue": "catalog", "catalogues": "catalogs", "dialogue": "dialog",
    "dialogues": "dialogs", "analogue": "analog", "plough": "plow", "sceptical": "skeptical",
    "maths": "math", "mum": "mom", "aluminium": "aluminum", "amongst": "among",
    "practises": "practices", "defences": "defenses", "offences": "offenses", "moulds": "molds",
    "ploughed": "plowed", "ploughs": "plows", "instalments": "installments", "storeys": "stories",
    "draughts": "drafts", "greying": "graying", "fulfils": "fulfills", "fulfilment": "fulfillment",
    "enrolment": "enrollment", "enrolments": "enrollments", "odour": "odor", "odours": "odors",
    "learnt": "learned", "spelt": "spelled", "dreamt": "dreamed", "pyjamas": "pajamas", "mould": "mold",
    "fulfil": "fulfill", "enrol": "enroll", "skilful": "skillful", "instalment": "installment",
    "jewellery": "jewelry", "cheque": "check", "cheques": "checks", "tyre": "tire", "tyres": "tires",
    "storey": "story", "kerb": "curb", "draught": "draft", "manoeuvre": "maneuver", "manoeuvres": "maneuvers",
    "encyclopaedia": "encyclopedia", "oestrogen": "estrogen", "paediatric": "pediatric", "moustache": "mustache",
}
OUR = re.compile(r"(?P<stem>[a-z]{3,})our(?P<end>s|ed|ing|ite|ites|itism|able|ably|al|ally|ful|fully|less|er|ers|ist|"
                 r"ists|hood|hoods|ly)?")
ISE = re.compile(r"(?P<stem>[a-z]{2,}[iy])s(?P<end>e|ed|es|ing|ation|ations|ational|able|er|ers)")
RE = re.compile(r"(?P<stem>[a-z]{2,}[tbgv])re(?P<end>s?)")
LL = re.compile(r"(?P<stem>[a-z]{3,}[aeiou])ll(?P<end>ed|ing|er|ers)")
# Words the rules would fold into another word: a verb of its own (prise, refill), a noun plural beside a
# verb (analyses), French names; "whilst" is no pair, since "while" is a stopword.
KEPT = frozenset({"timbre", "timbres", "prise", "prised", "prises", "prising", "refilled", "refilling",
                  "refiller", "refillers", "analyses", "paralyses", "dialyses", "chartres", "votre"})


@lru_cache(maxsize=1 << 16)
def fold(token: str) -> str:
    """One spelling of a normalised token.

    >>> [fold(t) for t in ("behaviour", "colours", "favourite", "hour", "four", "your", "tour")]
    ['behavior', 'colors', 'favorite', 'hour', 'four', 'your', 'tour']
    >>> [fold(t) for t in ("organise", "realised", "analysing", "summarisation", "organize")]
    ['organize', 'realized', 'analyzing', 'summarization', 'organize']
    >>> [fold(t) for t in ("centre", "fibres", "timbre", "genre", "acre", "more")]
    ['center', 'fibers', 'timbre', 'genre', 'acre', 'more']
    >>> [fold(t) for t in ("travelled", "cancelling", "filled", "called", "smaller", "grey")]
    ['traveled', 'canceling', 'filled', 'called', 'smaller', 'gray']
    """
    if token in PAIRS:
        return PAIRS[token]
    if token in KEPT or len(token) < 5 or not token.isascii():
        return token
    for pattern, american in ((OUR, "or"), (ISE, "z"), (RE, "er"), (LL, "l")):
        match = pattern.fullmatch(token)
        if match and (pattern is not OUR or len(match["stem"]) + 3 >= 6):
            return match["stem"] + american + (match["end"] or "")
    return token


def fold_normal(normal: str) -> str:
    """A normalised text (tokens between single spaces) with every token folded.

    >>> fold_normal("behaviour under wsl2 may differ")
    'behavior under wsl2 may differ'
    """
    return " ".join(map(fold, normal.split(" "))) if normal else normal  # map: no generator frame per token
