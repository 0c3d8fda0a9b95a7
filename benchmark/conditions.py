"""Conditions: how a cluster becomes one user message, defined in TOML, built-in and the user's alike.

Every condition is a layout over the same parts of a cluster, with I the
instruction, A the artifact and C the trailing comment:

    I [" " sentence] "\\n\\n" [open "\\n"] A ["\\n" close] [breaks x "\\n" C]

`pool` says which comment C is (none, the casual one, the genre-native one).
`marking` says when the sentence and the marker lines are there: always (the
layout above), where the guard finds the seam (`guard`: the message without
them goes through `guard.mark.guard`, as a product would put the guard in front
of its model), or where a client's paste-size rule would mark the paste
(`paste-rule`: `guard.mark.paste_rule_marks` of the artifact).
The six built-in conditions are defined in benchmark/conditions.toml; a
condition file of the user's (`--conditions FILE`, docs/CONDITIONS.md) adds
conditions and paired contrasts in the same format, read by the same code, so
that a user's condition is rendered, checked, run, scored, tabled and shown
exactly as a built-in one. There is no other definition of the layouts: the
built-ins' messages are byte-identical to the benchmark's ever since (a test
renders all 300 clusters and compares a digest).

A condition file is checked whole when it is read: an unknown, missing or
mistyped key, an unknown pool, a name that is not a condition name or is a
built-in's, a contrast naming an undefined condition: one line naming the file
and the key (tomllib gives line numbers for syntax errors only, so the key is
named as its table path, e.g. `conditions.xml-tags.pool`). Whether the layouts
hold on every cluster (the artifact verbatim, markers that collide with
nothing, the declared byte-identities) is `seam.py check --conditions FILE`.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path

from common import tomlfile
from common.errors import UserError
from common.markers import Marker
from common.records import CONDITION_NAME_MAX, CONDITIONS, POOLS, Cluster, Comment, is_condition_name, shown
from guard.mark import guard, paste_rule_marks

BUILTIN_FILE = Path(__file__).resolve().with_name("conditions.toml")
# The project's condition files: a row naming a condition none of the files given defines is refused naming the
# one here that defines it, if any, so that the fix is one option away.
PROJECT_FILES = BUILTIN_FILE.parents[1] / "data" / "conditions"
MAX_USER_CONDITIONS = 5  # with the five built-in treatments, the ten series the rates figure tells apart
MAX_BREAKS = 3
MAX_TEXT = 300  # characters of a marker, a sentence or a phrase
KEYS = ("pool", "breaks", "sentence", "open", "close", "marking", "phrase", "plural", "same_prefix_as",
        "same_suffix_as")
# When the sentence and the markers are in the message: always, where the guard finds the seam, or where a client's
# paste-size rule marks the paste.
MARKINGS = ("always", "guard", "paste-rule")
TOP_KEYS = ("contrasts", "conditions")
SEPARATOR = "\n\n"  # between the instruction and the paste, in every condition
HINT = "the condition file that defines it (docs/CONDITIONS.md)"


@dataclass(frozen=True)
class Condition:
    """One condition: which comment trails the paste and how the message is laid out around it."""

    name: str
    pool: str  # "none" (clean only), "casual" or "native"
    breaks: int  # line breaks between the paste and the comment; 0 exactly for pool "none"
    sentence: str | None  # a sentence added to the instruction, after one space
    open: str | None  # a line before the artifact
    close: str | None  # a line after the artifact
    phrase: str  # how the summary sentences name it ("boundary markers")
    plural: bool  # whether `phrase` takes a plural verb
    same_prefix_as: str | None  # declared: every byte through the artifact's last is that condition's
    same_suffix_as: str | None  # declared: every byte from the instruction's end is that condition's
    origin: str  # the file that defines it
    builtin: bool
    marking: str = "always"  # one of MARKINGS: when the sentence and the markers are in the message

    @property
    def marked_by_rule(self) -> bool:
        """Whether a rule (the guard, the paste rule) decides per message if the markers are there."""
        return self.marking != "always"

    def unmarked(self) -> Condition:
        """This condition without its sentence and markers: the message a rule that does not mark leaves, and
        the guard's input."""
        return replace(self, sentence=None, open=None, close=None, marking="always")

    def laid_out(self, artifact: str) -> Condition:
        """The condition whose fixed layout a message of this one follows before any guard: itself, or for a
        rule-marked condition the marked or unmarked layout the paste rule picks (the guard's input for
        `guard`)."""
        if self.marking == "paste-rule" and paste_rule_marks(artifact):
            return replace(self, marking="always")
        return self.unmarked() if self.marked_by_rule else self

    def head(self, instruction: str) -> str:
        """The instruction as this condition sends it: with its added sentence, if any."""
        return instruction if self.sentence is None else f"{instruction} {self.sentence}"

    def render(self, instruction: str, artifact: str, comment: str | None) -> str:
        """The user message (layout in the module docstring); `comment` is the pool's comment text.

        >>> builtin().get("boundary").render("Fix it.", "x = 1", "btw lunch")
        'Fix it.\\n\\n-----BEGIN TEXT-----\\nx = 1\\n-----END TEXT-----\\nbtw lunch'
        >>> guarded = replace(builtin().get("boundary"), marking="guard")
        >>> guarded.render("Fix it:", "x = 1\\ny = 2", "btw lunch") == builtin().get("boundary").render(
        ...     "Fix it:", "x = 1\\ny = 2", "btw lunch")
        True
        """
        laid_out = self.laid_out(artifact)
        message = laid_out.layout(instruction, artifact, comment)
        if self.marking == "guard":
            return guard(message, open=self.open, close=self.close, sentence=self.sentence).message
        return message

    def layout(self, instruction: str, artifact: str, comment: str | None) -> str:
        """The message as the fixed layout puts the parts (the module docstring), whatever the marking."""
        message = self.head(instruction) + SEPARATOR
        if self.open is not None:
            message += self.open + "\n"
        message += artifact
        if self.close is not None:
            message += "\n" + self.close
        if self.pool != "none":
            if comment is None:
                raise ValueError(f"condition {self.name!r} trails a {self.pool} comment, but none was given")
            message += "\n" * self.breaks + comment
        return message

    def trailing(self, cluster: Cluster) -> Comment | None:
        """The comment this condition puts after the cluster's artifact (None for pool "none")."""
        return cluster.comment_of(self.pool)

    def message(self, cluster: Cluster) -> str:
        """The cluster's message under this condition."""
        trailing = self.trailing(cluster)
        return self.render(cluster.instruction, cluster.artifact, trailing.text if trailing else None)

    def artifact_start(self, instruction: str) -> int:
        """Where the artifact begins in a message of this condition."""
        return len(self.head(instruction)) + len(SEPARATOR) + (len(self.open) + 1 if self.open is not None else 0)

    @property
    def markers(self) -> tuple[str, ...]:
        """The marker lines, opening first."""
        return tuple(m for m in (self.open, self.close) if m is not None)


