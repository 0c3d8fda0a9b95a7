"""Every example command line in every `--help` (issue 36): none writes into data/ (the release) or outside a
folder of the user's, every file of the repository it reads exists, and every one that can run here (offline:
no model server, no network, no corpus to fetch) runs, in a copy of the repository, and exits 0.

The examples are read from the help texts themselves: each line (backslash continuations joined) that starts
with `python`, `bash` or `pip`, or pipes into `python seam.py`. Its paths are its words that look like file
names; the outputs are the values of --out and --out-dir (and of the judge's --traces, which it writes) and
what `>` redirects into. A command named in a help as `WORDS --help` that seam.py's tree of subcommands does not
show (`guard serve`, parsed by guard's first argument) is read too.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_reproduce import copy_release

import seam

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 180  # per example; the slowest (validity, tables on the released traces) take a few seconds
OUTPUT_OPTIONS = {"--out", "--out-dir"}
MORE_OUTPUTS = {("occurrence", "judge"): {"--traces"}, ("occurrence", "pilot"): {"--traces"}}
# Where an example may write: a folder of the user's (runs/ is git-ignored), models/ (git-ignored: where the
# scorer looks for the entailment model that nli-export writes), or the user's home (~/: outside the repository,
# where a judge's traces, which quote the corpus, belong); a bare file name is the current folder.
OUTPUT_FOLDERS = {"runs", "models", "~"}
# Where an example may read a file that is not in the repository: the user's own (a bare file name in the current
# folder, or under runs/), or what scripts/fetch_*.sh fetch (.sources/).
USER_FOLDERS = {"runs", ".sources"}
# What cannot run here, whatever its inputs: it needs a model, a server, the network or a fetched corpus.
NOT_OFFLINE = {
    ("build",): "rebuilds the benchmark from its source packages (fetched)",
    ("nli-export",): "downloads a model",
    ("review", "serve"): "serves a page until stopped",
    ("occurrence", "annotate"): "serves a page until stopped",
    ("occurrence", "pilot"): "asks a judge model",
    ("occurrence", "judge"): "asks a judge model",
    ("occurrence", "screen"): "reads a chat-log corpus fetched from the internet",
    ("guard", "serve"): "serves until stopped",
}
# An exit status other than 0 that an example's command documents for the released data.
DOCUMENTED_STATUS = {("occurrence", "selftest"): ({0, 1}, "exit 1 while a goal is missed (docs/OCCURRENCE.md): "
                                                          "the released held-out set misses two")}
# The commands of which at least one example must run here: what a help test that ran nothing would miss.
MUST_RUN = {("check",), ("prompts",), ("run",), ("score",), ("placebo",), ("audit",), ("tables",), ("usage",),
            ("validity",), ("review", "sample"), ("review", "report"), ("occurrence", "selftest"),
            ("occurrence", "sample"), ("occurrence", "report"), ("report",)}
PATH_WORD = re.compile(r"[\w.~*+-][\w./*+~-]*")
FILE_SUFFIX = re.compile(r"\.(jsonl|json|toml|whl|zip|gz|csv|md|tex|html|svg|txt|sh|py)$")


def help_of(path: tuple[str, ...]) -> str:
    """What `python seam.py PATH --help` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            seam.main([*path, "--help"])
        except SystemExit:
            pass
    return out.getvalue()


def commands() -> dict[tuple[str, ...], str]:
    """Every command and its help: seam.py's tree of subcommands, and the commands a help names as 'WORDS --help'."""
    found: dict[tuple[str, ...], str] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        found[path] = help_of(path)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))

    walk(seam.build_parser(), ())
    for text in list(found.values()):
        for words in re.findall(r"((?:\b[a-z][a-z-]* )+)--help\b", text):
            words = tuple(words.split())
            for start in range(len(words)):
                path = words[start:]
                if (path[0],) in found and path not in found and found[path[:-1]] != (text := help_of(path)):
                    found[path] = text
    return found


COMMANDS = commands()


@dataclass
class Example:
    shown_by: tuple[str, ...]  # the command whose --help shows it
    line: str
    command: tuple[str, ...] | None  # the seam.py command it runs; None for a line that runs none (pip, bash)
    arguments: list[str]
    inputs: list[str]
    outputs: list[str]


def example_lines(text: str) -> tuple[list[str], list[str]]:
    """The example command lines of a help text (continuations joined), and its lines that are not whole commands
    ('... --second FILE', which cannot be checked or run)."""
    joined, current = [], ""
    for line in text.splitlines():
        current = f"{current} {line.strip()}" if current else line.strip()
        if current.endswith("\\"):
            current = current[:-1].rstrip()
            continue
        joined.append(current)
        current = ""
    examples = [line for line in joined if re.match(r"(python|bash|pip)\s", line) or "| python seam.py" in line]
    fragments = [line for line in joined if line.startswith("... ")]
    return examples, fragments


