"""Write tables as CSV, Markdown and LaTeX (booktabs), byte for byte the same every time.

CSV carries the raw numbers at fixed precision (6 decimals; p-values with 6
significant digits) for further analysis; Markdown and LaTeX carry the rounded,
paper-style view (percentages with one decimal, p-values with three), which
may be a reshaped `display` table (e.g. models x conditions). Empty cells mean
"not computed" (no usable pairs, a missing condition); the notes say why.
Every command writes its tables with `write_tables`, the one writer: every file
or, on a full disk, none. `stats.schema` reads them back.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import UserError
from common.files import write_files

KINDS = ("text", "int", "proportion", "pvalue", "flag", "float")
MISSING = "\u2014"  # em dash in the display formats


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    kind: str = "text"
    align: str = ""  # "l" or "r"; by default numbers right, text left

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind: expected one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.align not in ("", "l", "r"):
            raise ValueError(f"align: expected 'l', 'r' or '' (by kind), got {self.align!r}")

    @property
    def right_aligned(self) -> bool:
        if self.align:
            return self.align == "r"
        return self.kind in ("int", "proportion", "pvalue", "float")


@dataclass(frozen=True)
class Table:
    name: str  # file stem
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple, ...]
    notes: tuple[str, ...] = ()
    display: Table | None = field(default=None)  # what Markdown and LaTeX show, if not this table

    def __post_init__(self):
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"table {self.name}: row {row!r} does not match "
                                 f"its {len(self.columns)} columns")


def _absent(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def csv_cell(value, kind: str) -> str:
    """A value as a CSV cell: raw numbers at fixed precision, empty when absent.

    >>> csv_cell(0.25, "proportion"), csv_cell(0.0123456789, "pvalue"), csv_cell(None, "int")
    ('0.250000', '0.0123457', '')
    """
    if _absent(value):
        return ""
    if kind == "flag":
        return "true" if value else "false"
    if kind == "int":
        return str(int(value))
    if kind in ("proportion", "float"):
        return f"{value:.6f}"
    if kind == "pvalue":
        return f"{value:.6g}"
    return spreadsheet_safe(str(value))


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a cell as a formula


def spreadsheet_safe(text: str) -> str:
    r"""A text cell a spreadsheet will show as text: one that starts like a formula (=, +, -, @, a tab or a
    carriage return) gets a leading apostrophe, as spreadsheet guidance (OWASP's on CSV injection)
    recommends; numbers are written by their own kinds and never pass here.

    >>> print(spreadsheet_safe('=HYPERLINK("http://x")'), spreadsheet_safe("qwen2.5-coder"))
    '=HYPERLINK("http://x") qwen2.5-coder
    """
    return "'" + text if text.startswith(FORMULA_START) else text


def display_cell(value, kind: str) -> str:
    """A value as shown in Markdown and LaTeX: percentages, rounded p-values, an em dash when absent.

    >>> display_cell(0.25, "proportion"), display_cell(0.0004, "pvalue"), display_cell(True, "flag")
    ('25.0', '<0.001', 'yes')
    """
    if _absent(value):
        return MISSING
    if kind == "flag":
        return "yes" if value else "no"
    if kind == "int":
        return str(int(value))
    if kind == "proportion":
        return f"{100 * value:.1f}"
    if kind == "float":
        return f"{value:.4g}"
    if kind == "pvalue":
        return "<0.001" if value < 0.001 else f"{value:.3f}"
    return str(value)


def percent(value) -> str:
    """A proportion as a percentage with one decimal, or the missing mark.

    >>> percent(0.1234), percent(float("nan"))
    ('12.3', '—')
    """
    return display_cell(value, "proportion")


def interval_text(value: float, low: float, high: float) -> str:
    """A rate or difference as "12.3 [4.5, 20.1]" in percent, or an em dash when it is undefined.

    Used by every table that shows an estimate with its interval (rates, contrasts, the
    validity tables), so every bracketed interval in the report looks the same.

    >>> interval_text(0.3, 0.1078, 0.6032)
    '30.0 [10.8, 60.3]'
    >>> interval_text(float("nan"), float("nan"), float("nan"))
    '—'
    """
    if math.isnan(value):
        return MISSING
    return f"{percent(value)} [{percent(low)}, {percent(high)}]"


def to_csv(table: Table) -> str:
    """The raw table as CSV: a header of column keys, then one line per row.

    >>> print(to_csv(_EXAMPLE), end="")
    model,rate,p
    a,0.250000,0.0004
    b,,
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([c.key for c in table.columns])
    for row in table.rows:
        writer.writerow([csv_cell(v, c.kind) for v, c in zip(row, table.columns, strict=True)])
    return out.getvalue()


TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def md_escape(text: str) -> str:
    r"""Text for a Markdown table cell or list item: a pipe escaped, and the start of an HTML tag ("<script",
    "</p", "<!--") written as &lt; so that no viewer renders markup from a model name, a condition file's
    phrase or a reviewer's note; "p < 0.05" and "<0.001" stay as they are.

    >>> print(md_escape("a|b <script>x</script> p < 0.05"))
    a\|b &lt;script>x&lt;/script> p < 0.05
    """
    return TAG_START.sub("&lt;", text.replace("|", "\\|"))


def to_markdown(table: Table) -> str:
    """The display view as a Markdown table under a heading, with the notes as a list below it.

    >>> print(to_markdown(_EXAMPLE), end="")
    ### Example
    <BLANKLINE>
    | Model | Rate | p |
    |:---|---:|---:|
    | a | 25.0 | <0.001 |
    | b | — | — |
    <BLANKLINE>
    - A note.
    """
    view = table.display or table
    lines = [f"### {table.title}", ""]
    lines.append("| " + " | ".join(md_escape(c.header) for c in view.columns) + " |")
    lines.append("|" + "|".join("---:" if c.right_aligned else ":---" for c in view.columns) + "|")
    for row in view.rows:
        cells = [md_escape(display_cell(v, c.kind)) for v, c in zip(row, view.columns, strict=True)]
        lines.append("| " + " | ".join(cells) + " |")
    notes = table.notes + (view.notes if view is not table else ())
    if notes:
        lines.append("")
        lines.extend(f"- {md_escape(note)}" for note in notes)
    return "\n".join(lines) + "\n"


_LATEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"$<$", ">": r"$>$", "\u2014": "---", "\u2013": "--", "\u00d7": r"$\times$",
    "\u03c8": r"$\psi$",
}


