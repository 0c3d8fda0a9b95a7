"""Numbers a hostile server or a hand-edited file puts where the kit counts money and time (issue 36, defects
3 and 4): a usage count of hundreds of digits, a price of 1e308 or of 400 digits, a latency of Infinity or of
400 digits. Each is refused in one line naming file, line and field, or handled (an absurd usage count is an
unreadable usage, counted as unknown); never a traceback, never `$inf`, never `inf` in a table that its own
reader then refuses."""

from __future__ import annotations

import dataclasses
import math

import pytest
from support.samples import trace_row

import seam
from common import jsonl
from common.errors import UserError
from common.records import TraceRow
from common.traces import read_final
from runner.estimate import Estimate, dollars
from runner.prices import Price, load_prices
from runner.usage import read_usage
from scorer.synthetic import trace_row as synthetic_row
from stats.render import write_tables
from stats.schema import read_table
from stats.specs import USAGE
from stats.usage import ALL, UsageSettings, tally_rows, usage_table

HUGE = int("9" * 400)  # past a float's range (about 1.8e308)
NON_FINITE = ("Infinity", "-Infinity", "NaN")  # what Python's json reads, and JSON itself has no spelling for
MAX_COUNT = 10**12  # tokens in one reply's usage (runner/usage.py, docs/RUNNER.md)
MAX_PRICE = 1_000_000  # USD per million tokens (runner/prices.py, docs/RUNNER.md)


def _row(usage=None, latencies=(1.5,), model="m"):
    row = synthetic_row("humaneval-001", "clean", "out", model=model)
    attempt = row.attempts[0]
    attempts = tuple(dataclasses.replace(attempt, latency_s=latency) for latency in latencies)
    return dataclasses.replace(row, usage=usage, attempts=attempts)


# Defect 3: overflow.

@pytest.mark.parametrize("usage", [
    {"prompt_tokens": HUGE, "completion_tokens": 5},
    {"prompt_tokens": 5, "completion_tokens": 10**300},
    {"input_tokens": 5, "cache_read_input_tokens": MAX_COUNT + 1, "output_tokens": 5},
    {"promptTokenCount": 5, "candidatesTokenCount": HUGE},
])
def test_a_usage_count_beyond_any_reply_is_unreadable_not_a_number_to_price(usage):
    assert read_usage(usage) is None


def test_a_usage_count_at_the_bound_is_still_read():
    assert read_usage({"prompt_tokens": MAX_COUNT, "completion_tokens": 0}).prompt_tokens == MAX_COUNT


