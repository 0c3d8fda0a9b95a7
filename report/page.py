"""Assemble the one self-contained HTML page: tables and figures as HTML, the cases as JSON for the script.

Everything a reader sees first (headline, tables, figures, validity) is plain
HTML written here, so it shows before any script runs and without one; the
gallery and the case browser are drawn by `page.js` from the `cases.payload`
document: its index in one JSON block, read at load, and a line per case in
another, read only for the cases shown (a page of 20 models opens without
parsing 40 MB of outputs). Every text from a file is escaped on the way in
(`html.escape` here, `textContent` in the script, `script_json` for the data),
so an output holding markup or "</script>" is shown as text and cannot run. The page has no
date or machine name in it: the same inputs give the same bytes.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

from benchmark.conditions import ConditionSet, builtin
from benchmark.dataset import Benchmark
from common.errors import UserError
from common.reading import SMALL_FILE_BYTES, read_bytes
from report.cases import VERDICTS, ModelCases, payload, script_json, script_lines
from report.figures import MARKS, compare_figures
from report.gallery import KINDS, members
from report.setups import conditions_list, with_script
from report.tables import Folder, read_occurrence, read_reviews
from scorer.tiers import MODEL_TIER, TIERS
from stats.render import Table, csv_cell
from stats.schema import origin_of, records
from stats.specs import CONTRASTS, RATES, SUMMARY
from validity.specs import PROVENANCE_FLAGS

HERE = Path(__file__).resolve().parent
SPECIMENS_PER_KIND = 2
FIGURES = (("rates.svg", "Absorption rate per model and condition, with 95% Wilson intervals."),
           ("contrasts.svg", "Paired contrasts per model (Figure 2 style): difference in absorption rate with its "
                             "95% Newcombe interval; Holm-significant contrasts are marked."))


@dataclass(frozen=True)
class Inputs:
    """What the page is made from (the review folder is optional)."""

    models: tuple[ModelCases, ...]
    benchmark: Benchmark
    tables: Folder  # read once (report.tables.read_folder)
    review: Path | None
    conditions: ConditionSet = field(default_factory=builtin)  # the built-ins and a condition file's
    occurrence: Path | None = None  # the occurrence audit's report folder


def e(text) -> str:
    return html.escape(str(text), quote=True)


def page(inputs: Inputs) -> str:
    """The whole HTML document as text."""
    names = ", ".join(m.model for m in inputs.models)
    document = payload(inputs.models, inputs.benchmark, inputs.conditions)
    if origins := origins_of(inputs.tables):  # a compare folder's: each model released or yours
        document.index["origins"] = origins
    script = (HERE / "page.js").read_text(encoding="utf-8")
    if "setups" in document.index:  # a condition sends more than a message (report/setups.py); else as ever
        script = with_script(script)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>SEAM report: {e(names)}</title>",
        f"<style>\n{(HERE / 'page.css').read_text(encoding='utf-8')}</style>",
        "</head>",
        "<body>",
        _header(inputs),
        "<main>",
        _headline(inputs),
        _figures(inputs),
        _gallery(inputs),
        _browser(inputs),
        _validity(inputs),
        "</main>",
        f'<script id="seam-data" type="application/json">{script_json(document.index)}</script>',
        f'<script id="seam-outputs" type="application/x-ndjson">{script_lines(document.details)}</script>',
        f"<script>\n{script}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------- sections


def _header(inputs: Inputs) -> str:
    versions = sorted({c.label.scorer_version for m in inputs.models for c in m.cases})
    cases = sum(len(m.cases) for m in inputs.models)
    return "\n".join([
        "<header>",
        "<h1>SEAM: does a model put the remark typed after a paste into its edit?</h1>",
        f'<p class="meta">{len(inputs.models)} model(s): {e(", ".join(m.model for m in inputs.models))} · '
        f"{cases} treatment cases · scorer version {e(', '.join(versions))} · benchmark "
        f"<code>{e(inputs.benchmark.sha256[:16])}</code></p>",
        *_compared(inputs),
        *_harnesses(inputs),
        '<nav><a href="#headline">1. Headline</a> <a href="#figures">2. Figures</a> '
        '<a href="#gallery">3. Specimens</a> <a href="#browser">4. Case browser</a> '
        '<a href="#validity">5. Validity</a></nav>',
        "</header>",
    ])


def _harnesses(inputs: Inputs) -> list[str]:
    """Which harness collected each model's outputs, when some were collected by one and imported (`seam.py
    import`); nothing on a page of the kit's own runs (the released page among them)."""
    named = [f"{m.model}: {', '.join(m.harnesses)}" for m in inputs.models if m.harnesses]
    if not named:
        return []
    runner = [m.model for m in inputs.models if not m.harnesses]
    rest = f"; {', '.join(runner)}: seam.py run" if runner else ""
    return [f'<p class="meta" id="harnesses">Outputs collected by a harness and imported (<code>seam.py '
            f"import</code>): {e('; '.join(named) + rest)}</p>"]


def _compared(inputs: Inputs) -> list[str]:
    """On a page of `seam.py compare`: whose models are whose, and which Holm family the tables used."""
    origins = origins_of(inputs.tables)
    if not origins:
        return []
    family = next((note for note in inputs.tables.notes or () if note.startswith("Holm famil")), "")
    yours = sorted(model for model, origin in origins.items() if origin == "yours")
    return [f'<p class="meta" id="compared">Your model(s) {e(", ".join(yours))} beside the released ones '
            f"(<code>seam.py compare</code>; every table has a column <code>origin</code>). {e(family)}</p>"]


def _headline(inputs: Inputs) -> str:
    out = ['<section id="headline">', "<h2>1. Headline</h2>"]
    summary = inputs.tables.absorption.get(SUMMARY.name)
    if summary is None:
        out.append(_missing(f"{SUMMARY.name}.csv"))
    else:
        out.append('<ul class="statements">')
        out += [f"<li>{_origin_mark(row)}{e(row.statement)}</li>" for row in records(summary)]
        out.append("</ul>")
    rates = inputs.tables.rates
    if rates is None:
        out.append(_missing(f"{RATES.name}.csv"))
    else:
        out.append(_rates_table(records(rates), inputs.conditions))
    shown = {case.label.condition for model in inputs.models for case in model.cases}
    if listed := conditions_list(inputs.conditions, shown):  # system prompts, later turns, other controls
        out.append(listed)
    if inputs.tables.notes is not None:
        out.append('<ul class="notes">' + "".join(f"<li>{e(item)}</li>" for item in inputs.tables.notes) + "</ul>")
    out.append("</section>")
    return "\n".join(out)


def _origin_mark(row, after: bool = False) -> str:
    """On a page of `seam.py compare`, whose the row is ("released" or "yours"); nothing elsewhere."""
    origin = origin_of(row)
    if not origin:
        return ""
    return f' <span class="origin">({e(origin)})</span>' if after else f'<span class="origin">{e(origin)}:</span> '


def _rates_table(rows, defined: ConditionSet) -> str:
    conditions = defined.order({r.condition for r in rows})
    models = sorted({r.model for r in rows})
    cells = {(r.model, r.condition): r for r in rows}
    baseline = ("clean is the baseline each treatment is compared with" if all(
        defined.control_of(c) in (None, "clean") for c in conditions) else
        "each treatment is compared with its control: clean, or the one the list below names")
    out = ['<table id="rates-table" class="rates">',
           "<caption>Absorption rate per model and condition: the rate, its 95% Wilson interval, and "
           f"absorbed / usable pairs ({baseline}).</caption>",
           "<thead><tr><th>model</th>" + "".join(f"<th>{e(c)}</th>" for c in conditions) + "</tr></thead>",
           "<tbody>"]
    origins = {r.model: r for r in rows}
    for model in models:
        row = [f"<tr><th>{e(model)}{_origin_mark(origins[model], after=True)}</th>"]
        for condition in conditions:
            r = cells.get((model, condition))
            if r is None or r.rate is None:
                row.append(f'<td data-model="{e(model)}" data-condition="{e(condition)}">–</td>')
                continue
            row.append(f'<td data-model="{e(model)}" data-condition="{e(condition)}">'
                       f'<span class="rate">{_percent(r.rate)}</span> '
                       f'<span class="ci">[{_percent(r.ci_low, sign="")}, {_percent(r.ci_high, sign="")}]</span> '
                       f'<span class="count">{e(r.absorbed)}/{e(r.n)}</span></td>')
        out.append("".join(row) + "</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out)


def _figure(path: Path) -> str:
    """A figure's SVG text, read as a table is: a regular file of a bounded size (a link to /dev/zero is refused,
    not read until memory runs out), UTF-8."""
    try:
        return read_bytes(path, "a figure (SVG)", limit=SMALL_FILE_BYTES).decode("utf-8")
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a figure (SVG)") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: byte {exc.start} is not UTF-8, expected a figure (SVG)") from None


def _figures(inputs: Inputs) -> str:
    out = ['<section id="figures">', "<h2>2. Figures</h2>"]
    compared = compare_figures(inputs.tables, inputs.conditions)  # a compare page's, each model marked; else {}
    for name, caption in FIGURES:
        path = inputs.tables.path / name
        if name in compared:
            svg, caption = compared[name], f"{caption} {MARKS}"
        elif not path.exists():
            out.append(_missing(name))
            continue
        else:
            svg = _figure(path)
        out.append(f'<figure id="figure-{e(path.stem)}">{svg}<figcaption>{e(caption)}</figcaption></figure>')
    contrasts = inputs.tables.absorption.get(CONTRASTS.name)
    if contrasts is not None:
        out.append(_details("The paired contrasts behind the figure (contrasts.csv)", _table(contrasts), True))
    for name, table in inputs.tables.absorption.items():
        if name not in (RATES.name, SUMMARY.name, CONTRASTS.name):
            out.append(_details(f"{name}.csv", _table(table), False))
    out.append("</section>")
    return "\n".join(out)


def _gallery(inputs: Inputs) -> str:
    out = ['<section id="gallery">', "<h2>3. Specimen gallery</h2>",
           '<p>Real cases of each kind, per model. Each shows the message (the remark and the <span class="seam">'
           'seam</span> before it marked), the clean output of the same model, and the treatment output with '
           'the <mark class="evidence">evidence</mark>, <span class="commentary">commentary cut</span> and '
           '<span class="cut">text cut around the edit</span> marked.</p>']
    for index, model in enumerate(inputs.models):
        out.append(f'<h3 id="gallery-{e(model.model)}">{e(model.model)}</h3>')
        of_kind = members(model, inputs.benchmark)
        for kind in KINDS:
            cases = of_kind[kind.key]
            shown = cases[:SPECIMENS_PER_KIND]
            out.append(f'<div class="kind" data-kind="{e(kind.key)}"><h4>{e(kind.title)} '
                       f'<span class="tally">({len(cases)} case{"" if len(cases) == 1 else "s"}'
                       f'{f", {len(shown)} shown" if cases else ""})</span></h4>')
            out.append(f"<p>{e(kind.explanation)}</p>")
            if not cases:
                out.append(f'<p class="none">{e(_none_of(kind.key, model))}</p>')
            for case in shown:
                out.append(f'<div class="specimen" data-model="{index}" data-case="{e(case.label.id)}">'
                           f'<a href="#{e(case.label.id)}">{e(case.label.id)}</a></div>')
            out.append("</div>")
    out.append("</section>")
    return "\n".join(out)


def _none_of(kind: str, model: ModelCases) -> str:
    if kind == MODEL_TIER and not any(MODEL_TIER in c.label.tiers_run for c in model.cases):
        return "None: the entailment tier did not run on these labels (scored with --no-nli)."
    return "None among this model's cases."


def origins_of(tables: Folder) -> dict[str, str]:
    """Each model's origin (released or yours) when the tables are `seam.py compare`'s (rates.csv has an
    `origin` column), else {}."""
    rows = records(tables.rates) if tables.rates is not None else ()
    return {row.model: origin_of(row) for row in rows if origin_of(row)}


def _browser(inputs: Inputs) -> str:
    sources = sorted({c.label.source for m in inputs.models for c in m.cases})
    tiers = (*TIERS, "none")
    conditions = inputs.conditions.order({x.label.condition for m in inputs.models for x in m.cases})
    filters = [("model", [m.model for m in inputs.models]), ("condition", conditions), ("source", sources),
               ("verdict", list(VERDICTS)), ("tier", list(tiers))]
    if origins := origins_of(inputs.tables):
        filters.insert(1, ("origin", sorted(set(origins.values()))))
    out = ['<section id="browser">', "<h2>4. Case browser</h2>",
           "<p>Every treatment case. Filter, search by cluster id, and open a case: the link in the address "
           "bar (<code>#cluster/condition</code>) opens the same case for anyone.</p>",
           '<form id="filters" onsubmit="return false">']
    for name, values in filters:
        options = '<option value="">all</option>' + "".join(f'<option value="{e(v)}">{e(v)}</option>'
                                                             for v in values)
        out.append(f'<label>{e(name)} <select id="filter-{name}">{options}</select></label>')
    out += ['<label>cluster <input id="filter-cluster" type="search" '
            'placeholder="e.g. humaneval-011 or humaneval-011/blank"></label>',
            "</form>",
            '<div id="case-view" hidden></div>',
            '<p id="cases-count" aria-live="polite"></p>',
            '<div class="scroll" id="cases-scroll" tabindex="0" role="region" aria-label="treatment cases">'
            '<div id="cases-window"><table id="cases"><thead><tr><th>case</th><th>model</th><th>condition</th>'
            "<th>source</th><th>verdict</th><th>tier</th></tr></thead><tbody></tbody></table></div></div>",
            "<noscript><p>The case browser needs JavaScript.</p></noscript>",
            "</section>"]
    return "\n".join(out)


def _validity(inputs: Inputs) -> str:
    out = ['<section id="validity">', "<h2>5. Validity</h2>"]
    if not inputs.tables.validity:
        out.append("<p>No validity tables among the tables given (run <code>seam.py validity</code>).</p>")
    for name, table in inputs.tables.validity.items():
        out.append(_details(f"{name}.csv", _table(table), name == PROVENANCE_FLAGS.name))
    out.append("<h3>Blinded review</h3>")
    reports = read_reviews(inputs.review)
    if not reports:
        out.append("<p>No review report given (<code>--review DIR</code>, as <code>seam.py review report</code> "
                   "writes it).</p>")
    else:
        out.append("<p>Each report names its reader as its review file does; docs/REVIEW.md says who read the "
                   "released reviews, and how.</p>")
    for review in reports:
        reader = f"read by {' and '.join(review.readers)}" if review.readers else "not answered yet"
        out.append(f"<h4>{e(review.name)} ({e(reader)})</h4>")
        for name, table in review.tables:
            out.append(_details(name, _table(table), name in ("review_estimates.csv", "review_confusion.csv")))
    out += _occurrence(inputs)
    out.append("</section>")
    return "\n".join(out)


def _occurrence(inputs: Inputs) -> list[str]:
    """Does the message shape occur in real chat logs: the audit's pipeline counts (screen, judge, the check of
    its verdicts) and its readers' agreement, as `seam.py occurrence report` wrote them."""
    audit = read_occurrence(inputs.occurrence)
    if audit is None:  # a study's or a comparison's page: the audit is the release's, not theirs
        return []
    out = ["<h3>Occurrence audit</h3>"]
    judge = f"judged by {audit.judge}" if audit.judge else "not judged"
    readers = f"checked by {' and '.join(audit.readers)}" if audit.readers else "not checked yet"
    out.append(f"<p>Screened from {e(', '.join(audit.corpora))}; {e(judge)}; {e(readers)} (docs/OCCURRENCE.md says "
               f"who the readers are, and how they read). {e(audit.statement)}</p>")
    first = ("occurrence_pipeline.csv", "occurrence_readers.csv")  # shown open, before the screen's breakdowns
    for name, table in sorted(audit.tables, key=lambda item: (first.index(item[0]) if item[0] in first else 2)):
        out.append(_details(name, _table(table), name in first))
    return out


# ---------------------------------------------------------------- pieces


def _table(table: Table) -> str:
    """The table as its CSV has it: each cell as `csv_cell` writes it."""
    if not table.rows:
        return "<p>(no rows)</p>"
    out = ["<table>", "<thead><tr>" + "".join(f"<th>{e(c.key)}</th>" for c in table.columns) + "</tr></thead>",
           "<tbody>"]
    for row in table.rows:
        cells = [csv_cell(value, c.kind) for value, c in zip(row, table.columns, strict=True)]
        out.append("<tr>" + "".join(f'<td{_numeric(cell)}>{e(cell)}</td>' for cell in cells) + "</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out)


def _numeric(value: str) -> str:
    try:
        float(value)
    except (TypeError, ValueError):
        return ""
    return ' class="num"'


def _details(title: str, body: str, open_: bool) -> str:
    return f'<details{" open" if open_ else ""}><summary>{e(title)}</summary>\n{body}\n</details>'


def _missing(name: str) -> str:
    return f'<p class="none">Not available: no {e(name)} among the tables given.</p>'


def _percent(value: float, sign: str = "%") -> str:
    """A proportion from a table as a percentage with one decimal (0.134228 -> "13.4%")."""
    return f"{value * 100:.1f}{sign}"
