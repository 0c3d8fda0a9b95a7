"""Reading a condition file: every key checked, every mistake one line naming the file, the condition and the key.

A condition file is checked whole when it is read: an unknown, missing or
mistyped key, an unknown pool, a name that is not a condition name or is a
built-in's, a contrast naming an undefined condition, a later turn naming a
part that does not exist, a control that is itself a treatment or a cycle of
controls: one line naming the file and the key (tomllib gives line numbers for
syntax errors only, so the key is named as its table path, e.g.
`conditions.xml-tags.pool`). Whether the layouts hold on every cluster (the
artifact verbatim, markers that collide with nothing, the declared
byte-identities) is `seam.py check --conditions FILE`.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from benchmark.condition import FOLLOW_UP, MARKINGS, REPLIES, REPLY, Condition
from common import tomlfile
from common.errors import UserError
from common.markers import Marker
from common.records import CONDITION_NAME_MAX, POOLS, is_condition_name, shown

BUILTIN_FILE = Path(__file__).resolve().with_name("conditions.toml")
MAX_USER_CONDITIONS = 5  # with the five built-in treatments, the ten series the rates figure tells apart
MAX_BREAKS = 3
MAX_TEXT = 300  # characters of a marker, a sentence, a phrase or a follow-up instruction
MAX_SYSTEM = 4_000  # characters of a system prompt
MAX_REPLY_TEXT = 20_000  # characters of a fixed assistant turn
MAX_FOLLOW_UPS = 20
KEYS = ("pool", "breaks", "sentence", "open", "close", "marking", "phrase", "plural", "same_prefix_as",
        "same_suffix_as", "system", "turns", "reply", "reply_text", "follow_up", "control")
TOP_KEYS = ("contrasts", "recovered", "conditions")
MAX_RECOVERED = 5


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


def read_file(path: Path, *, known: tuple[Condition, ...], known_contrasts: tuple[tuple[str, str], ...] = (),
              builtin: bool = False
              ) -> tuple[list[Condition], list[tuple[str, str]], list[tuple[str, str, str]]]:
    """The conditions, contrasts and recovered shares a file defines, checked; `known` and `known_contrasts` are
    those defined before it (the built-ins)."""
    data = read_toml(path)
    for key in data:
        if key not in TOP_KEYS:
            raise UserError(f"{path}: unknown key {shown(key)}; a condition file holds 'contrasts', 'recovered' and "
                            "[conditions.NAME] tables (docs/CONDITIONS.md)")
    tables = data.get("conditions", {})
    if not isinstance(tables, dict):
        raise UserError(f"{path}: 'conditions' is {shown(tables)}, expected [conditions.NAME] tables")
    if not tables and not data.get("contrasts") and not data.get("recovered"):
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
        _check_turns(path, condition, defined)
    for condition in conditions:
        _check_control(path, condition, defined)
    for condition in conditions:
        for key in ("same_prefix_as", "same_suffix_as"):
            other = getattr(condition, key)
            if other is not None and (other not in defined or other == condition.name):
                raise UserError(f"{path}: conditions.{condition.name}.{key} is {shown(other)}, expected another "
                                f"defined condition ({', '.join(n for n in defined if n != condition.name)})")
            if other is not None and defined[other].later:
                raise UserError(f"{path}: conditions.{condition.name}.{key} is {other!r}, a later-turn condition, "
                                "whose message holds no paste; expected a condition sent as one message")
        if condition.same_suffix_as is not None and defined[condition.same_suffix_as].pool != condition.pool:
            raise UserError(f"{path}: conditions.{condition.name}.same_suffix_as is {shown(condition.same_suffix_as)}, "
                            f"whose comment is {defined[condition.same_suffix_as].pool}, not {condition.pool}: "
                            "expected a condition with the same pool")
    return (conditions, _contrasts(path, data.get("contrasts", []), defined, known_contrasts),
            _recovered(path, data.get("recovered", []), defined))


def read_toml(path: Path) -> dict:
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
    pools = POOLS
    expected_pool = '"casual" or "native" (which comment trails the paste), or "none" (a control, without one)'
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
    later = _later(at, table)
    if later["turns"]:
        for key in ("sentence", "open", "close", "same_prefix_as", "same_suffix_as"):
            if table.get(key) is not None:
                raise UserError(f"{at}.{key}: a later-turn condition's last message is a follow-up instruction "
                                "and the comment, with no paste in it, so it has no sentence, marker lines or "
                                "declared byte-identity")
    control = table.get("control")
    if control is not None and pool == "none":
        raise UserError(f"{at}.control: a condition without a comment is a control itself; only a treatment names "
                        "the condition it is scored against")
    if control is not None and not isinstance(control, str):
        raise UserError(f"{at}.control is {shown(control)}, expected the name of a condition without a comment "
                        "(the one this treatment is scored against)")
    if pool != "none" and control is None:
        control = "clean"
    return Condition(name=name, pool=pool, breaks=breaks, sentence=texts["sentence"], open=texts["open"],
                     close=texts["close"], phrase=texts["phrase"] or f"the {name} condition", plural=plural,
                     **same, origin=str(path), builtin=builtin, marking=marking,
                     system=_text(at, "system", table.get("system"), lines=True, limit=MAX_SYSTEM), **later,
                     control=control)


def _later(at: str, table: dict) -> dict:
    """The later-turn keys (`turns`, `reply`, `reply_text`, `follow_up`), each checked on its own; how the turns
    name other conditions is `_check_turns`'."""
    turns = table.get("turns")
    if turns is None:
        for key in ("reply", "reply_text", "follow_up"):
            if key in table:
                raise UserError(f"{at}.{key}: only a later-turn condition has one; add turns = [\"clean\", "
                                f"\"{REPLY}\", \"{FOLLOW_UP}\"] or remove it")
        return {"turns": (), "reply": None, "reply_text": None, "follow_up": ()}
    shape = f'["CONDITION", "{REPLY}", "{FOLLOW_UP}"], e.g. ["clean", "{REPLY}", "{FOLLOW_UP}"]'
    if not isinstance(turns, list) or not all(isinstance(part, str) for part in turns):
        raise UserError(f"{at}.turns is {shown(turns)}, expected a list of three parts, {shape}")
    for index, part in enumerate(turns):
        if index == 1 and part != REPLY or index == 2 and part != FOLLOW_UP or index == 0 and part in (
                REPLY, FOLLOW_UP):
            expected = ("a condition's name (its message opens the conversation)" if index == 0 else
                        f'"{REPLY}" (the assistant\'s turn)' if index == 1 else
                        f'"{FOLLOW_UP}" (the last user message, which the comment trails)')
            raise UserError(f"{at}.turns[{index}] is {shown(part)}, expected {expected}: turns are {shape}")
    if len(turns) != 3:
        raise UserError(f"{at}.turns has {len(turns)} parts, expected three, {shape} (one earlier exchange: the "
                        "model's own reply exists only to a request sent on its own)")
    reply = table.get("reply", "model")
    if reply not in REPLIES:
        raise UserError(f"{at}.reply is {shown(reply)}, expected \"model\" (the model's own reply to "
                        f"{turns[0]}, read from its trace: --replies TRACE) or \"fixed\" (reply_text)")
    reply_text = _text(at, "reply_text", table.get("reply_text"), lines=True, limit=MAX_REPLY_TEXT)
    if (reply == "fixed") != (reply_text is not None):
        raise UserError(f"{at}.reply_text: " + ("missing; reply = \"fixed\" sends it as the assistant's turn"
                                                 if reply == "fixed" else
                                                 "only reply = \"fixed\" sends one; remove it or set that"))
    follow_up = table.get("follow_up")
    if not isinstance(follow_up, list) or not 1 <= len(follow_up) <= MAX_FOLLOW_UPS:
        raise UserError(f"{at}.follow_up is {shown(follow_up)}, expected a list of 1 to {MAX_FOLLOW_UPS} follow-up "
                        "instructions (each cluster's last message is one of them, picked by its id)")
    return {"turns": tuple(turns), "reply": reply, "reply_text": reply_text,
            "follow_up": tuple(_follow_up(at, i, text) for i, text in enumerate(follow_up))}


