"""What a condition sends besides its message, and what its cases are compared with, for the page.

A condition file's condition may send a system prompt, or be a later turn of a
conversation (the opening condition's message, the assistant's reply, then its
message), and a treatment is scored against its control: clean, or a control of
the file's own (docs/CONDITIONS.md). The page must show a reader all of it:
each case's system prompt and earlier turns next to its message, and which
control's output it stands beside. Pages of conditions that send one message
and are scored against clean, every released page among them, stay byte for
byte as they were: nothing here adds to them (`setups` is empty, the script is
not inserted, the list of conditions is left out).

`setups` is the index's "setups" entry (report/cases.py); `conditions_list`
the HTML list under the rates (escaped like every text of the page); and
`with_script` the page's script with page_setups.js inserted, which wraps the
case panes of page.js to show the system prompt, the earlier turns and the
control's output by its name.
"""

from __future__ import annotations

import html
from pathlib import Path

from benchmark.conditions import Condition, ConditionSet

HERE = Path(__file__).resolve().parent
# page_setups.js goes in before the gallery fills its specimens (page.js draws them as it runs).
ANCHOR = "  // ---------------------------------------------------------------- gallery\n"


def described(condition: Condition) -> bool:
    """Whether a condition sends more than its message or is scored against another control than clean."""
    return condition.system is not None or condition.later or condition.control not in (None, "clean")


def setups(conditions: ConditionSet) -> dict[str, dict]:
    """The conditions the page must say more of, by name: the control ("control", None for a control), the
    system prompt ("system"), and for a later turn the opening condition and its reply ("opening", "reply",
    "reply_text" for a fixed one). {} when every condition is one message scored against clean.

    >>> from benchmark.conditions import builtin
    >>> setups(builtin())
    {}
    """
    out = {}
    for condition in conditions.conditions:
        if not described(condition):
            continue
        entry: dict = {"control": condition.control}
        if condition.system is not None:
            entry["system"] = condition.system
        if condition.later:
            entry.update(opening=condition.opening, reply=condition.reply)
            if condition.reply_text is not None:
                entry["reply_text"] = condition.reply_text
        out[condition.name] = entry
    return out


def conditions_list(conditions: ConditionSet, shown: set[str]) -> str:
    """The HTML list saying, for each condition of `shown` (and each control they are scored against) that
    `described` holds, what it sends and what it is compared with; "" when none is."""
    names = [name for name in conditions.names if name in shown]
    names += [control for control in dict.fromkeys(conditions.get(name).control for name in names)
              if control is not None and control not in names]
    items = [_item(conditions.get(name), conditions) for name in conditions.order(names)
             if described(conditions.get(name))]
    if not items:
        return ""
    return ('<p>What these conditions send besides the message, and the output each case is compared with:</p>\n'
            '<ul id="condition-setups">\n' + "\n".join(items) + "\n</ul>")


def _item(condition: Condition, conditions: ConditionSet) -> str:
    parts = []
    if condition.later:
        opening = conditions.get(condition.opening).name
        reply = (f"the model's own reply to it (its {opening} output)" if condition.reply == "model" else
                 f"a fixed reply (“{condition.reply_text}”)")
        parts.append(f"a later turn: the {opening} message, {reply}, then this message")
    if condition.system is not None:
        parts.append(f"sent with the system prompt “{condition.system}”")
    if condition.control is None:
        parts.append("a control, without a remark: its outputs are what treatments are compared with, never "
                     "labelled")
    else:
        parts.append(f"scored against {condition.control}")
    return f"<li><strong>{_e(condition.name)}</strong>: {_e('; '.join(parts))}</li>"


def with_script(script: str) -> str:
    """page.js with page_setups.js inserted where the gallery starts, so that every case drawn shows them."""
    if ANCHOR not in script:
        raise AssertionError("report/page.js: the gallery's heading comment, where page_setups.js goes, is gone")
    extra = (HERE / "page_setups.js").read_text(encoding="utf-8")
    return script.replace(ANCHOR, extra + ANCHOR, 1)


def _e(text: str) -> str:
    return html.escape(text, quote=True)
