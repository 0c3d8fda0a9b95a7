"""Bring your own model, as the README (and docs/COMPARE.md) does it: run a model (the project's fake server) into a
folder of the user's, `seam.py compare` it beside the released models, and find data/ untouched, the new
model beside the released ones in every table (origin column) and on the page (in a real browser), and
the released rows keeping their released values in the default Holm family."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest
from support.fakeserver import config_keys, serve, toml_text

import seam

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


def _digest(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    """A new model's traces (6 clusters x 6 conditions) collected from the fake server, compared twice:
    in its own Holm family (the default) and in one family with the released models."""
    home = tmp_path_factory.mktemp("user")
    before = _digest(DATA)
    with serve() as server:
        config = home / "new-model.toml"
        config.write_text(toml_text(config_keys(server, name="new-model")), encoding="utf-8")
        traces = home / "runs" / "new-model.jsonl"
        assert seam.main(["run", str(config), "--first", "6", "--out", str(traces)]) == 0
    own, panel = home / "runs" / "compare", home / "runs" / "compare-panel"
    assert seam.main(["compare", str(traces), "--out", str(own)]) == 0
    assert seam.main(["compare", str(traces), "--out", str(panel), "--family", "panel"]) == 0
    return {"traces": traces, "own": own, "panel": panel, "before": before, "home": home}


def test_data_is_byte_identical_after_the_flow(flow):
    assert _digest(DATA) == flow["before"]


def test_the_new_model_stands_beside_the_released_ones_in_every_table(flow):
    tables = flow["own"] / "tables"
    released = _rows(DATA / "tables" / "rates.csv")
    rates = _rows(tables / "rates.csv")
    assert [row["origin"] for row in rates] == ["released"] * len(released) + ["yours"] * 5
    assert [{k: v for k, v in row.items() if k != "origin"} for row in rates[:len(released)]] == released
    assert {row["model"] for row in rates if row["origin"] == "yours"} == {"new-model"}
    for path in sorted(tables.glob("*.csv")):
        header = path.read_text(encoding="utf-8").split("\n", 1)[0]
        assert header.startswith("origin,"), path.name
        assert {row["origin"] for row in _rows(path)} <= {"released", "yours"}, path.name
    names = {path.stem for path in tables.glob("*.csv")}
    assert {"rates", "contrasts", "summary", "sources", "clusters", "sensitivity", "resampling", "resolution",
            "usage", "validity_syntax", "validity_similarity", "validity_provenance"} <= names
    usage = [row for row in _rows(tables / "usage.csv") if row["model"] == "new-model" and row["condition"] == "all"]
    assert usage[0]["requests"] == "36"


def test_in_its_own_family_the_released_rows_keep_their_released_values(flow):
    released = _rows(DATA / "tables" / "contrasts.csv")
    mine = _rows(flow["own"] / "tables" / "contrasts.csv")
    assert [{k: v for k, v in row.items() if k != "origin"} for row in mine if row["origin"] == "released"] == released
    notes = (flow["own"] / "tables" / "contrasts.md").read_text(encoding="utf-8")
    assert "Holm families (--family own)" in notes


def test_in_the_panel_family_every_model_is_adjusted_together_and_it_is_said(flow):
    own = {(r["model"], r["contrast"]): float(r["p_holm"] or "nan") for r in _rows(flow["own"] / "tables" /
                                                                                   "contrasts.csv")}
    panel = {(r["model"], r["contrast"]): float(r["p_holm"] or "nan") for r in _rows(flow["panel"] / "tables" /
                                                                                     "contrasts.csv")}
    assert own.keys() == panel.keys()
    assert all(panel[key] >= own[key] for key in own if own[key] == own[key] and key[0] != "new-model")
    assert "Holm family (--family panel)" in (flow["panel"] / "tables" / "notes.md").read_text(encoding="utf-8")


def test_the_page_has_every_model_and_says_which_family(flow):
    page = (flow["own"] / "report.html").read_text(encoding="utf-8")
    assert '<select id="filter-origin">' in page and "Your model(s) new-model beside the released ones" in page
    assert "Holm families (--family own)" in page


def test_the_page_filters_by_origin_in_a_browser(flow, browser):
    page = browser.open(flow["own"] / "report.html", width=1400, height=1000)
    try:
        page.wait_for("document.querySelectorAll('#cases tbody tr').length > 0", timeout=30)
        models = json.loads(page.evaluate("JSON.stringify(JSON.parse(document.getElementById('seam-data')"
                                          ".textContent).models)"))
        assert "new-model" in models and "smollm2-135m" in models
        for origin, expected in (("yours", {"new-model"}), ("released", set(models) - {"new-model"})):
            page.evaluate(f"(() => {{ const s = document.getElementById('filter-origin'); s.value = '{origin}';"
                          " s.dispatchEvent(new Event('change')); })()")
            shown = set(page.evaluate("[...document.querySelectorAll('#cases tbody tr')].map(tr => tr.dataset.model)"))
            assert shown == expected, origin
        count = page.evaluate("document.getElementById('cases-count').textContent")
        assert count.startswith(f"{3 * 1500} of {3 * 1500 + 30} cases")
        assert page.console_errors == []
    finally:
        page.close()


def test_an_out_inside_data_is_refused_in_one_line_before_any_work(flow, capsys):
    assert seam.main(["compare", str(flow["traces"]), "--out", str(DATA / "mine")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("seam.py compare: error: --out ") and "is inside" in err and len(err.splitlines()) == 1
    assert not (DATA / "mine").exists()


def test_a_released_models_name_is_refused_naming_both_files(flow, tmp_path, capsys):
    copy = tmp_path / "again.jsonl"
    copy.write_text((DATA / "traces" / "smollm2-135m.jsonl").read_text(encoding="utf-8")[:200_000].rsplit("\n", 1)[0]
                    + "\n", encoding="utf-8")
    assert seam.main(["compare", str(copy), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "again.jsonl: model 'smollm2-135m' is a released model" in err and "smollm2-135m.jsonl" in err
    assert not (tmp_path / "out").exists()


def test_a_trace_mixing_two_models_is_refused(flow, tmp_path, capsys):
    rows = flow["traces"].read_text(encoding="utf-8").splitlines()
    other = json.loads(rows[1])
    other["model"] = "someone-else"
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join([rows[0], json.dumps(other)]) + "\n", encoding="utf-8")
    assert seam.main(["compare", str(mixed), "--out", str(tmp_path / "out")]) == 2
    assert "someone-else" in capsys.readouterr().err


def _run(home: Path, name: str, *options: str) -> Path:
    with serve() as server:
        config = home / f"{name}.toml"
        config.write_text(toml_text(config_keys(server, name=name)), encoding="utf-8")
        traces = home / f"{name}.jsonl"
        assert seam.main(["run", str(config), "--first", "3", "--out", str(traces), *options]) == 0
    return traces


def test_traces_of_some_conditions_only_are_compared(tmp_path):
    """A run with --only (the runner's help shows one): the tables with a column per condition get empty
    cells for the conditions the new model lacks (it crashed: the families' tables had other columns)."""
    traces = _run(tmp_path, "few-conditions", "--only", "clean,newline,boundary")
    assert seam.main(["compare", str(traces), "--out", str(tmp_path / "out")]) == 0
    rates = [row for row in _rows(tmp_path / "out" / "tables" / "rates.csv") if row["origin"] == "yours"]
    assert {row["condition"] for row in rates} == {"newline", "boundary"}
    clusters = [row for row in _rows(tmp_path / "out" / "tables" / "clusters.csv") if row["origin"] == "yours"]
    assert clusters and all(row["blank_models"] == "" for row in clusters)


def test_a_rerun_into_the_same_out_uses_this_runs_models_only(tmp_path):
    first, second = _run(tmp_path, "model-a"), _run(tmp_path, "model-b")
    out = tmp_path / "out"
    assert seam.main(["compare", str(first), str(second), "--out", str(out)]) == 0
    assert seam.main(["compare", str(second), "--out", str(out)]) == 0
    yours = {row["model"] for row in _rows(out / "tables" / "rates.csv") if row["origin"] == "yours"}
    assert yours == {"model-b"}


def test_a_relative_out_into_data_and_a_link_into_data_are_refused(flow, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    for out in ("data/mine", "./data/mine", "data/../data/mine"):
        assert seam.main(["compare", str(flow["traces"]), "--out", out]) == 2
        assert "is inside" in capsys.readouterr().err
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "tables").symlink_to(DATA / "tables")
    before = _digest(DATA)
    assert seam.main(["compare", str(flow["traces"]), "--out", str(linked)]) == 2
    assert "is inside" in capsys.readouterr().err and _digest(DATA) == before