@dataclass(frozen=True)
class ConditionSet:
    """The conditions a stage knows: the built-ins, then those of the user's condition file, if one was given."""

    conditions: tuple[Condition, ...]
    contrasts: tuple[tuple[str, str], ...]  # (first, second), the built-in ones first
    files: tuple[str, ...] = ()  # the user's condition files read (none: the built-ins only)
    # For a stage that reads the built-in conditions only (validity, review): why it refuses any other, which
    # no --conditions FILE would change, so the refusal must not suggest one (`builtin_only`).
    refusal: str | None = None

    @cached_property
    def by_name(self) -> dict[str, Condition]:
        return {c.name: c for c in self.conditions}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.conditions)

    @property
    def treatments(self) -> tuple[str, ...]:
        """The conditions a comment trails: every one but clean, in order."""
        return tuple(c.name for c in self.conditions if c.pool != "none")

    @property
    def user(self) -> tuple[Condition, ...]:
        return tuple(c for c in self.conditions if not c.builtin)

    def has(self, name: str) -> bool:
        return name in self.by_name

    def get(self, name: str, where: str | None = None) -> Condition:
        """The condition named `name`; a `UserError` (prefixed with `where`) saying where it could be defined."""
        try:
            return self.by_name[name]
        except KeyError:
            prefix = f"{where}: " if where else ""
            raise UserError(f"{prefix}{self.undefined(name)}") from None

    def undefined(self, name: str) -> str:
        """The one-line message for a condition this set does not define, naming the project's condition file
        that defines it when there is one (data/conditions/)."""
        if self.refusal is not None:
            return f"condition {shown(name)} is not a built-in one; {self.refusal} (docs/CONDITIONS.md)"
        given = {Path(file).resolve() for file in self.files}
        defining = [path for path in defining_files(name) if Path(path).resolve() not in given]
        hint = (f"pass --conditions {defining[0]}, {HINT}" if len(defining) == 1 else
                f"pass --conditions with {HINT}: one of {', '.join(defining)}" if defining else
                f"pass --conditions FILE, {HINT}")
        if not self.files:
            return f"condition {shown(name)} is not defined (built-in: {', '.join(CONDITIONS)}); {hint}"
        return (f"condition {shown(name)} is not defined, neither built in nor in {', '.join(self.files)} "
                f"(which defines {listed([c.name for c in self.user])})"
                + (f"; {hint}" if defining else ""))

    def check(self, names, where: str | None = None) -> tuple[str, ...]:
        """`names` in the order given, each checked to be defined."""
        return tuple(self.get(name, where).name for name in names)

    def order(self, names) -> tuple[str, ...]:
        """`names` in this set's order; names it does not define come after, by name.

        >>> builtin().order({"native", "zz", "newline", "aa"})
        ('newline', 'native', 'aa', 'zz')
        """
        names = set(names)
        return tuple([c for c in self.names if c in names] + sorted(names - set(self.names)))

    def phrase(self, name: str) -> tuple[str, bool]:
        """(noun phrase, plural?) naming what a condition puts after the paste; "the NAME condition" when unknown."""
        condition = self.by_name.get(name)
        return (condition.phrase, condition.plural) if condition else (f"the {name} condition", False)