def _follow_up(at: str, index: int, value) -> str:
    text = _text(at, f"follow_up[{index}]", value)
    assert text is not None  # a TOML list holds no null
    return text


def _check_turns(path: Path, condition: Condition, defined: dict[str, Condition]) -> None:
    """A later-turn condition's opening condition exists and is a message sent on its own, without a system
    prompt: the model's reply to it, read from its trace, must be the reply it gave with nothing else sent."""
    if not condition.later:
        return
    at = f"{path}: conditions.{condition.name}.turns[0]"
    name = condition.opening
    opening = defined.get(name)
    if opening is None or name == condition.name:
        raise UserError(f"{at} is {shown(name)}, expected another defined condition "
                        f"({listed([n for n in defined if n != condition.name])}), whose message opens the "
                        "conversation")
    if opening.later or opening.system is not None:
        raise UserError(f"{at} is {name!r}, which is sent " + ("as a later turn" if opening.later else
                                                               "with a system prompt")
                        + ": expected a condition sent as one message and nothing else, whose reply the trace holds")
    if condition.needs_replies and name != "clean":
        raise UserError(f"{at} is {name!r}: a later turn holding the model's own reply (reply = \"model\") opens "
                        "with clean, whose replies every model's built-in trace holds (the scorer reads them there, "
                        "--clean-traces); use reply = \"fixed\" to open with another condition")
    if condition.needs_replies and condition.system is not None:
        raise UserError(f"{path}: conditions.{condition.name}.system: a later turn holding the model's own reply "
                        f"(reply = \"model\") has no system prompt: the model gave that reply to {name}'s message "
                        "alone, with none; use reply = \"fixed\" to try a system prompt over a fixed reply")


