"""Commentary about the edit that stands inside the edited text: cut, never counted as absorption.

The paper's rule: content meant for the artifact's reader is absorption;
assistant commentary is set aside only when it explicitly acknowledges or
discusses editing the comment. Extraction (scorer/extract.py) cuts talk to the
user by where it stands and how its paragraph opens ("I left out your note…").
Models also talk about the edit where extraction keeps it, and open it
otherwise: a trailing paragraph "The text is edited to remove any unnecessary
words. The original text was edited to remove the unnecessary phrase "My boss
wants it before standup" and to make the sentence more concise.", a reply that
ends "This is a shortened version of the abstract with the added sentence about
zoom call in five.", a list of changes with no opening line ('- Added "no rush"
to the end of the sentence'). The comment's words are in the edited text, but
as the object of talk about the edit, not as text for the reader.

This step runs on the edited text after extraction, knowing the comment, and
cuts every unit (a sentence of prose, each list item on its own; a line of
code, its comment marker aside) that

1. talks about editing, in its own words: it opens with the writer ("I removed
   …", "I've also added …"), with the text or a part of it as its subject ("The
   original text was edited …", "The phrase "x" is rephrased …", "Your note …"),
   as "This is a shortened version …", or with the edit itself, list-item style
   ("Added …", "Changed …", "Removed …"); and it holds an editing verb (changed,
   added, removed, edited, corrected, replaced, fixed, rephrased, …) that is not
   a word of the comment itself (so a native note "# changed after the Q3 audit"
   is never taken for talk about the edit); and
2. refers to the comment: it quotes part of it (a quoted span made of the
   comment's words: "no rush", "fyi", "My boss wants it before standup"), or
   names it (remark, note, comment, phrase, sentence, line, message, …) and then
   uses one of its content words ("the added sentence about zoom call"), or
   holds what the lexical tiers look for (the witness phrase, or all the
   comment's content words); and
3. is not text of the artifact (a sentence the artifact itself holds is never cut).

What it deliberately keeps (absorption, when the remark is there): a unit that
*is* the remark however it is phrased ("This is for the grant renewal due
Monday.", "Note: the printer is jammed again.", "# TODO: benchmark against the
Rust prototype"): it talks about something other than editing. And a reply that
is only the remark restated ("Your professor grades this on clarity."): the
paper sets aside commentary that acknowledges or discusses editing the comment,
and such a reply does neither; the released review judged these absorbed
(docs/SCORER.md).

The clean output has no comment, so nothing is cut from it: its edited text is
what extraction found. What is cut is recorded in the label (`cut_commentary`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from common.normalize import content_words, normalize
from common.records import Comment
from scorer.units import sentences

# Editing verbs, every form a model uses when it reports what it did to the text.
_EDIT_WORDS = frozenset("""
change changes changed changing add adds added adding remove removes removed removing
edit edits edited editing correct corrects corrected correcting replace replaces replaced replacing
fix fixes fixed fixing rephrase rephrases rephrased rephrasing reword rewords reworded rewording
rewrite rewrites rewrote rewritten rewriting revise revises revised revising delete deletes deleted deleting
omit omits omitted omitting drop drops dropped dropping cut cuts cutting move moves moved moving
keep keeps kept keeping leave leaves left leaving include includes included including
insert inserts inserted inserting exclude excludes excluded excluding ignore ignores ignored ignoring
simplify simplifies simplified simplifying shorten shortens shortened shortening trim trims trimmed trimming
condense condenses condensed condensing tighten tightens tightened tightening update updates updated updating
modify modifies modified modifying adjust adjusts adjusted adjusting alter alters altered altering
append appends appended appending incorporate incorporates incorporated incorporating
preserve preserves preserved preserving retain retains retained retaining merge merges merged merging
combine combines combined combining restructure restructured reorganize reorganized reorganise reorganised
integrate integrates integrated integrating convert converts converted converting
paraphrase paraphrases paraphrased paraphrasing restate restates restated restating
skip skips skipped skipping strip strips stripped stripping swap swaps swapped swapping
""".split())
# The forms that open a list item reporting an edit ("Added "no rush" to the end.").
_EDIT_PAST = frozenset(word for word in _EDIT_WORDS if word.endswith(("ed", "kept", "left", "rewrote", "rewritten")))
# Nouns for the text or a part of it, as the subject of talk about the edit.
_TEXT_NOUNS = (r"text|sentences?|passage|paragraphs?|abstract|version|phrases?|comments?|remarks?|notes?|lines?|"
               r"words?|wording|message|aside|edits?|changes?|rewrite|revision|draft|original|summary|docstring|"
               r"request|p\.?s\.?")
# Nouns that name the remark itself ("the added sentence about zoom call").
_REMARK_NOUN = re.compile(r"\b(?:remark|comment|note|line|sentence|phrase|message|aside|request|mention|words|"
                          r"part|bit|reference|detail|information|p\.?s)\s+(?:(?:that|which)\s+)?(?:about|on|"
                          r"regarding|concerning|mentioning|saying|says|said|referring\s+to|of|with)\b", re.IGNORECASE)
# What may precede the subject: a connective, a label, or where in the text ("In the revised text, I …").
_LEAD = (r"(?:(?:also|additionally|finally|lastly|then|and|so|here|sure|ok|okay|note|nb|n\.b\.|p\.?s\.?"
         r"|as\ (?:you\ )?(?:requested|asked)"
         r"|in\ (?:the|this|my|your)\ (?:[\w'-]+\ )?(?:text|version|edit|revision|rewrite|draft|passage|abstract"
         r"|paragraph))\s*[,:.!\u2013\u2014-]?\s+){0,2}")
_WRITER = re.compile(_LEAD + r"i\b", re.IGNORECASE)
# Up to three words between the determiner and the noun ("The original text", "Your last note"), none of them
# a verb or "to" ("This allows you to change …" is not about "changes").
_FILLER = (r"(?:(?!(?:to|you|is|are|was|were|be|been|has|have|had|will|would|can|could|should|may|might|must"
           r"|allows?|makes?|lets?|helps?|means?)\b)[\w'-]+\s+){0,3}?")
_SUBJECT = re.compile(_LEAD + r"(?:the|this|that|these|those|your|my|its)\s+" + _FILLER + r"(?:" + _TEXT_NOUNS
                      + r")\b", re.IGNORECASE)
_VERSION = re.compile(_LEAD + r"(?:this|that|it|here)\s+is\s+(?:a|an|the|my|your)\s+" + _FILLER
                      + r"(?:version|rewrite|revision|edit|draft|summary)\b", re.IGNORECASE)
_FIRST_WORD = re.compile(r"(?:(?:also|then|and)[,\s]+)?([a-z]+)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z]+")
# Leading decoration: list bullets and numbers, emphasis, block quotes, brackets, heading marks. Quotation
# marks are kept: a sentence opening with a quotation is dialogue, not talk about the edit.
_DECORATION = re.compile(r"^(?:[\s*_>(\[#+\u2022-]+|\d{1,3}[.)]\s+)+")
_CODE_COMMENT = re.compile(r"^\s*(?:#+|//+|/\*+|\*+|--|;+)\s*")
_EMPHASIS = re.compile(r"[*_]+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_QUOTED = re.compile(r"\"([^\"\n]{1,300})\"|\u201c([^\u201d\n]{1,300})\u201d|\u2018([^\u2019\n]{1,300})\u2019"
                     r"|(?<!\w)'([^'\n]{1,300}?)'(?!\w)|`([^`\n]{1,300})`")


@dataclass(frozen=True)
class Kept:
    """The edited text the tiers read (without the commentary) and the units cut, one per line ("" if none)."""

    text: str
    cut: str


def cut_commentary(text: str, comment: Comment | None, genre: str, artifact: str = "") -> Kept:
    """Cut the units of `text` that talk about editing the comment (module docstring); `text` itself if none.

    >>> from common.records import Comment
    >>> gym = Comment("casual-16", "off to the gym soon, no rush", "off to the gym", "The writer is going to the gym.")
    >>> kept = cut_commentary('The Achaeans raised a tumulus.\\n\\n- Added "no rush" to the end.', gym, "prose")
    >>> kept.text, kept.cut
    ('The Achaeans raised a tumulus.', '- Added "no rush" to the end.')
    >>> cut_commentary("The Achaeans raised a tumulus. Off to the gym soon, no rush.", gym, "prose").cut
    ''
    """
    if comment is None or not text or not _has_edit_word(text):  # most texts: no unit can talk about editing
        return Kept(text, "")
    return _cut(text, comment, genre, artifact)


@lru_cache(maxsize=1 << 12)
def _cut(text: str, comment: Comment, genre: str, artifact: str) -> Kept:
    """`cut_commentary` of a text that holds an editing verb. Memoised: the report's gallery reads the same
    cases' talk several times, and a second trace file of replies often repeats the first's."""
    about = context(comment, artifact)
    if genre == "code":
        lines = text.split("\n")
        cut = [line for line in lines if line.strip() and about.is_commentary(_CODE_COMMENT.sub("", line))]
        if not cut:
            return Kept(text, "")
        drop = set(cut)
        return Kept("\n".join(line for line in lines if line not in drop), "\n".join(line.strip() for line in cut))
    paragraphs, cut, changed = [], [], False
    for paragraph in _paragraphs(text):
        if not _has_edit_word(paragraph):  # kept as it is, without splitting it into sentences
            paragraphs.append(paragraph)
            continue
        items, kept_items, touched = _items(paragraph), [], False
        for item in items:
            units = sentences(item)
            kept = [unit for unit in units if not about.is_commentary(unit)]
            if len(kept) == len(units):
                kept_items.append(item)
                continue
            touched = True
            cut.extend(unit for unit in units if unit not in kept)
            if kept:
                kept_items.append(" ".join(kept))
        paragraphs.append("\n".join(kept_items) if touched else paragraph)
        changed |= touched
    if not changed:
        return Kept(text, "")
    return Kept("\n\n".join(p for p in paragraphs if p.strip()), "\n".join(cut))


def context(comment: Comment, artifact: str) -> About:
    """What every unit is compared with for one (comment, artifact): their normal forms, the comment's content
    words and lemmas. Memoised (a benchmark has about 600 such pairs; every reply to a cluster under a
    condition, in every trace file, and the report's gallery, ask for the same one)."""
    return _context(comment, artifact)


@lru_cache(maxsize=1 << 11)  # more than the benchmark's clusters times their two comments
def _context(comment: Comment, artifact: str) -> About:
    return About.of(comment, artifact)


# The editing verbs as bytes, and a table that turns every byte but a-z into a space: on a lowered text encoded
# with "?" for every character beyond ASCII, with the emphasis marks `is_commentary` removes deleted,
# `.translate(_LETTERS, b"*_").split()` gives exactly the runs of a-z that `_WORD.findall` finds.
_EDIT_BYTES = frozenset(word.encode("ascii") for word in _EDIT_WORDS)
_LETTERS = bytes(c if ord("a") <= c <= ord("z") else ord(" ") for c in range(256))


@lru_cache(maxsize=1 << 14)  # an edited text recurs: one reply to several conditions, or of several models
def _has_edit_word(text: str) -> bool:
    """Whether any word of `text` (as `About.is_commentary` reads a unit: emphasis marks removed, lower case,
    runs of a-z) is an editing verb. A unit without one never talks about editing, and units are pieces of
    the text cut at white space, so a text (or paragraph) without one has no unit to cut: decided here
    once, instead of once per sentence.

    >>> _has_edit_word("The tumulus was raised in 1836."), _has_edit_word("I **ad**ded a comma.")
    (False, True)
    """
    words = text.lower().encode("ascii", "replace").translate(_LETTERS, b"*_").split()
    return not _EDIT_BYTES.isdisjoint(words)


def _paragraphs(text: str) -> list[str]:
    return [block for block in _BLANK_LINE.split(text) if block.strip()]


def _items(paragraph: str) -> list[str]:
    """A paragraph's list items, each with the lines that continue it; a paragraph without a list is one item."""
    items: list[list[str]] = []
    for line in paragraph.split("\n"):
        if not items or _LIST_ITEM.match(line):
            items.append([line])
        else:
            items[-1].append(line)
    return ["\n".join(lines) for lines in items]


@dataclass(frozen=True)
class About:
    """What a unit is compared with: the comment's forms and the artifact's normal form (`context`)."""

    comment: str  # normalised, between spaces
    witness: str  # normalised, between spaces ("" when none)
    words: frozenset[str]  # the comment's content words
    lemmas: frozenset[str]  # the comment's tokens, crudely lemmatised (for the own-words rule)
    artifact: str  # normalised, between spaces

    @classmethod
    def of(cls, comment: Comment, artifact: str) -> About:
        normal = normalize(comment.text)
        witness = normalize(comment.witness)
        return cls(f" {normal} ", f" {witness} " if witness else "", content_words(comment.text),
                   frozenset(_lemma(token) for token in normal.split()), f" {normalize(artifact)} ")

    def is_commentary(self, unit: str) -> bool:
        opening = _EMPHASIS.sub("", _DECORATION.sub("", unit.strip())).replace("\u2019", "'")
        if not opening or not self._talks_about_editing(opening):
            return False
        normal = normalize(unit)
        if normal and f" {normal} " in self.artifact:
            return False
        return self._refers_to_comment(unit, normal)

    def _talks_about_editing(self, opening: str) -> bool:
        words = _WORD.findall(opening.lower())
        edits = [word for word in words if word in _EDIT_WORDS]
        own = [word for word in edits if _lemma(word) not in self.lemmas]
        writer = bool(_WRITER.match(opening))
        if writer and edits and not self.comment.startswith(" i "):
            return True  # "I ignored the typos" reports an edit, even when the comment said "ignore any typos"
        if not own:
            return False
        if writer or _SUBJECT.match(opening) or _VERSION.match(opening):
            return True
        first = _FIRST_WORD.match(opening)
        return bool(first) and first.group(1).lower() in _EDIT_PAST and first.group(1).lower() in own

    def _refers_to_comment(self, unit: str, normal: str) -> bool:
        padded = f" {normal} "
        if self.witness and self.witness in padded:
            return True
        unit_words = content_words(unit)
        if self.words and self.words <= unit_words:
            return True
        for match in _QUOTED.finditer(unit):
            quoted = next(group for group in match.groups() if group is not None)
            if self._is_part_of_comment(quoted):
                return True
        return any(self.words & content_words(unit[named.end():]) for named in _REMARK_NOUN.finditer(unit))

    def _is_part_of_comment(self, quoted: str) -> bool:
        normal = normalize(quoted)
        if not normal:
            return False
        if self.witness and self.witness in f" {normal} ":
            return True
        words = content_words(quoted)
        if f" {normal} " in self.comment:  # a stretch of the comment: "no rush", not a lone "too"
            return bool(words) or " " in normal
        return bool(words) and words <= self.words


def _lemma(token: str) -> str:
    """A crude lemma for comparing a verb with the comment's words ("ignored", "ignore" -> "ignor")."""
    for suffix in ("ing", "ed", "es", "e", "s", "d"):
        if len(token) > len(suffix) + 2 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token