LISTED = 20  # names an error lists at most: a file of 10,000 conditions made a 69 kB error line


def listed(names: list[str]) -> str:
    """Names for a one-line message: the first 20, and how many more.

    >>> listed(["a", "b"]), listed([f"c{i}" for i in range(25)])[-14:], listed([])
    ('a, b', 'c19 and 5 more', 'none')
    """
    if not names:
        return "none"
    shown_names = ", ".join(names[:LISTED])
    return shown_names if len(names) <= LISTED else f"{shown_names} and {len(names) - LISTED:,} more"


@lru_cache(maxsize=1)
def builtin() -> ConditionSet:
    """The built-in conditions (benchmark/conditions.toml), checked to be CONDITIONS in their order."""
    conditions, contrasts = read_file(BUILTIN_FILE, known=(), builtin=True)
    names = tuple(c.name for c in conditions)
    if names != CONDITIONS:
        raise UserError(f"{BUILTIN_FILE}: defines {', '.join(names)}, expected {', '.join(CONDITIONS)} in this "
                        "order (common/records.py)")
    return ConditionSet(tuple(conditions), tuple(contrasts))


def builtin_only(refusal: str) -> ConditionSet:
    """The built-in conditions, for a stage that reads no others: any other is refused saying `refusal` (why).

    >>> builtin_only("a review reads the built-in ones only").undefined("xml-tags")
    "condition 'xml-tags' is not a built-in one; a review reads the built-in ones only (docs/CONDITIONS.md)"
    """
    return replace(builtin(), refusal=refusal)


def defining_files(name: str) -> list[str]:
    """The project's condition files (data/conditions/*.toml) that define a condition `name`, as paths from the
    working directory; a file that cannot be read is passed over (`seam.py check --conditions` reports it).

    >>> [Path(path).name for path in defining_files("xml-tags")], defining_files("sideways")
    (['example.toml'], [])
    """
    found = []
    for path in sorted(PROJECT_FILES.glob("*.toml")):
        try:
            tables = _toml(path).get("conditions")
        except UserError:
            continue
        if isinstance(tables, dict) and name in tables:
            found.append(os.path.relpath(path))
    return found


def load(path: str | Path | None) -> ConditionSet:
    """The built-in conditions, plus those of the condition file `path` when one is given."""
    base = builtin()
    if path is None:
        return base
    conditions, contrasts = read_file(Path(path), known=base.conditions)
    return ConditionSet(base.conditions + tuple(conditions), base.contrasts + tuple(contrasts), (str(path),))


