"""`seam.py run --estimate` says what a run will cost with no network; `--max-cost` refuses to start over a
budget; the prompt-token estimator's error against the released traces stays what the docs say."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from support.fakeserver import serve

import seam
from benchmark.dataset import requests
from common.traces import read_final
from runner.estimate import (
    PIECE,
    TEMPLATE_TOKENS,
    Completions,
    estimate,
    estimate_prompt_tokens,
    estimator_error,
    released_completions,
)
from runner.prices import Price


def _closed_port() -> int:
    with socket.socket() as sock:  # bound then closed: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _config(tmp_path, url: str, max_tokens: int = 512):
    path = tmp_path / "model.toml"
    path.write_text(f'name = "my-model"\nprovider = "openai"\nmodel = "m"\nbase_url = "{url}"\n'
                    f"max_tokens = {max_tokens}\n", encoding="utf-8")
    return path


def _prices(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('[my-model]\ninput_per_mtok = 1.0\noutput_per_mtok = 4.0\n', encoding="utf-8")
    return path


def test_the_estimate_needs_no_server_and_sends_nothing(tmp_path, capsys):
    config = _config(tmp_path, f"http://127.0.0.1:{_closed_port()}/v1")
    out = tmp_path / "traces.jsonl"
    assert seam.main(["run", str(config), "--only", "clean", "--sources", "humaneval", "--out", str(out),
                      "--estimate", "--prices", str(_prices(tmp_path))]) == 0
    printed = capsys.readouterr().out
    assert "estimate for my-model: 50 requests to send; nothing is sent" in printed
    assert "at most 25,600 (max_tokens 512)" in printed and "cost (USD): $" in printed
    assert not out.exists()


def test_ids_already_final_in_out_are_left_out_of_the_estimate(tmp_path, capsys):
    with serve() as server:
        config = _config(tmp_path, server.url + "/v1")
        out = tmp_path / "traces.jsonl"
        assert seam.main(["run", str(config), "--only", "clean", "--sources", "humaneval", "--first", "3",
                          "--out", str(out)]) == 0
        capsys.readouterr()
        assert seam.main(["run", str(config), "--only", "clean", "--sources", "humaneval", "--out", str(out),
                          "--estimate"]) == 0
    assert "47 requests to send (3 already final in --out, left out)" in capsys.readouterr().out


def test_max_cost_refuses_to_start_over_the_budget_in_one_line(tmp_path, capsys):
    with serve() as server:
        config = _config(tmp_path, server.url + "/v1")
        out = tmp_path / "traces.jsonl"
        code = seam.main(["run", str(config), "--only", "clean", "--out", str(out), "--prices",
                          str(_prices(tmp_path)), "--max-cost", "0.01"])
        assert code == 2 and server.received == [] and not out.exists()
        err = capsys.readouterr().err.strip()
        assert err.startswith("seam.py run: error: the estimate's upper end is $") and "over --max-cost $0.01" in err
        assert len(err.splitlines()) == 1
        assert seam.main(["run", str(config), "--only", "clean", "--out", str(out), "--max-cost", "5"]) == 2
        assert "--max-cost needs a price for model 'my-model'" in capsys.readouterr().err
        assert seam.main(["run", str(config), "--only", "clean", "--first", "1", "--out", str(out),
                          "--prices", str(_prices(tmp_path)), "--max-cost", "5"]) == 0  # under it: the run goes
        assert len(server.received) == 1


def test_the_estimate_adds_prompts_completion_ranges_and_cost():
    chosen = requests(sources=["humaneval"], conditions=["clean", "newline"], limit=3)
    completions = Completions({"humaneval": 100}, {"humaneval": 900}, 50, 500)
    found = estimate(chosen, skipped=0, max_tokens=600, price=Price(2.0, 10.0), completions=completions)
    prompt = sum(len(PIECE.findall(r.message)) + TEMPLATE_TOKENS for r in chosen)
    assert (found.requests, found.prompt_tokens) == (6, prompt)
    assert (found.completion_median, found.completion_p95, found.completion_ceiling) == (600, 3600, 3600)
    assert found.upper_cost == pytest.approx((prompt * 2.0 + 3600 * 10.0) / 1e6)


def test_the_released_completions_give_a_median_and_95th_percentile_per_source():
    completions = released_completions()
    assert set(completions.median) == {"aclsum", "austen", "fissix", "humaneval", "pyfaq", "wikipedia"}
    for source in completions.median:
        assert 0 < completions.median[source] <= completions.p95[source] <= 1024


def test_the_estimators_measured_error_on_the_released_traces():
    """docs/RUNNER.md gives these (python scripts/estimator_error.py): median 5.4 % (Qwen) and 6.1 % (SmolLM2),
    worst 33.8 % and 19.1 %; the bounds keep them from drifting unseen."""
    messages = {request.id: request.message for request in requests()}
    found = {row.model: row for row in estimator_error(messages)}
    assert set(found) == {"smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"}
    for row in found.values():
        assert row.rows == 1800 and row.median < 0.07 and row.worst < 0.35
    released = sorted((Path(__file__).resolve().parents[1] / "data" / "traces").glob("*.jsonl"))
    one = next(iter(read_final(released[0]).final.values()))
    assert estimate_prompt_tokens("") == TEMPLATE_TOKENS and one.usage["prompt_tokens"] > 0