def _check_control(path: Path, condition: Condition, defined: dict[str, Condition]) -> None:
    """A treatment's control exists, has no comment, and is the same request but for the comment: the same
    conversation for a later-turn treatment, one message for any other."""
    if condition.control is None:
        return
    at = f"{path}: conditions.{condition.name}.control"
    seen = [condition.name]
    current = condition
    while current.control is not None and current.control in defined and current.control not in seen:
        seen.append(current.control)
        current = defined[current.control]
    if current.control is not None and current.control in seen:
        raise UserError(f"{at}: a cycle of controls ({' → '.join([*seen, current.control])}); a control is a "
                        "condition without a comment")
    control = defined.get(condition.control)
    if control is None:
        raise UserError(f"{at} is {shown(condition.control)}, which is not defined here or built in; expected a "
                        "condition without a comment: "
                        f"{listed([n for n, c in defined.items() if c.pool == 'none'])}")
    if control.pool != "none":
        raise UserError(f"{at} is {control.name!r}, a treatment (its pool is {control.pool}); expected a condition "
                        f"without a comment: {listed([n for n, c in defined.items() if c.pool == 'none'])}")
    same = (control.turns, control.reply, control.reply_text, control.follow_up, control.system)
    if condition.later and same != (condition.turns, condition.reply, condition.reply_text, condition.follow_up,
                                    condition.system):
        raise UserError(f"{at} is {control.name!r}, expected the same conversation without the comment: a control "
                        "with the same turns, reply, reply_text, follow_up and system")
    if not condition.later and control.later:
        raise UserError(f"{at} is {control.name!r}, a later-turn condition; expected a condition sent as one "
                        "message, as this one is")


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


def _text(at: str, key: str, value, *, lines: bool = False, limit: int = MAX_TEXT) -> str | None:
    """An optional text key, no white space at either end: one line (a marker line, the added sentence, the
    phrase, a follow-up), or with `lines` lines of text (a system prompt, a fixed reply). No other control
    character (NUL, an escape; a tab in one line): each goes into every message, a CSV cell or the page as it is."""
    if value is None:
        return None
    allowed = "\n\t" if lines else ""
    expected = (("text without white space at either end nor control characters but line breaks and tabs"
                 if lines else "one line of text without white space at either end nor control characters")
                + f", at most {limit:,} characters")
    if (not isinstance(value, str) or not value or value != value.strip() or len(value) > limit
            or any(unicodedata.category(c) in ("Cc", "Zl", "Zp") and c not in allowed for c in value)):
        raise UserError(f"{at}.{key} is {shown(value)}, expected {expected}")
    return value


def _contrasts(path: Path, value, defined: dict[str, Condition], known_contrasts: tuple[tuple[str, str], ...]
               ) -> list[tuple[str, str]]:
    expected = 'a list of "FIRST vs SECOND" strings, e.g. ["newline vs xml-tags"]'
    if not isinstance(value, list):
        raise UserError(f"{path}: contrasts is {shown(value)}, expected {expected}")
    known = set(known_contrasts)
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


def _recovered(path: Path, value, defined: dict[str, Condition]) -> list[tuple[str, str, str]]:
    """The `recovered` shares: "CANDIDATE of BASE vs ORACLE", the share of the reduction from BASE to ORACLE that
    CANDIDATE recovers (stats/recovered.py), as (candidate, base, oracle)."""
    expected = ('a list of "CANDIDATE of BASE vs ORACLE" strings, e.g. ["guarded of newline vs boundary"], '
                f"at most {MAX_RECOVERED}")
    if not isinstance(value, list) or len(value) > MAX_RECOVERED:
        raise UserError(f"{path}: recovered is {shown(value)}, expected {expected}")
    found: list[tuple[str, str, str]] = []
    for index, item in enumerate(value):
        at = f"{path}: recovered[{index}]"
        words = item.split() if isinstance(item, str) else []
        if len(words) != 5 or words[1] != "of" or words[3] != "vs":
            raise UserError(f"{at} is {shown(item)}, expected {expected}")
        names = (words[0], words[2], words[4])
        for name in names:
            if name not in defined:
                raise UserError(f"{at} is {shown(item)}: {name!r} is not defined here or built in")
            if defined[name].pool == "none":
                raise UserError(f"{at} is {shown(item)}: {name!r} has no comment, so no absorption to compare")
        if len(set(names)) != 3:
            raise UserError(f"{at} is {shown(item)}: expected three different conditions")
        if names in found:
            raise UserError(f"{at} is {shown(item)}: listed twice")
        found.append(names)
    return found