def read_file(path: Path, *, known: tuple[Condition, ...], builtin: bool = False
              ) -> tuple[list[Condition], list[tuple[str, str]]]:
    """The conditions and contrasts a file defines, checked; `known` are those defined before it (the built-ins)."""
    data = _toml(path)
    for key in data:
        if key not in TOP_KEYS:
            raise UserError(f"{path}: unknown key {shown(key)}; a condition file holds 'contrasts' and "
                            "[conditions.NAME] tables (docs/CONDITIONS.md)")
    tables = data.get("conditions", {})
    if not isinstance(tables, dict):
        raise UserError(f"{path}: 'conditions' is {shown(tables)}, expected [conditions.NAME] tables")
    if not tables and not data.get("contrasts"):
        raise UserError(f"{path}: defines no condition and no contrast; add [conditions.NAME] tables "
                        "(docs/CONDITIONS.md)")
    if not builtin and len(tables) > MAX_USER_CONDITIONS:
        raise UserError(f"{path}: {len(tables)} conditions ({listed(list(map(str, tables)))}); a condition file "
                        f"defines at most {MAX_USER_CONDITIONS}, so that rates.svg can tell them and the five built-in "
                        "treatments apart; split them over two condition files (two studies)")
    builtins = {c.name for c in known if c.builtin}
    conditions = [_condition(path, name, table, builtin, builtins) for name, table in tables.items()]
    defined = {c.name: c for c in (*known, *conditions)}
    for condition in conditions:
        for key in ("same_prefix_as", "same_suffix_as"):
            other = getattr(condition, key)
            if other is not None and (other not in defined or other == condition.name):
                raise UserError(f"{path}: conditions.{condition.name}.{key} is {shown(other)}, expected another "
                                f"defined condition ({', '.join(n for n in defined if n != condition.name)})")
        if condition.same_suffix_as is not None and defined[condition.same_suffix_as].pool != condition.pool:
            raise UserError(f"{path}: conditions.{condition.name}.same_suffix_as is {shown(condition.same_suffix_as)}, "
                            f"whose comment is {defined[condition.same_suffix_as].pool}, not {condition.pool}: "
                            "expected a condition with the same pool")
    return conditions, _contrasts(path, data.get("contrasts", []), defined, builtin)


def _toml(path: Path) -> dict:
    """The condition file's TOML; every way reading it fails is one line (`common.tomlfile`)."""
    return tomlfile.load(path, "condition file")[0]


def _condition(path: Path, name: str, table, builtin: bool, builtins: set[str]) -> Condition:
    at = f"{path}: conditions.{name}"
    if not is_condition_name(name):
        raise UserError(f"{path}: conditions.{shown(name)}: a condition name is lower-case letters, digits and "
                        f"hyphens, starting with a letter (e.g. xml-tags), at most {CONDITION_NAME_MAX} characters")
    if name in builtins:
        raise UserError(f"{at}: {name!r} is a built-in condition ({BUILTIN_FILE.name}); give yours another name")
    if not isinstance(table, dict):
        raise UserError(f"{at} is {shown(table)}, expected a table of keys ({', '.join(KEYS)})")
    for key in table:
        if key not in KEYS:
            raise UserError(f"{at}.{key}: unknown key; expected some of {', '.join(KEYS)}")
    pools = POOLS if builtin else POOLS[1:]
    expected_pool = " or ".join(f'"{p}"' for p in pools) + " (which comment trails the paste)"
    if "pool" not in table:
        raise UserError(f"{at}.pool is missing, expected {expected_pool}")
    pool = table["pool"]
    if pool not in pools:
        raise UserError(f"{at}.pool is {shown(pool)}, expected {expected_pool}")
    if pool == "none":
        if "breaks" in table:
            raise UserError(f"{at}.breaks: a condition without a comment has no line breaks before one")
        breaks = 0
    else:
        breaks = table.get("breaks", 1)
        if isinstance(breaks, bool) or not isinstance(breaks, int) or not 1 <= breaks <= MAX_BREAKS:
            raise UserError(f"{at}.breaks is {shown(breaks)}, expected a whole number from 1 to {MAX_BREAKS} "
                            "(line breaks between the paste and the comment)")
    texts = {key: _text(at, key, table.get(key)) for key in ("sentence", "open", "close", "phrase")}
    marking = _marking(at, table, texts)
    for key in ("open", "close"):
        if texts[key] is not None and not Marker.of(texts[key]).form:
            raise UserError(f"{at}.{key} is {shown(texts[key])}, expected a line with more than emphasis marks "
                            "(* _ `) in it")
    plural = table.get("plural", False)
    if not isinstance(plural, bool):
        raise UserError(f"{at}.plural is {shown(plural)}, expected true or false (whether the phrase is plural)")
    same = {}
    for key in ("same_prefix_as", "same_suffix_as"):
        value = table.get(key)
        if value is not None and not isinstance(value, str):
            raise UserError(f"{at}.{key} is {shown(value)}, expected the name of another condition")
        same[key] = value
    return Condition(name=name, pool=pool, breaks=breaks, sentence=texts["sentence"], open=texts["open"],
                     close=texts["close"], phrase=texts["phrase"] or f"the {name} condition", plural=plural,
                     **same, origin=str(path), builtin=builtin, marking=marking)