def latex_escape(text: str) -> str:
    """Text with LaTeX's special characters escaped.

    >>> print(latex_escape("gpt_4 & 50% <0.001"))
    gpt\\_4 \\& 50\\% $<$0.001
    """
    return "".join(_LATEX.get(ch, ch) for ch in text)


def to_latex(table: Table, *, command: str) -> str:
    """The display view as a booktabs `table` float; the first line names `command`, the command that
    made the table, so that a reader of the .tex file knows how to regenerate it.

    >>> print(to_latex(_EXAMPLE, command="python seam.py tables"), end="")
    % example: generated by 'python seam.py tables'; do not edit by hand.
    % Needs \\usepackage{booktabs}.
    \\begin{table}[htbp]
    \\centering
    \\caption{Example}
    \\label{tab:seam-example}
    \\begin{tabular}{lrr}
    \\toprule
    Model & Rate & p \\\\
    \\midrule
    a & 25.0 & $<$0.001 \\\\
    b & --- & --- \\\\
    \\bottomrule
    \\end{tabular}
    \\par\\smallskip
    {\\footnotesize A note.}
    \\end{table}
    """
    view = table.display or table
    spec = "".join("r" if c.right_aligned else "l" for c in view.columns)
    lines = [
        f"% {table.name}: generated by '{command}'; do not edit by hand.",
        "% Needs \\usepackage{booktabs}.",
        "\\begin{table}[htbp]",
        "\\centering",
        f"\\caption{{{latex_escape(table.title)}}}",
        f"\\label{{tab:seam-{table.name.replace('_', '-')}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(latex_escape(c.header) for c in view.columns) + " \\\\",
        "\\midrule",
    ]
    for row in view.rows:
        cells = [latex_escape(display_cell(v, c.kind)) for v, c in zip(row, view.columns, strict=True)]
        if cells and cells[0].startswith("["):
            cells[0] = "{}" + cells[0]  # else the previous row's \\ would read it as a spacing argument
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    notes = table.notes + (view.notes if view is not table else ())
    if notes:
        lines.append("\\par\\smallskip")
        lines.append("{\\footnotesize " + " ".join(latex_escape(n) for n in notes) + "}")
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


