"""What a run cost: every provider's usage shape read alike, the totals equal the rows' own usage, costs at
the prices of a prices file, an unreadable usage counted (never 0), a bad prices file one line."""

from __future__ import annotations

import dataclasses

import pytest

import seam
from common import jsonl
from common.errors import UserError
from common.traces import read_final
from runner.prices import Price, load_prices
from runner.usage import Usage, read_usage
from scorer.synthetic import trace_row
from stats.usage import ALL, UsageSettings, tally_rows, usage_table

RELEASED = sorted(__import__("pathlib").Path(__file__).resolve().parents[1].glob("data/traces/*.jsonl"))


@pytest.mark.parametrize("usage, expected", [
    ({"prompt_tokens": 90, "completion_tokens": 174, "total_tokens": 264,
      "prompt_tokens_details": {"cached_tokens": 30}, "completion_tokens_details": {"reasoning_tokens": 100}},
     Usage(90, 174, 100, 30)),  # OpenAI chat completions: reasoning is inside completion_tokens
    ({"input_tokens": 12, "output_tokens": 7, "input_tokens_details": {"cached_tokens": 2},
      "output_tokens_details": {"reasoning_tokens": 3}}, Usage(12, 7, 3, 2)),  # OpenAI Responses
    ({"input_tokens": 10, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 80, "output_tokens": 9},
     Usage(95, 9, None, 80)),  # Anthropic: input_tokens is only the uncached part
    ({"input_tokens": 10, "output_tokens": 9}, Usage(10, 9, None, None)),  # Anthropic without caching
    ({"promptTokenCount": 12, "candidatesTokenCount": 30, "thoughtsTokenCount": 70, "totalTokenCount": 112,
      "cachedContentTokenCount": 4}, Usage(12, 100, 70, 4)),  # Gemini: thinking billed as output
    ({"promptTokenCount": 12, "candidatesTokenCount": 30}, Usage(12, 30, None, None)),
])
def test_every_providers_usage_shape_reads_alike(usage, expected):
    assert read_usage(usage) == expected


@pytest.mark.parametrize("usage", [None, "12 tokens", 12, [1, 2], {}, {"prompt_tokens": "9", "completion_tokens": 1},
                                   {"prompt_tokens": 9}, {"prompt_tokens": -1, "completion_tokens": 1},
                                   {"prompt_tokens": True, "completion_tokens": 1}, {"tokens": 5}])
def test_a_usage_that_cannot_be_read_is_none(usage):
    """Runner version 1 rows may hold any JSON there; none of it is taken for 0 tokens."""
    assert read_usage(usage) is None


def _row(cluster, condition, usage, *, model="m", latency=1.5, previous=()):
    row = trace_row(cluster, condition, "out", model=model)
    attempts = tuple(dataclasses.replace(attempt, latency_s=latency) for attempt in row.attempts)
    return dataclasses.replace(row, usage=usage, attempts=attempts, previous=tuple(previous))


def test_an_unreadable_usage_is_counted_as_unknown_and_said_never_zero():
    rows = [_row("humaneval-001", "clean", {"prompt_tokens": 10, "completion_tokens": 5}),
            _row("humaneval-001", "newline", "n/a")]
    table = usage_table(rows, ("clean", "newline"))
    total = table.rows[-1]
    assert total[:6] == ("m", ALL, 2, 1, 10, 5)
    assert any("cannot be read" in note and "lower bounds" in note for note in table.notes)


def test_earlier_rows_of_a_request_asked_again_are_paid_for_and_counted():
    earlier = {"usage": {"prompt_tokens": 10, "completion_tokens": 1024}, "attempts": [{"latency_s": 30.0}]}
    totals = tally_rows([_row("humaneval-001", "clean", {"prompt_tokens": 10, "completion_tokens": 50},
                              previous=[earlier])])
    tally = totals[("m", "clean")]
    assert (tally.requests, tally.prompt, tally.completion, tally.seconds) == (1, 20, 1074, 31.5)


def test_a_failed_request_was_not_paid_and_its_usage_is_not_unknown():
    failed = dataclasses.replace(_row("humaneval-001", "clean", None), status="failed", output=None,
                                 reason="connection refused")
    unreadable = _row("humaneval-001", "newline", "n/a")
    table = usage_table([failed, unreadable], ("clean", "newline"), UsageSettings({"m": Price(1, 1)}, "p.toml"))
    by_condition = {row[1]: row for row in table.rows}
    assert by_condition["clean"][2:4] == (1, 0)  # a request, nothing unknown
    assert by_condition["newline"][2:4] == (1, 1) and by_condition["newline"][-1] is None  # no cost from nothing
    assert by_condition[ALL][2:4] == (2, 1)


def test_rows_collected_through_a_batch_are_priced_at_batch_prices():
    plain = _row("humaneval-001", "clean", {"prompt_tokens": 1_000_000, "completion_tokens": 0})
    batch = _row("humaneval-002", "clean", {"prompt_tokens": 1_000_000, "completion_tokens": 0})
    batch = dataclasses.replace(batch, request={**batch.request, "batch": True})
    price = Price(2.0, 8.0, batch_input_per_mtok=1.0, batch_output_per_mtok=4.0)
    totals = tally_rows([plain, batch])
    assert totals[("m", ALL)].cost(price) == pytest.approx(2.0 + 1.0)