def test_usage_prices_a_trace_with_a_count_of_hundreds_of_digits_as_unknown(tmp_path, capsys):
    traces = tmp_path / "m.jsonl"
    jsonl.write(traces, [_row({"prompt_tokens": HUGE, "completion_tokens": 5}).to_row()])
    prices = tmp_path / "prices.toml"
    prices.write_text("[m]\ninput_per_mtok = 1\noutput_per_mtok = 1\n", encoding="utf-8")
    assert seam.main(["usage", str(traces), "--prices", str(prices), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "| m | all | 1 | 1 | 0 | 0 |" in out and "inf" not in out
    assert read_table(tmp_path / "out" / "usage.csv", USAGE).rows[-1][:4] == ("m", ALL, 1, 1)


@pytest.mark.parametrize("value", [pytest.param("9" * 400, id="400-digits"), "1e308", "inf", str(MAX_PRICE + 1),
                                   "1_000_000.5"])
def test_a_price_beyond_the_bound_is_one_line_naming_file_line_and_key(tmp_path, value):
    path = tmp_path / "prices.toml"
    path.write_text(f"[m]\ninput_per_mtok = 1\noutput_per_mtok = {value}\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"prices\.toml:3: \[m\] key 'output_per_mtok' is .*, expected a price "
                                        r"from 0 to 1,000,000 \(USD per million tokens\)"):
        load_prices(path)


def test_a_price_at_the_bound_is_read(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text("[m]\ninput_per_mtok = 1_000_000\noutput_per_mtok = 0\n", encoding="utf-8")
    assert load_prices(path)["m"].input_per_mtok == MAX_PRICE


def test_estimate_with_a_price_of_400_digits_is_one_line(tmp_path, capsys):
    config = tmp_path / "model.toml"
    config.write_text('name = "my-model"\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                      "max_tokens = 100\n", encoding="utf-8")
    prices = tmp_path / "prices.toml"
    prices.write_text(f"[my-model]\ninput_per_mtok = {'9' * 400}\noutput_per_mtok = 1\n", encoding="utf-8")
    assert seam.main(["run", str(config), "--only", "clean", "--first", "1", "--out", str(tmp_path / "t.jsonl"),
                      "--estimate", "--prices", str(prices)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "prices.toml:2: [my-model] key 'input_per_mtok' is 999" in err


def test_a_cost_beyond_a_float_is_too_large_to_price_never_dollars_inf():
    """The estimate's ceiling is max_tokens times the requests, and a config may give any max_tokens."""
    found = Estimate(requests=1, skipped=0, prompt_tokens=10, completion_median=10, completion_p95=10,
                     completion_ceiling=HUGE, price=Price(1.0, 1.0))
    assert found.cost(HUGE) == math.inf and Price(1.0, 1.0).cost(HUGE, 0) == math.inf
    cost_line = found.lines("m", HUGE)[-1]
    assert cost_line.endswith("at most too large to price") and "inf" not in cost_line
    assert dollars(math.inf) == "too large to price" and dollars(12.345) == "$12.35"


def test_estimate_with_a_max_tokens_of_400_digits_prints_too_large_to_price(tmp_path, capsys):
    config = tmp_path / "model.toml"
    config.write_text('name = "my-model"\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                      f"max_tokens = {'9' * 400}\n", encoding="utf-8")
    prices = tmp_path / "prices.toml"
    prices.write_text("[my-model]\ninput_per_mtok = 1\noutput_per_mtok = 1\n", encoding="utf-8")
    assert seam.main(["run", str(config), "--only", "clean", "--first", "1", "--out", str(tmp_path / "t.jsonl"),
                      "--estimate", "--prices", str(prices)]) == 0
    cost = capsys.readouterr().out.splitlines()[-1]
    assert cost.startswith("  cost (USD): $") and cost.endswith("at most too large to price") and "inf" not in cost


@pytest.mark.parametrize("latencies", [(HUGE,), (1e308, 1e308), (math.inf,), (math.nan,), (-1.0,)],
                         ids=["400-digits", "1e308-twice", "inf", "nan", "negative"])
def test_the_time_spent_counts_only_latencies_of_a_sane_size(latencies):
    """The trace reader refuses a non-finite latency; rows made otherwise, and the `previous` rows it keeps as
    written, are still summed without overflow: such a latency is left out, as a negative one always was."""
    total = tally_rows([_row(latencies=(2.0, *latencies))])[("m", ALL)]
    assert total.seconds == 2.0
    earlier = {"usage": None, "attempts": [{"latency_s": latency} for latency in latencies], "status": "ok"}
    row = dataclasses.replace(_row(latencies=(2.0,)), previous=(earlier,))
    assert tally_rows([row])[("m", ALL)].seconds == 2.0


def test_the_usage_table_reads_back_whatever_the_latencies(tmp_path):
    rows = [_row({"prompt_tokens": 1, "completion_tokens": 1}, latencies=(math.inf, 1e308, 1e308, HUGE))]
    table = usage_table(rows, ("clean",), UsageSettings({"m": Price(1.0, 1.0)}, "p.toml"))
    write_tables(tmp_path, [table], command="test", what="usage table")
    assert read_table(tmp_path / "usage.csv", USAGE).rows == table.rows


# Defect 4: non-finite numbers in a trace row.

@pytest.mark.parametrize("name", ["latency_s", "retry_wait_s"])
@pytest.mark.parametrize("value", [*NON_FINITE, pytest.param("9" * 400, id="400-digits")])
def test_a_trace_row_with_a_non_finite_seconds_field_is_refused_naming_file_line_and_field(name, value):
    attempt = {**trace_row()["attempts"][0], name: "PLACEHOLDER"}
    text = jsonl.dumps(trace_row(attempts=[attempt])).replace('"PLACEHOLDER"', value)
    shown = value if value in NON_FINITE else "999"
    with pytest.raises(UserError, match=rf"^t\.jsonl:2: attempt 1: field '{name}' is {shown}.*, expected a "
                                        r"finite number of seconds or null$"):
        TraceRow.from_row(jsonl.parse(text), "t.jsonl:2")


@pytest.mark.parametrize("value", [0, 0.5, 86400.0, 10**30, None])
def test_finite_seconds_and_null_are_still_read(value):
    row = trace_row(attempts=[{**trace_row()["attempts"][0], "latency_s": value, "retry_wait_s": value}])
    assert TraceRow.from_row(jsonl.parse(jsonl.dumps(row)), "t.jsonl:1").to_row() == row


def test_non_finite_numbers_in_the_providers_usage_are_an_unreadable_usage():
    """`usage` and `response` are kept as the provider sent them (a hostile reply must not make the whole trace
    unreadable); the kit reads only whole counts from `usage`, so a NaN or an Infinity there is unknown."""
    usage = jsonl.parse('{"prompt_tokens": Infinity, "completion_tokens": NaN}')
    row = trace_row(usage=usage, response={"x": usage["prompt_tokens"]})
    assert TraceRow.from_row(row, "t.jsonl:1").usage == usage
    assert read_usage(usage) is None


def test_the_trace_file_reader_refuses_an_infinity_latency(tmp_path):
    attempt = {**trace_row()["attempts"][0], "latency_s": "PLACEHOLDER"}
    path = tmp_path / "t.jsonl"
    path.write_text(jsonl.dumps(trace_row(attempts=[attempt])).replace('"PLACEHOLDER"', "Infinity"),
                    encoding="utf-8")
    with pytest.raises(UserError, match=r"t\.jsonl:1: attempt 1: field 'latency_s' is Infinity"):
        read_final(path)
