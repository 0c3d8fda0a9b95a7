"""The screen's rules for lines and blocks, one small pure function each: words, fences, what a code line is,
what a pasted block is, what an instruction is.

The screen (common/seams/segment.py) cuts a user message into a lead (the
instruction), an artifact (the pasted block) and a tail (what follows it). These
rules tell the lead and the artifact; `common.seams.remarks` tells the tail (with
`common.seams.layout` for how lines break and `common.seams.letters` for how letters
end). They look at text only, never at a model. docs/OCCURRENCE.md lists every
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


def starts_lowercase(tail: str) -> bool:
    """The tail starts with a lower-case letter, as typed chat does and edited prose does not.

    >>> starts_lowercase("  make it short"), starts_lowercase("Make it short"), starts_lowercase("42 words")
    (True, False, False)
    """
    first = tail.strip()[:1]
    return first.isalpha() and first.islower()


# ---------------------------------------------------------------------------------------------- fences

FENCE = re.compile(r" {0,3}(```|~~~)")


def is_fence(line: str) -> bool:
    """A Markdown code fence line (``` or ~~~, at most three spaces in), opening or closing a block.

    >>> is_fence("```python"), is_fence("   ~~~"), is_fence("    ```"), is_fence("use ``` here")
    (True, True, False, False)
    """
    return FENCE.match(line) is not None


# ---------------------------------------------------------------------------------------------- code lines

# The keywords that open a line of code. Words that open plain sentences as well ("let me know", "use simpler
# words", "export it as PDF", "except the intro", "for my class :)", "pub quiz") count only in a code shape.
# Written so that no line makes it backtrack more than linearly (`\S.*X` for `\S+.*X`, possessive runs before
# what they cannot match: the same lines match; "exit" and 400 spaces took 43 s).
CODE_START = re.compile(
    r"(?:def |import [\w.]+(?:\s*,\s*[\w.]+)*(?:\s+as\s+\w+)?\s*;?$|from \S+ import |"
    r"class \w+(?:\s*[(:{<]|\s+extends\b|\s+implements\b|$)|"
    r"return(?:\s*;?$|\s+\S+\s*;?$|\s++.*[()\[\]{}=+\-*/<>.,\"'])|elif\b|else\s*[:{]|else$|try\s*[:{]|"
    r"except(?:\s+[\w.]+(?:\s+as\s+\w+)?)?\s*:|finally\s*[:{]|"
    r"raise |yield\b|lambda\b|async (?:def|function|fn|\(|\w+\s*=>)|await |with \S.*:$|for \S.*(?::|\{)$|"
    r"for\s*\(|while\b.*(?::|\{)$|while\s*\(|if\s*\(|if \S.*(?::|\{)$|switch\s*\(|case .*:$|"
    r"function\b|const [\w${\[]|let (?:mut )?[\w{\[]+\s*[:=;]|var [\w$]+\s*[=;:,]|"
    r"export (?:default|const|function|class|type|interface|let|var|async|\{|\*)|module\.exports|require\(|"
    r"console\.|document\.|window\.|"
    r"(?:public|private|protected|static|void|int|float|double|bool|boolean|char|string|String|struct|enum|"
    r"interface|impl|namespace) \S.*[(;={<]|"
    r"package [\w.]+\s*;?$|using [\w.]+\s*;|using namespace |using\s*\(|template\s*<|"
    r"fn \w+\s*[(<]|pub (?:fn|struct|enum|mod|use|trait|const|static|type|impl|crate)\b|"
    r"mod \w+\s*[;{]|use [\w:]+(?:::\{[^}]*\})?\s*;|"
    r"#include|#define|#import|#pragma|#if|#endif|#!/|@[\w.]+(?:\(.*\))?$|"
    r"SELECT |INSERT |UPDATE |DELETE |CREATE |ALTER |DROP |FROM |WHERE |JOIN |GROUP BY |ORDER BY |"
    r"echo (?:[\"'$-]|\S+\s*[|>;&]|\S+$)|exit(?:\s*+\(?+\s*+-?+\d*+\s*+\)?+\s*+;?+)$|print\(|printf\(|println|"
    r"System\.out|std::|cout\s*<<|cin\s*>>|\$ |>>> |"
    r"npm (?:install|i|run|start|test|ci|init|publish|uninstall|update|audit|fund|WARN|ERR!)\b|"
    r"pip3? (?:install|uninstall|freeze|list|show|download)\b|"
    r"sudo (?:-\S+ )*(?:apt|apt-get|yum|dnf|pacman|systemctl|service|docker|pip3?|npm|chmod|chown|mkdir|rm|"
    r"cp|mv|ln|nano|vim?|kill|mount|ufw|snap|brew|make install)\b|cd \S+$|"
    r"git (?:clone|commit|push|pull|checkout|switch|add|status|log|diff|merge|rebase|reset|stash|branch|fetch|"
    r"init|remote|tag|show|config)\b|"
    r"//|/\*|\*/|<!--|-->)")
# Labels a user puts before their own words ("Note: …", "Tone: formal"): a line opening so is no YAML key or
# speaker's name, whatever follows the colon.
USER_LABELS = frozenset({"note", "notes", "ps", "p.s.", "p.s", "edit", "update", "question", "request", "task",
                         "instruction", "instructions", "context", "btw", "fyi", "also", "important", "reminder",
                         "tone", "audience", "goal", "goals", "deadline", "length", "style", "format", "language",
                         "purpose", "target", "level", "word count", "words", "constraint", "constraints"})
CODE_END = ("{", "}", ";", "):", "=>", "->", "[", "(", "\\", "*/", "-->", "{}", "[]", "()", "};", "],", "},")
CODE_ONLY = frozenset({"end", "fi", "done", "esac", "endif", "begin", "then", "do", "else", "pass", "break",
                       "continue", "return", "end;", "end if", "end function", "end sub", "}", "]", ")", "});",
                       "})", "]);", ");", "...", "</div>"})


TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>?")
CALL = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\(.*\)\s*;?")
# A `camelCase: value` or `key: "value"` line. The camelCase name is one run of letters, digits and
# underscores after its first capital or underscore: written as a repeated group, `(?:[A-Z_][A-Za-z0-9_]*)+`,
# the same names took exponential time on a line such as "atgCGTACGTACGT…" (a DNA sequence) with no colon.
KEY_VALUE = re.compile(r"[a-z]+[A-Z_][A-Za-z0-9_]*:\s+\S|\"?[\w.-]+\"?:\s*(?:['\"\[{\d]|true\b|false\b|null\b)")
ASSIGNMENT = re.compile(r"[A-Za-z_$][\w$.\[\]'\"]*\s*(?:[-+*/%|&^]|\?\?|//|\*\*)?=(?!=)\s*\S")
PINNED = re.compile(r"[\w.\[\]-]+\s*(?:==|>=|<=|~=|!=)\s*[\w.*]+(?:\s*,\s*(?:==|>=|<=|~=|!=|<|>)\s*[\w.*]+)*")
FORMULA = re.compile(r"=\s*[A-Z][A-Z0-9.]*\(")  # a spreadsheet formula: =VLOOKUP(A2, …)
DELIMITED = re.compile(r"[^\s,;\t]+(?:[,;\t][^\s,;\t]*){2,}")  # a row of CSV or TSV data, no spaces: a,b,c
YAML_KEY = re.compile(r"(?:- )?[\w.-]+:(?:[ \t]+\S+)?")  # "kind: Deployment", "metadata:", "- name: api"
FLAG = re.compile(r"(?<!\S)--?[A-Za-z][\w-]*")  # a command-line option: -v, --name
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
    `key: "value"` line (YAML, JSON), a command with two options or more (`-v`, `--name`), a row of CSV
    data, a spreadsheet formula, a pinned requirement (`numpy==1.26.4`), a closing keyword, or is dense with
    symbols (more than 15 % of its visible characters, and three at least: a pair of brackets in a remark is
    not code).

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
    if CALL.fullmatch(text) or (KEY_VALUE.match(text) and text.split(":", 1)[0].strip().lower() not in USER_LABELS):
        return True
    if sum(1 for _ in itertools.islice(FLAG.finditer(text), 2)) >= 2:  # a shell command with its options
        return True
    if DELIMITED.fullmatch(text) or FORMULA.match(text) or PINNED.fullmatch(text):
        return True
    return symbol_share(text) > 0.15 and len(SYMBOL.findall(text)) >= 3


def is_block_line(line: str) -> bool:
    """A line that makes a pasted block code: a code line, a line of program output (`is_output_line`), or a
    YAML key ("kind: Deployment", "metadata:"), which counts inside a block though a remark may have that
    shape ("fyi: urgent"); a tail with an output line is refused by its own rule (`is_output`).

    >>> is_block_line("metadata:"), is_block_line("kind: Deployment"), is_block_line("Some words here.")
    (True, True, False)
    """
    return is_code_line(line) or YAML_KEY.fullmatch(line.strip()) is not None or is_output_line(line)


def code_share(lines: list[str]) -> float:
    """The share of the non-blank lines that are block lines (`is_block_line`; 0 when there are none).

    >>> code_share(["def f():", "    return 1", "", "It returns one."])
    0.6666666666666666
    """
    visible = [line for line in lines if not is_blank(line)]
    return sum(is_block_line(line) for line in visible) / len(visible) if visible else 0.0


def mostly_code(lines: list[str], counts=None) -> bool:
    """Whether half or more of the non-blank lines are block lines (`code_share` >= 0.5), deciding as soon as
    the rest cannot change the outcome: a long paste is not read to its end to be told from prose. `counts`
    is the test of a line (default `is_block_line`).

    >>> mostly_code(["x = 1", "y = 2", "Some words."]), mostly_code(["Hello.", "x = 1", "Bye."]), mostly_code([])
    (True, False, False)
    """
    visible = [line for line in lines if not is_blank(line)]
    need = math.ceil(len(visible) * MIN_CODE_SHARE)  # code lines for a share of at least MIN_CODE_SHARE
    if not visible:
        return False
    code = prose = 0
    for line in visible:
        if (counts or is_block_line)(line):
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


# ---------------------------------------------------------------------------------------------- output

OUTPUT_LINE = re.compile(r"\s*(?:Traceback \(most recent call last\)|File \"|at [\w$.<>]+\(|"
                         r"\[?\d{4}-\d\d-\d\d[ T]\d|"
                         r"\[(?:INFO|WARN|WARNING|ERROR|DEBUG)\]|(?:INFO|WARN|ERROR|DEBUG)\s*[:\[]|"
                         r"Process finished|Process exited|Exit code|exited with code|Press any key|"
                         r"[(\[]?\d{1,2}:\d\d(?::\d\d)?(?:[.,]\d+)?[)\]]?\s)")
# An exception's name opening a line ("ValueError: …", "java.lang.NullPointerException: …"): the dotted
# name before the first colon, then the name checked on its own (one regex for both retried the name's end
# at every "Error" of a long dotted token: quadratic).
ERROR_NAME = re.compile(r"\s*([\w.]+):")
ERROR_WORD = re.compile(r"(?:Error|Exception|Warning)\b")


def is_output_line(line: str) -> bool:
    """A line of program output, a log or a transcript: a traceback's lines, an exception's name and a colon,
    a line opening with a date or a time stamp ("2024-01-02 10:00", "(05:49)", "[09:35]").

    >>> is_output_line("  at com.acme.App.main(App.java:27)"), is_output_line("[09:35] Marta: ok")
    (True, True)
    >>> is_output_line("it throws an error at startup")
    False
    """
    return OUTPUT_LINE.match(line) is not None or _error_name(line)


def _error_name(line: str) -> bool:
    """The line opens with an exception's name and a colon ("TypeError: …", "a.b.FooException: …")."""
    match = ERROR_NAME.match(line)
    return match is not None and ERROR_WORD.search(match.group(1)) is not None


# ---------------------------------------------------------------------------------------------- artifacts

MIN_CODE_LINES = 2  # a pasted code block: at least this many non-blank lines …
MIN_CODE_SHARE = 0.5  # … at least this share of them code lines
MIN_ONE_LINE_CODE = 30  # … or one code line this long at least (a shell pipeline, a query)
MIN_PROSE_WORDS = 10  # a pasted prose block: at least this many words (a sentence or two)


def artifact_kind(lines: list[str]) -> str | None:
    """What a block pasted between the lead and the tail is: "code" (at least 2 non-blank lines, half of
    them or more code lines, or one code line of 30 characters or more), "prose" (at least 10 words, mostly
    not code), or None (neither: too short to be a paste).

    >>> artifact_kind(["def f(x):", "    return x"]), artifact_kind(["word " * 10]), artifact_kind(["a short one"])
    ('code', 'prose', None)
    """
    visible = [line for line in lines if not is_blank(line)]
    if len(visible) >= MIN_CODE_LINES and mostly_code(visible):
        return "code"
    if len(visible) == 1 and len(visible[0].strip()) >= MIN_ONE_LINE_CODE and is_code_line(visible[0]):
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
    return not mostly_code(lead.split("\n"), is_code_line)


def ends_with_colon(lead: str) -> bool:
    """The lead announces what follows ("… this text:"), the clearest sign of an instruction before a paste.

    >>> ends_with_colon("Fix this code: "), ends_with_colon("翻译："), ends_with_colon("Fix this code.")
    (True, True, False)
    """
    return lead.rstrip().endswith((":", "："))