def write_tables(out: str | Path, tables, *, command: str | None, extra: Mapping[str, str] | None = None,
                 what: str, check: Callable[[Path], None] | None = None, replaces: Iterable[str] = ()) -> list[Path]:
    """The one writer of tables: each table as `<name>.csv`, `<name>.md` and, when `command` names the command
    that made them, `<name>.tex`; then the `extra` files (a name in `out` and its text: figures, notes,
    provenance, item files); every file or (a full disk) none, so a failure never leaves some tables new and
    the others old. `check` sees each path before anything is written (compare refuses one inside data/);
    `what` names the files in a failure ("tables"). Returns the paths, in that order.

    `replaces` names the files in `out` that are the command's own (`table_files` of its specs): once the new
    files are in place, those of them this run did not write are removed, so that a folder written twice never
    shows the first run's optional table (a recovered share, a usage table) beside the second run's others, as
    the page reads every table a spec names. Files it does not name (another command's tables in the same
    folder, the user's own) are left alone.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     [path.name for path in write_tables(Path(tmp), [_EXAMPLE], command="python seam.py tables",
    ...                                          extra={"notes.md": "- A note."}, what="tables")]
    ['example.csv', 'example.md', 'example.tex', 'notes.md']
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: exists and is not a directory")
    texts = {}
    for table in tables:
        texts[out / f"{table.name}.csv"] = to_csv(table)
        texts[out / f"{table.name}.md"] = to_markdown(table)
        if command is not None:
            texts[out / f"{table.name}.tex"] = to_latex(table, command=command)
    for name, text in (extra or {}).items():
        texts[out / name] = text
    if check is not None:
        for path in texts:
            check(path)
    write_files({path: text.encode("utf-8") for path, text in texts.items()}, what)
    stale = [out / name for name in dict.fromkeys(replaces) if out / name not in texts and (out / name).is_file()]
    for path in stale:
        try:
            path.unlink()
        except OSError as exc:
            raise UserError(f"could not remove {path}, a table of an earlier run: {exc.strerror or exc}; "
                            f"the {what} are written, remove it by hand") from None
    return list(texts)


def table_files(names: Iterable[str]) -> list[str]:
    """The files `write_tables` writes for the tables named: CSV, Markdown and LaTeX each.

    >>> table_files(["rates"])
    ['rates.csv', 'rates.md', 'rates.tex']
    """
    return [f"{name}.{suffix}" for name in names for suffix in ("csv", "md", "tex")]


def write_report(out: Path, tables, provenance: tuple[str, str], what: str) -> list[Path]:
    """`write_tables` without LaTeX, for the reports that carry none (the human review's, the occurrence
    audit's): each table's CSV and Markdown and the provenance (a file name and its text).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     [path.name for path in write_report(Path(tmp), [_EXAMPLE], ("provenance.json", "{}"), "example files")]
    ['example.csv', 'example.md', 'provenance.json']
    """
    return write_tables(out, tables, command=None, extra=dict([provenance]), what=what)


# The small table the examples above show.
_EXAMPLE = Table("example", "Example", (Column("model", "Model"), Column("rate", "Rate", "proportion"),
                                       Column("p", "p", "pvalue")),
                (("a", 0.25, 0.0004), ("b", None, None)), ("A note.",))
