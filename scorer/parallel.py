"""Scoring several trace files side by side, in worker processes, with the same result as one after another.

`seam.py score` over many trace files (a panel of models) spends nearly all its
time in pure Python, one file at a time; with more than one core available, a
worker process per core scores its own files. Nothing of the result depends on
how many workers there are: each file's labels are computed from that file and
the requests alone (the scorer's memos are per process and never change a
result), the parent collects them in the order of the files, prints every
summary in that order once all are done, and writes every labels file or none
(`common.files.write_files`), as the one-process path does. The worker count is
written nowhere.

Errors are those of scoring the files one after another, whichever worker met
them first: that path reads every trace file before it scores any, so a worker
reports the stage it failed at (`READ` < `CLEAN` < `PAIR` < `SCORE`), and the
parent raises the failure of the earliest stage, of the first file at that
stage. A worker that dies (killed, out of memory) is one line naming its file;
nothing is written. A parent that is stopped (SIGTERM, SIGINT, an error) kills
its workers rather than wait for them, and no worker outlives its parent
(scorer/lifetime.py).

Only the lexical tiers run here: the entailment model is one session that
already uses `--threads` cores and one cache file, so with it the files are
scored in the calling process (scorer/cli.py decides).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from benchmark.conditions import ConditionSet
from common import cpus, jsonl, nogc
from common.errors import UserError
from scorer import lifetime
from scorer.inputs import Item, TraceSet, read_traces, with_clean_rows
from scorer.score import Stats, labels_bytes, score

# The stages of reading and scoring one trace file, in the order the one-process path meets them.
READ, CLEAN, PAIR, SCORE = range(4)  # its own file; the --clean-traces files; pairing with them; scoring


@dataclass(frozen=True)
class Scored:
    """One trace file scored: its model, the labels' bytes and the counts its summary prints."""

    path: Path
    model: str
    clean_rows: int
    data: bytes
    stats: Stats


@dataclass(frozen=True)
class Failed:
    """One trace file that could not be scored: the stage it failed at and the error's message; from `PAIR` on
    (the file was read), its path and model too."""

    stage: int
    message: str
    path: Path | None = None
    model: str | None = None


def worker_count(requested: int | None, files: int) -> int:
    """Workers for `files` trace files: as requested (default: one per available CPU), never more than files.

    >>> worker_count(4, 2), worker_count(1, 20), worker_count(3, 1)
    (2, 1, 1)
    """
    return max(1, min(requested if requested is not None else cpus.available(), files))


def score_files(paths: list[Path], defined: ConditionSet, items: dict[str, Item], clean_traces: list[Path] | None,
                workers: int) -> list[Scored | Failed]:
    """Each trace file read and scored (lexical tiers only) by one of `workers` processes, in the order of
    `paths`; a file that could not be scored is a `Failed`."""
    import multiprocessing  # here, not above: a one-process score need not load it
    import threading
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # fork shares the requests without copying them; where it is unsafe (other threads running) or missing, the
    # workers are started afresh and get them pickled
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1 \
        else "spawn"
    with lifetime.sigterm_raises():  # from before the first worker starts until the last has ended
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                                   initializer=_start, initargs=(os.getpid(), defined, items, clean_traces))
        try:
            futures = [pool.submit(_score_one, path) for path in paths]
            outcomes = []
            for path, future in zip(paths, futures, strict=True):
                try:
                    outcomes.append(future.result())
                except BrokenProcessPool:  # every file not scored by then fails so, whichever the worker had
                    raise UserError(f"{path}: not scored: a worker process stopped unexpectedly (killed, or out "
                                    "of memory?); nothing was written") from None
            pool.shutdown(wait=True)
        except BaseException:  # an error, an interrupt, SIGTERM: no worker goes on scoring for nothing
            lifetime.kill_workers(pool)
            raise
    return outcomes


def first_failure(outcomes: list[Scored | Failed], before: int) -> str | None:
    """The message the one-process path raises among failures at stages before `before`: of the earliest
    stage, the first file's; None when there is none."""
    failures = [(outcome.stage, index, outcome.message) for index, outcome in enumerate(outcomes)
                if isinstance(outcome, Failed) and outcome.stage < before]
    return min(failures)[2] if failures else None


# A worker's inputs, set once when it starts (`_start`) and gone with it.
_state: dict = {}


def _start(parent: int, defined: ConditionSet, items: dict[str, Item], clean_traces: list[Path] | None) -> None:
    lifetime.start_in_worker(parent)
    _state.update(defined=defined, items=items, clean_traces=clean_traces, others=None)


def _score_one(path: Path) -> Scored | Failed:
    with nogc.paused():  # as in the parent (a forked worker inherits it; a spawned one does not)
        return _read_and_score(path)


def _read_and_score(path: Path) -> Scored | Failed:
    defined, items = _state["defined"], _state["items"]
    try:
        traces = read_traces(path, defined)
    except UserError as exc:
        return Failed(READ, str(exc))
    if _state["clean_traces"] is not None:
        try:
            others = _others()
        except UserError as exc:
            return Failed(CLEAN, str(exc))
        try:
            traces = with_clean_rows(traces, others)
        except UserError as exc:
            return Failed(PAIR, str(exc), traces.path, traces.model)
    try:
        result = score(traces, items, None, defined)
    except UserError as exc:
        return Failed(SCORE, str(exc), traces.path, traces.model)
    return Scored(traces.path, traces.model, traces.clean_row_count, labels_bytes(result.labels), result.stats)


def _others() -> list[TraceSet]:
    """The --clean-traces files, read once per worker (every file it scores is paired with the same ones)."""
    if _state["others"] is None:
        _state["others"] = [read_traces(path, _state["defined"])
                            for path in jsonl.files_named(_state["clean_traces"], "trace")]
    return _state["others"]