def test_cost_is_tokens_times_price_per_million_and_empty_without_a_price():
    rows = [_row("humaneval-001", "clean", {"prompt_tokens": 2_000_000, "completion_tokens": 500_000}),
            _row("humaneval-001", "clean", {"prompt_tokens": 7, "completion_tokens": 7}, model="unpriced")]
    table = usage_table(rows, ("clean",), UsageSettings({"m": Price(0.15, 0.60)}, "prices.toml"))
    cost = {row[0]: row[-1] for row in table.rows if row[1] == ALL}
    assert cost["m"] == pytest.approx(2 * 0.15 + 0.5 * 0.60) and cost["unpriced"] is None
    assert any("no price for unpriced" in note for note in table.notes)
    assert Price(1, 2, 0.5, 1).cost(1_000_000, 1_000_000, batch=True) == 1.5
    assert Price(1, 2).cost(1_000_000, 1_000_000, batch=True) == 3.0  # no batch price: the plain one


@pytest.mark.skipif(not RELEASED, reason="no released traces")
def test_the_released_usage_table_totals_the_rows_own_usage():
    rows = [row for path in RELEASED for row in read_final(path).final.values()]
    table = usage_table(rows, ("clean", "newline", "blank", "boundary", "mitigation", "native"))
    for model in {row.model for row in rows}:
        mine = [row for row in rows if row.model == model]
        total = next(r for r in table.rows if r[0] == model and r[1] == ALL)
        assert total[2] == len(mine) == 1800
        assert total[4] == sum(row.usage["prompt_tokens"] for row in mine)
        assert total[5] == sum(row.usage["completion_tokens"] for row in mine)
        assert total[8] == pytest.approx(sum(a.latency_s for row in mine for a in row.attempts), abs=1e-3)
        per_condition = [r for r in table.rows if r[0] == model and r[1] != ALL]
        assert sum(r[4] for r in per_condition) == total[4]


def _prices(tmp_path, text):
    path = tmp_path / "prices.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, message", [
    ("[m]\ninput_per_mtok = 1\n", r"prices.toml:1: \[m\] has no 'output_per_mtok'"),
    ("[m]\ninput_per_mtok = -1\noutput_per_mtok = 2\n", r"prices.toml:2: \[m\] key 'input_per_mtok' is -1"),
    ("[m]\ninput_per_mtok = 1\noutput_per_mtok = \"2\"\n", r"prices.toml:3: \[m\] key 'output_per_mtok' is '2'"),
    ("[a]\ninput_per_mtok = 1\noutput_per_mtok = 2\n[m]\ninput_per_mtok = 1\noutput_per_mtok = 2\nprice = 3\n",
     r"prices.toml:7: \[m\] unknown key 'price'"),
    ("[m]\ninput_per_mtok = 1\noutput_per_mtok = 2\n[m]\ninput_per_mtok = 1\n", r"prices.toml: not valid TOML "
     r"\(Cannot declare \('m',\) twice \(at line 4"),
    ("[m]\ninput_per_mtok = nan\noutput_per_mtok = 2\n", r"prices.toml:2: \[m\] key 'input_per_mtok' is nan"),
    ("[m]\ninput_per_mtok = true\noutput_per_mtok = 2\n", r"prices.toml:2: \[m\] key 'input_per_mtok' is true"),
    ("[qwen2.5-coder]\ninput_per_mtok = 1\noutput_per_mtok = 2\n", r"prices.toml:1: \[qwen2.5-coder\] is a table "
     r"inside \[qwen2\], but a model's table holds prices only; a model name with dots is quoted: "
     r"\[\"qwen2.5-coder\"\]"),
    ("[a]\ninput_per_mtok = 1\noutput_per_mtok = 2\n\n[a.b]\nx = 1\n", r"prices.toml:5: \[a.b\] is a table inside "
     r"\[a\]"),
    ("m = 3\n", r"prices.toml:1: 'm' is not a table"),
    ("[m]\ninput_per_mtok = " + "1" * 5000 + "\n", r"prices.toml:2: key 'input_per_mtok' holds an integer of more"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", r"prices.toml: not valid TOML \(nested too deeply to read\)"),
])
def test_a_bad_prices_file_is_one_line_naming_file_line_and_key(tmp_path, text, message):
    with pytest.raises(UserError, match=message):
        load_prices(_prices(tmp_path, text))


def test_the_usage_command_prints_the_table_and_writes_it(tmp_path, capsys):
    traces = tmp_path / "m.jsonl"
    jsonl.write(traces, [_row("humaneval-001", "clean", {"prompt_tokens": 10, "completion_tokens": 5}).to_row()])
    prices = _prices(tmp_path, "[m]\ninput_per_mtok = 1000000\noutput_per_mtok = 0\n")
    assert seam.main(["usage", str(traces), "--prices", str(prices), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "| m | all | 1 | 0 | 10 | 5 |" in out and "10.00 |" in out
    csv = (tmp_path / "out" / "usage.csv").read_text().splitlines()
    assert csv[0].split(",")[:6] == ["model", "condition", "requests", "usage_unknown", "prompt_tokens",
                                     "completion_tokens"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["usage.csv", "usage.md", "usage.tex"]
    assert seam.main(["usage", str(traces), "--prices", str(tmp_path / "none.toml")]) == 2
    assert "none.toml: no such file, expected a prices file (TOML)" in capsys.readouterr().err
