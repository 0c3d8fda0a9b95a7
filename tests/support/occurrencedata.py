"""Test support: small chat-log corpora made up for the occurrence tests, in every shape the screen reads.

Every message is written here for the purpose (no real chat log). Each carries
a planted marker, a run of characters that occurs nowhere else (PLANT-<n>-…),
so that a test can search every file the pipeline writes for any piece of any
message. `POSITIVES` have the seam's shape (instruction, paste, remark after
it); `NEGATIVES` do not.
"""

from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path

CODE = ("def mean(values):\n"
        "    \"\"\"Return the arithmetic mean of a list of numbers.\"\"\"\n"
        "    total = 0\n"
        "    for value in values:\n"
        "        total += value\n"
        "    return total / len(values)\n")
PROSE = ("The committee met on Tuesday to review the budget for the coming year. After a long discussion "
         "about the costs of the new library wing, the members agreed to postpone the decision until the "
         "architects deliver a revised estimate, which is expected early next month.")

POSITIVES = [
    # instruction, blank line, code, blank line, remark
    f"Add type hints to this function:\n\n{CODE}\nbtw this is for my intro class PLANT-1-zebra-quartz",
    # instruction, prose paste, a single line break, remark
    f"Make this paragraph more concise:\n{PROSE}\nplease keep it under fifty words PLANT-2-mango-violet",
    # fenced code, then a question
    f"Why does this fail?\n\n```python\n{CODE}```\n\nit crashes on an empty list, can you fix it? PLANT-3-kiwi-amber",
    # prose paste after a blank line, remark after a blank line
    f"Translate to French.\n\n{PROSE}\n\nthanks, this goes out on friday PLANT-4-lemon-cobalt",
]
NEGATIVES = [
    "What is the capital of France? PLANT-5-peach-indigo",
    f"Here is my code:\n\n{CODE}result = mean([1, 2, 3])  # PLANT-6-plum\n",  # ends with the paste itself
    f"Summarise this.\n\n{PROSE}\n\nThe meeting closed at noon, PLANT-7-fig-scarlet, after the vote was taken.",
    f"Fix this:\n```\n{CODE}\nunclosed fence PLANT-8-lime-ochre",
]
PLANTS = [f"PLANT-{n}" for n in range(1, 9)]


def conversations(repeat_first: bool = True) -> list[tuple[str, list[tuple[str, str]]]]:
    """(id, [(role, text), …]) for each conversation: every message once, the first positive once more
    (a repeated message, as real corpora have), with assistant turns between."""
    chats = []
    for number, text in enumerate(POSITIVES + NEGATIVES):
        chats.append((f"conv-{number}", [("user", text), ("assistant", f"reply {number}")]))
    if repeat_first:
        chats.append(("conv-repeat", [("user", "hello"), ("assistant", "hi"), ("user", POSITIVES[0])]))
    return chats


def sharegpt_rows(chats) -> list[dict]:
    roles = {"user": "human", "assistant": "gpt"}
    return [{"id": cid, "conversations": [{"from": roles[role], "value": text} for role, text in turns]}
            for cid, turns in chats]


def wildchat_rows(chats) -> list[dict]:
    return [{"conversation_hash": cid, "model": "gpt-4", "turn": len(turns) // 2, "language": "English",
             "conversation": [{"role": role, "content": text, "language": "English", "toxic": False}
                              for role, text in turns]} for cid, turns in chats]


def lmsys_rows(chats) -> list[dict]:
    return [{"conversation_id": cid, "model": "vicuna-13b", "turn": len(turns) // 2, "language": "English",
             "conversation": [{"role": role, "content": text} for role, text in turns], "redacted": False}
            for cid, turns in chats]


def jsonl_rows(chats) -> list[dict]:
    return [{"id": cid, "messages": [{"role": role, "content": text} for role, text in turns]}
            for cid, turns in chats]


ROWS = {"sharegpt": sharegpt_rows, "wildchat": wildchat_rows, "lmsys": lmsys_rows, "jsonl": jsonl_rows}


def array_text(rows) -> str:
    """An indented JSON array, as ShareGPT's file is (ASCII, escapes for the rest)."""
    return json.dumps(rows, indent=2)


def lines_text(rows) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def write_corpus(path: Path, fmt: str, *, container: str = "auto", chats=None) -> Path:
    """A corpus file of `fmt` rows: a JSON array for sharegpt, JSON Lines for the others (or as `container`
    says: "array" or "lines"); gzip-compressed when the name ends in .gz, a wheel member when in .whl."""
    rows = ROWS[fmt](chats if chats is not None else conversations())
    array = container == "array" or (container == "auto" and fmt == "sharegpt")
    text = array_text(rows) if array else lines_text(rows)
    data = text.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data, mtime=0))
    elif path.suffix == ".whl":
        with zipfile.ZipFile(path, "w") as wheel:
            wheel.writestr("pkg/__init__.py", "")
            wheel.writestr("pkg/data/corpus.json" if array else "pkg/data/corpus.jsonl", data)
    else:
        path.write_bytes(data)
    return path


def all_output_text(folder: Path) -> str:
    """Every file under `folder`, as text, for planted-marker searches."""
    return "\n".join(path.read_bytes().decode("utf-8", "replace") for path in sorted(folder.rglob("*"))
                     if path.is_file())