def pathlike(word: str) -> bool:
    return bool(PATH_WORD.fullmatch(word)) and ("/" in word or bool(FILE_SUFFIX.search(word)))


def parse(shown_by: tuple[str, ...], line: str) -> Example:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = list(lexer)
    command, arguments, inputs, outputs = None, [], [], []
    segments, current = [], []
    for word in words:
        if word in ("|", "||", "&&", ";", "&"):
            segments.append(current)
            current = []
        else:
            current.append(word)
    segments.append(current)
    for segment in segments:
        rest, redirect = [], None
        for word in segment:  # redirections: `> FILE` writes, `< FILE` reads
            if word in (">", ">>", "<"):
                redirect = word
            elif redirect is not None:
                (inputs if redirect == "<" else outputs).append(word)
                redirect = None
            else:
                rest.append(word)
        if rest[:2] == ["python", "seam.py"]:
            words_after = rest[2:]
            path: tuple[str, ...] = ()
            while words_after and (*path, words_after[0]) in COMMANDS:
                path = (*path, words_after.pop(0))
            command, arguments = path, words_after
            writers = OUTPUT_OPTIONS | MORE_OUTPUTS.get(path, set())
            option = None
            for word in words_after:
                if word.startswith("-"):
                    option, equals, value = word.partition("=")
                    if equals:  # --out=FILE
                        if option in writers:
                            outputs.append(value)
                        elif pathlike(value):
                            inputs.append(value)
                        option = None
                    continue
                if option in writers:
                    outputs.append(word)
                    option = None  # --out takes one value: what follows is a positional argument
                elif pathlike(word):
                    inputs.append(word)
        else:  # pip, bash, printf, head: only the files they read
            inputs += [word for word in rest[1:] if pathlike(word)]
    return Example(shown_by, line, command, arguments, inputs, outputs)


def examples_of(path: tuple[str, ...]) -> list[Example]:
    return [parse(path, line) for line in example_lines(COMMANDS[path])[0]]


def output_problem(path: str) -> str | None:
    """Why an example may not write `path`, or None."""
    if Path(path).is_absolute():
        return f"{path}: an absolute path; write into a folder of the user's (runs/) or the current one"
    resolved = (ROOT / path).resolve()
    if resolved == (ROOT / "data").resolve() or resolved.is_relative_to((ROOT / "data").resolve()):
        return f"{path}: writes into data/, the release"
    parts = Path(path).parts
    if len(parts) > 1 and parts[0] not in OUTPUT_FOLDERS:
        return f"{path}: writes into {parts[0]}/, not a folder of the user's ({', '.join(sorted(OUTPUT_FOLDERS))}/)"
    return None


def input_problem(path: str) -> str | None:
    """Why an example may not read `path`, or None: a file of the repository must exist."""
    if glob.glob(str(ROOT / path)):
        return None
    parts = Path(path).parts
    if len(parts) == 1 or parts[0] in USER_FOLDERS:
        return None  # the user's own file (or one an earlier example makes), or a fetched one
    return f"{path}: no such file in the repository"


HELPS = [path for path in COMMANDS if path]  # seam.py's own help lists the commands and says where examples are


@pytest.mark.parametrize("path", HELPS, ids=lambda path: " ".join(path))
def test_every_help_has_whole_seam_commands_as_examples(path):
    lines, fragments = example_lines(COMMANDS[path])
    assert any(example.command is not None for example in examples_of(path)), f"seam.py {' '.join(path)} --help: " \
                                                                                "no example"
    assert not fragments, f"seam.py {' '.join(path)} --help: examples that are not whole commands: {fragments}"
    for example in examples_of(path):
        if example.command is not None:
            assert example.command, f"{example.line}: runs no command of seam.py"


@pytest.mark.parametrize("path", HELPS, ids=lambda path: " ".join(path))
def test_no_example_writes_into_data_or_outside_a_folder_of_the_users(path):
    problems = [f"{example.line}\n    {problem}" for example in examples_of(path) for out in example.outputs
                if (problem := output_problem(out))]
    assert not problems, f"seam.py {' '.join(path)} --help:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", HELPS, ids=lambda path: " ".join(path))
def test_every_file_of_the_repository_an_example_reads_exists(path):
    problems = [f"{example.line}\n    {problem}" for example in examples_of(path) for name in example.inputs
                if (problem := input_problem(name))]
    assert not problems, f"seam.py {' '.join(path)} --help:\n" + "\n".join(problems)