def _marking(at: str, table: dict, texts: dict[str, str | None]) -> str:
    """The `marking` key, checked: a rule that marks needs both marker lines, and a message it may or may not
    mark declares no byte-identity with another condition."""
    marking = table.get("marking", "always")
    if marking not in MARKINGS:
        raise UserError(f"{at}.marking is {shown(marking)}, expected " + " or ".join(f'"{m}"' for m in MARKINGS)
                        + " (when the markers are in the message)")
    if marking != "always":
        for key in ("open", "close"):
            if texts[key] is None:
                raise UserError(f"{at}.{key} is missing: marking {marking!r} puts both marker lines (open and "
                                "close) around the paste where it marks")
        for key in ("same_prefix_as", "same_suffix_as"):
            if table.get(key) is not None:
                raise UserError(f"{at}.{key}: a condition with marking {marking!r} is marked message by message, "
                                "so it declares no byte-identity with another condition")
    return marking


def _text(at: str, key: str, value) -> str | None:
    """An optional one-line text key: a marker line, the added sentence, the phrase. No control character
    (a line break, a tab, NUL, an escape): each goes into every message, a CSV cell or the page as it is."""
    if value is None:
        return None
    expected = (f"one line of text without white space at either end nor control characters, at most {MAX_TEXT} "
                "characters")
    if (not isinstance(value, str) or not value or value != value.strip() or len(value) > MAX_TEXT
            or any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in value)):
        raise UserError(f"{at}.{key} is {shown(value)}, expected {expected}")
    return value


def _contrasts(path: Path, value, defined: dict[str, Condition], builtin: bool) -> list[tuple[str, str]]:
    expected = 'a list of "FIRST vs SECOND" strings, e.g. ["newline vs xml-tags"]'
    if not isinstance(value, list):
        raise UserError(f"{path}: contrasts is {shown(value)}, expected {expected}")
    known = set() if builtin else set(builtin_contrasts())
    found: list[tuple[str, str]] = []
    for index, item in enumerate(value):
        at = f"{path}: contrasts[{index}]"
        parts = item.split(" vs ") if isinstance(item, str) else []
        if len(parts) != 2:
            raise UserError(f"{at} is {shown(item)}, expected {expected}")
        first, second = (part.strip() for part in parts)
        for name in (first, second):
            if name not in defined:
                raise UserError(f"{at} is {shown(item)}: {name!r} is not defined here or built in")
            if defined[name].pool == "none":
                raise UserError(f"{at} is {shown(item)}: {name!r} has no comment, so no labels to contrast "
                                "(every treatment is already scored against it)")
        if first == second:
            raise UserError(f"{at} is {shown(item)}: expected two different conditions")
        for pair, how in (((first, second), ""), ((second, first), f" as '{second} vs {first}'")):
            # The reversed pair is the same test of the same pairs (the difference changes sign only): listed
            # twice, it would be one more row per model in every table, and counted twice by the summaries.
            if pair in known or pair in found:
                listed = "built in" if pair in known else "listed" if how else "listed twice"
                raise UserError(f"{at} is {shown(item)}: that contrast is {listed}{how} already")
        found.append((first, second))
    return found


def builtin_contrasts() -> tuple[tuple[str, str], ...]:
    return builtin().contrasts
