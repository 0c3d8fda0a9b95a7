"""Test support for the harness routes (tests/test_harness_{inspect,lmeval,promptfoo}.py): the kit's own runner
against the fake server with a harness test's script, and the labels of a trace, so that each route's test
compares its import with the runner's by the same steps."""

from __future__ import annotations

import json
from pathlib import Path

from support.fakeserver import config_keys, serve, toml_text


def run_runner(folder: Path, script: dict, *, first: int, max_tokens: int, expected_exit: int,
               conditions: Path | None = None) -> tuple[Path, list[dict]]:
    """`seam.py run` of the first clusters against the fake server playing `script`: (its traces, the requests
    the server received)."""
    import seam

    traces = folder / "runner.jsonl"
    extra = ["--conditions", str(conditions)] if conditions else []
    with serve(script) as server:
        config = folder / "fake-model.toml"
        config.write_text(toml_text(config_keys(server, name="fake-model", concurrency=1, max_tokens=max_tokens)),
                          encoding="utf-8")
        assert seam.main(["run", str(config), "--first", str(first), *extra, "--out", str(traces)]) == expected_exit
        received = list(server.received)
    return traces, received


def labels_of(folder: Path, traces: dict[str, Path], conditions: Path | None = None) -> dict[str, list[dict]]:
    """`seam.py score --no-nli` of each trace (by name), its label rows read back."""
    import seam

    extra = ["--conditions", str(conditions)] if conditions else []
    found = {}
    for name, trace in traces.items():
        labels = folder / f"labels-{name}.jsonl"
        assert seam.main(["score", str(trace), "--out", str(labels), "--no-nli", *extra]) == 0
        found[name] = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    return found