def test_the_parser_reads_the_examples_as_a_user_would():
    example = parse(("x",), "python seam.py review report a.jsonl --labels data/labels/m.jsonl --out runs/r  # c")
    assert (example.command, example.inputs, example.outputs) == (("review", "report"), ["a.jsonl",
                                                                  "data/labels/m.jsonl"], ["runs/r"])
    example = parse(("x",), "python seam.py prompts --only clean > part.jsonl")
    assert (example.command, example.inputs, example.outputs) == (("prompts",), [], ["part.jsonl"])
    example = parse(("x",), "printf 'a\\nb' | python seam.py guard --text --close '</document>'")
    assert (example.command, example.inputs, example.outputs) == (("guard",), [], [])
    if "guard serve --help" in COMMANDS[("guard",)]:  # named by guard's help, not in the tree of subcommands
        assert ("guard", "serve") in COMMANDS
    assert output_problem("data/tables") and output_problem("/tmp/t") and output_problem("docs/x")
    assert not output_problem("runs/t") and not output_problem("part.jsonl") and not output_problem("~/j.jsonl")
    assert input_problem("models/gpt-x.toml") and input_problem("data/traces/gpt-x.jsonl")
    assert not input_problem("data/traces/*.jsonl") and not input_problem("my-model.toml")


def not_run(example: Example, here: Path) -> str | None:
    """Why an example cannot run here, offline, or None."""
    if example.command is None:
        return "runs no command of seam.py"
    if example.command in NOT_OFFLINE:
        return NOT_OFFLINE[example.command]
    if example.command == ("run",) and (not {"--dry-run", "--estimate"} & set(example.arguments)
                                        or "--check-connection" in example.arguments):
        return "asks a model"
    if any(output_problem(name) for name in example.outputs):
        return "writes where no example may (the tests above say where)"
    if example.command == ("validity",) and "--execute" in example.arguments:
        return "executes model output (its sandbox: tests/test_validity_sandbox.py)"
    missing = [name for name in example.inputs if not glob.glob(str(here / name))]
    if missing:
        return f"reads {', '.join(missing)}: the user's own, which no earlier example made here"
    return None


def _digest(folder: Path) -> dict[str, tuple[str, int]]:
    """Each file's SHA-256 and modification time: a file rewritten with the same bytes was still written."""
    return {str(path.relative_to(folder)): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _remove_new(folder: Path, present: set[Path]) -> None:
    """Remove what was made under `folder` since `present` was listed (deepest first)."""
    for path in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path not in present:
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()


def test_every_example_that_can_run_offline_runs_and_exits_0(tmp_path):
    """In a copy of the repository, each help's examples in the order it shows them (a review sampled, then
    reported), from the same start (what one help's examples made is removed before the next help's run); the
    copy's model configs point at a closed port, so that no example can reach a server even by mistake."""
    here = copy_release(tmp_path / "repo")
    for config in [*here.glob("data/models/*.toml"), *here.glob("data/occurrence/judges/*.toml")]:
        text = config.read_text(encoding="utf-8")
        config.write_text(re.sub(r'(?m)^base_url = ".*"$', 'base_url = "http://127.0.0.1:9/v1"', text),
                          encoding="utf-8")
    before = _digest(here / "data")
    bin_dir = tmp_path / "bin"  # `python` is the Python running the tests
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    (bin_dir / "python").chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", HOME=str(home),
               PYTHONDONTWRITEBYTECODE="1")
    present = set(here.rglob("*"))
    ran, skipped, failures = set(), [], []
    for path in COMMANDS:
        for example in examples_of(path):
            reason = not_run(example, here)
            if reason is not None:
                skipped.append(f"{example.line}: {reason}")
                continue
            try:
                done = subprocess.run(["bash", "-c", f"set -o pipefail; {example.line}"], cwd=here, env=env,
                                      stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                failures.append(f"{example.line}\n    still running after {TIMEOUT_S} s")
                continue
            allowed = DOCUMENTED_STATUS.get(example.command, ({0}, ""))[0]
            if done.returncode not in allowed:
                failures.append(f"{example.line}\n    exit {done.returncode}: {done.stderr.strip()[-600:]}")
            ran.add(example.command)
        _remove_new(here, present)
    print("not run here:\n  " + "\n  ".join(skipped))
    assert not failures, "\n".join(failures)
    assert MUST_RUN <= ran, f"no example of {sorted(MUST_RUN - ran)} ran"
    assert _digest(here / "data") == before, "an example wrote into data/"
