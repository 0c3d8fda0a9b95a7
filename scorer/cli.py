"""The scorer's subcommands: score, placebo, audit, nli-export.

Heavy libraries (onnxruntime, tokenizers, numpy; torch and transformers for
nli-export) are imported inside the commands, so `seam.py --help` stays instant.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from common import files, jsonl, outputs, tempfiles
from common.argtypes import condition_file, positive_int
from common.errors import UserError
from common.records import Label

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CACHE = ROOT / "data" / "cache" / "nli-cache.sqlite"


def add_commands(subparsers) -> None:
    raw = argparse.RawDescriptionHelpFormatter

    p = subparsers.add_parser(
        "score", formatter_class=raw,
        help="label each treatment output: absorbed or not, by which tier, with the evidence",
        description="Score traces: extract the edited text, compare with the same model's output under the "
                    "treatment's control (clean, or a condition file's own, such as a later turn's), "
                    "run the witness, content and (prose, when the model file is present) entailment tiers.",
        epilog="example:\n"
               "  python seam.py score data/traces/smollm2-135m.jsonl --out runs/labels/smollm2-135m.jsonl\n"
               "  python seam.py score data/traces/*.jsonl --out-dir runs/labels   # every released trace set\n"
               "  # your own model's traces (seam.py run ... --out runs/my-model.jsonl)\n"
               "  python seam.py score runs/my-model.jsonl --out runs/labels/my-model.jsonl\n"
               "  # a condition file's traces, paired with the same model's clean outputs in its built-in traces\n"
               "  python seam.py score data/studies/example/traces/qwen2.5-coder-0.5b.jsonl \\\n"
               "      --conditions data/conditions/example.toml --clean-traces "
               "data/traces/qwen2.5-coder-0.5b.jsonl \\\n"
               "      --out runs/example/labels/qwen2.5-coder-0.5b.jsonl\n\n"
               "Without the entailment model (models/deberta-large-mnli, $SEAM_NLI_MODEL or --model-dir)\n"
               "the labels say tiers_not_run: [\"entailment\"] and prose rates are lower bounds.")
    p.add_argument("traces", nargs="+", type=Path, help="trace files (JSON Lines), one model each")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, help="labels file, when scoring one trace file")
    where.add_argument("--out-dir", type=Path, help="directory for <model>.jsonl, one per trace file")
    p.add_argument("--workers", metavar="N", type=positive_int, default=None,
                   help="processes scoring trace files side by side (default: one per available CPU, at most one "
                        "per trace file); the labels and messages do not depend on it. With the entailment tier "
                        "running, the files are scored one after another in this process")
    _add_common(p)
    p.set_defaults(func=run_score)

    p = subparsers.add_parser(
        "placebo", formatter_class=raw,
        help="check each tier's placebo positive rate (should be zero)",
        description="Score every usable treatment output against the comment of another cluster "
                    "(same genre and condition) and report how often each tier fires.",
        epilog="example:\n  python seam.py placebo data/traces/smollm2-135m.jsonl\n"
               "  python seam.py placebo data/traces/smollm2-135m.jsonl --out runs/placebo/smollm2-135m.jsonl\n\n"
               "Keep --out outside a folder of labels (runs/labels): 'seam.py tables FOLDER' reads every *.jsonl\n"
               "there as labels.")
    p.add_argument("traces", nargs="+", type=Path, help="trace files (JSON Lines), one model each")
    p.add_argument("--out", type=Path, help="also write the per-row placebo results (one trace file only)")
    _add_common(p)
    p.set_defaults(func=run_placebo)

    p = subparsers.add_parser(
        "audit", formatter_class=raw,
        help="rescore the traces and check the labels file is reproduced byte for byte",
        description="Rescore (recomputing entailment, unless --use-cache) and compare with LABELS; "
                    "prints both SHA-256 digests. Exit 0 when identical, 1 when not.",
        epilog="example:\n"
               "  python seam.py audit data/traces/smollm2-135m.jsonl --labels data/labels/smollm2-135m.jsonl\n"
               "  python seam.py audit data/traces/qwen2.5-coder-1.5b.jsonl --labels "
               "data/labels/qwen2.5-coder-1.5b.jsonl "
               "\\\n      --threads 1   # one thread for the entailment model, where it runs")
    p.add_argument("traces", type=Path, help="the trace file the labels were made from")
    p.add_argument("--labels", type=Path, required=True, help="the labels file to check")
    p.add_argument("--use-cache", action="store_true",
                   help="reuse cached entailment logits instead of rerunning the model")
    _add_common(p, cache=False)
    p.set_defaults(func=run_audit)

    p = subparsers.add_parser(
        "nli-export", formatter_class=raw,
        help="one-time: export the entailment model to ONNX (needs torch, transformers, internet)",
        description="Download a DeBERTa v1 MNLI model, export it to ONNX, rebuild its tokenizer with the "
                    "[CLS] A [SEP] B [SEP] pair template, check onnxruntime against torch, and write "
                    "model.onnx, tokenizer.json, labels.json and MANIFEST.json (SHA-256 of each).",
        epilog="example:\n  pip install -r requirements-export.txt\n"
               "  python seam.py nli-export --out models/deberta-large-mnli\n\n"
               "The scorer only needs the written directory; copy it to machines without internet.")
    p.add_argument("--model", default=None, help="Hugging Face model id (default microsoft/deberta-large-mnli)")
    p.add_argument("--revision", default=None, help="model revision (commit) to download")
    p.add_argument("--out", type=Path, default=None, help="model directory to write "
                   "(default models/deberta-large-mnli)")
    p.set_defaults(func=run_nli_export)


def _add_common(p: argparse.ArgumentParser, cache: bool = True) -> None:
    p.add_argument("--requests", type=Path, default=None,
                   help="request rows (JSON Lines); default: the clusters of data/benchmark")
    p.add_argument("--conditions", metavar="FILE", type=condition_file, default=None,
                   help="a condition file (TOML) defining the traces' other conditions and their markers "
                        "(docs/CONDITIONS.md)")
    p.add_argument("--clean-traces", metavar="TRACES", nargs="+", type=Path, default=None,
                   help="trace files (or folders of them) holding the same models' clean outputs, for trace "
                        "files without them (a condition file's traces kept apart); a condition file's own "
                        "control (later-control) is read from the trace file itself")
    p.add_argument("--model-dir", type=Path, default=None,
                   help="entailment model directory (default $SEAM_NLI_MODEL or models/deberta-large-mnli)")
    p.add_argument("--no-nli", action="store_true", help="do not run the entailment tier (reported as not run)")
    p.add_argument("--require-nli", action="store_true",
                   help="fail (exit 2, nothing written) when the entailment tier cannot run, so that a pipeline "
                        "never takes lexical-only results for complete ones")
    p.add_argument("--threads", type=positive_int, default=None, help="onnxruntime threads (default 2; "
                   "results do not depend on it)")
    p.add_argument("--batch-size", type=positive_int, default=None,
                   help="entailment pairs per batch (default 8)")
    if cache:
        p.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                       help=f"entailment cache file (default {DEFAULT_CACHE.relative_to(ROOT)})")
        p.add_argument("--no-cache", action="store_true", help="keep the entailment cache in memory only")


def _open_entailer(args, cache_path: Path | None):
    """The entailment tier for this command, or None (with a note on stderr) when it cannot run."""
    from scorer import model_dir

    required = args.require_nli
    if args.no_nli:
        if required:
            raise UserError("--require-nli and --no-nli contradict each other: give one")
        print("entailment tier not run (--no-nli): prose rates are lower bounds", file=sys.stderr)
        return None
    directory = model_dir.locate(args.model_dir)
    if directory is None:
        if required:
            raise UserError(f"--require-nli: the entailment tier cannot run: no model at "
                            f"{model_dir.DEFAULT_MODEL_DIR.relative_to(ROOT)} (or ${model_dir.ENV_VAR}, --model-dir); "
                            "nothing was written. See docs/SCORER.md to obtain the model")
        print(f"entailment tier not run: no model at {model_dir.DEFAULT_MODEL_DIR.relative_to(ROOT)} "
              f"(or ${model_dir.ENV_VAR}, --model-dir); prose rates are lower bounds. "
              "See docs/SCORER.md to obtain the model.", file=sys.stderr)
        return None
    from scorer import nli
    from scorer.entailment import ModelEntailer
    from scorer.nli_cache import NliCache

    def progress(done: int, total: int) -> None:
        print(f"entailment: {done}/{total} new pairs", file=sys.stderr)

    # The model itself is checked and opened only when the cache lacks a pair (scorer/entailment.py).
    return ModelEntailer(directory, NliCache(cache_path), threads=args.threads or nli.DEFAULT_THREADS,
                         batch_size=args.batch_size or nli.DEFAULT_BATCH_SIZE, progress=progress)


def _inputs(args, paths: list[Path]):
    """The conditions, the items and one `TraceSet` per trace file (with borrowed clean rows, given
    --clean-traces), for score, placebo and audit alike."""
    from benchmark import conditions
    from scorer.inputs import read_items, read_traces, with_clean_rows

    defined = conditions.load(args.conditions)
    items = read_items(args.requests, defined)
    trace_sets = [read_traces(path, defined) for path in paths]
    if args.clean_traces is not None:
        others = [read_traces(path, defined) for path in jsonl.files_named(args.clean_traces, "trace")]
        trace_sets = [with_clean_rows(traces, others) for traces in trace_sets]
    return defined, items, trace_sets


def run_score(args) -> int:
    """Score; lexical-only runs without the cycle collector (common/nogc.py), which was measured only there:
    with the entailment model running for hours, its libraries' cycles are collected as usual."""
    from common import nogc

    if not _lexical_only(args):
        return _run_score(args)
    with nogc.paused():
        return _run_score(args)


def _run_score(args) -> int:
    from scorer.parallel import worker_count
    from scorer.score import labels_bytes, score

    if args.out is not None and len(args.traces) != 1:
        raise UserError(f"--out names one labels file but {len(args.traces)} trace files were given; "
                        "use --out-dir")
    _refuse_directory(args.out, "--out names the labels file; use --out-dir for a directory")
    if args.out_dir is not None and args.out_dir.exists() and not args.out_dir.is_dir():
        raise UserError(f"{args.out_dir}: is a file; --out-dir names a directory (one <model>.jsonl per "
                        "trace file); use --out for a single labels file")
    if args.out is not None:  # known before any input is read: refused at once (--out-dir's files, in `_outs`)
        _refuse_own_inputs(args, [args.out], "score")
    else:
        outputs.resolved(args.out_dir)  # a link loop, refused before any work
    workers = worker_count(args.workers, len(args.traces))
    if workers > 1 and _lexical_only(args):
        return _score_in_workers(args, workers)
    defined, items, trace_sets = _inputs(args, args.traces)
    outs = _outs(args, [(traces.path, traces.model) for traces in trace_sets])
    entailer = _open_entailer(args, None if args.no_cache else args.cache)
    written: dict[Path, bytes] = {}
    for traces, out in zip(trace_sets, outs, strict=True):
        result = score(traces, items, entailer, defined)
        written[out] = labels_bytes(result.labels)
        _summary(traces.path, traces.model, traces.clean_row_count, result.stats, entailer)
    return _write_labels(written, entailer)


def _score_in_workers(args, workers: int) -> int:
    """`run_score` of several trace files, lexical tiers only, in `workers` processes (scorer/parallel.py): the
    same labels, messages and errors, in the same order."""
    from benchmark import conditions
    from scorer import parallel
    from scorer.inputs import read_items

    defined = conditions.load(args.conditions)
    items = read_items(args.requests, defined)
    outcomes = parallel.score_files(args.traces, defined, items, args.clean_traces, workers)
    failure = parallel.first_failure(outcomes, before=parallel.SCORE)
    if failure is not None:
        raise UserError(failure)
    outs = _outs(args, [(outcome.path, outcome.model) for outcome in outcomes])
    entailer = _open_entailer(args, None)  # None (the caller checked): prints why the tier does not run
    written: dict[Path, bytes] = {}
    for outcome, out in zip(outcomes, outs, strict=True):
        if isinstance(outcome, parallel.Failed):
            raise UserError(outcome.message)
        written[out] = outcome.data
        _summary(outcome.path, outcome.model, outcome.clean_rows, outcome.stats, entailer)
    return _write_labels(written, entailer)


def _lexical_only(args) -> bool:
    """Whether this score run will not run the entailment tier (and says so, rather than failing)."""
    from scorer import model_dir

    if args.require_nli:
        return False
    if args.no_nli:
        return True
    try:
        return model_dir.locate(args.model_dir) is None
    except UserError:  # an explicit model directory that is missing: the one-process path reports it in its place
        return False


def _outs(args, models: list[tuple[Path, str]]) -> list[Path]:
    """The labels file of each (trace file, model); two trace files of one model are refused, and so is an input
    that any of them would overwrite."""
    outs = [args.out] if args.out is not None else [labels_file(args.out_dir, model) for _, model in models]
    for (path, model), out in zip(models, outs, strict=True):
        if outs.count(out) > 1:
            raise UserError(f"{path}: model {model!r} would write {out}, as another trace file "
                            "does; score each model once")
    _refuse_own_inputs(args, outs, "score")
    return outs


def _refuse_own_inputs(args, outs: list[Path], command: str) -> None:
    """Refuse, before anything is written, every file this command reads (the traces, --clean-traces, --requests,
    --conditions) that is, links to, or is a hard link of one it writes (`common.outputs`): `seam.py score
    sdir/my-model.jsonl --out-dir sdir` would replace the trace with its labels."""
    read = [(Path(path), "trace file") for path in args.traces]
    if args.clean_traces is not None:
        read += [(path, "clean trace file") for path in jsonl.files_named(args.clean_traces, "trace")]
    read += [(Path(path), what) for path, what in ((args.requests, "requests file"),
                                                   (args.conditions, "condition file")) if path is not None]
    option = "--out-dir" if getattr(args, "out_dir", None) is not None else "--out"
    hint = ("move it out of the --out-dir folder, or choose another --out-dir" if option == "--out-dir"
            else "choose another --out")
    outputs.refuse_overwritten(read, outs, command=command, hint=hint)
    used = not getattr(args, "no_cache", True) and not getattr(args, "no_nli", False)
    cache = getattr(args, "cache", None) if used else None
    if cache is not None:  # the entailment cache is a sqlite file the scorer writes too (with the entailment tier)
        hint = "choose another --cache (the entailment cache, a file of its own), or --no-cache"
        outputs.refuse_overwritten(read, [cache], command=command, hint=hint)
        outputs.refuse_overwritten([(cache, "entailment cache")], outs, command=command, hint=hint)


def _summary(path: Path, model: str, clean_rows: int, s, entailer) -> None:
    """The lines on stderr that sum up one scored trace file."""
    tiers = ", ".join(f"{tier} {count}" for tier, count in s.absorbed.items())
    print(f"{path}: {s.rows} treatment rows of {model}, {s.usable} usable; absorbed by {tiers}", file=sys.stderr)
    if s.not_run:
        print(f"  entailment not run on {s.not_run} undecided prose rows (lower bound)", file=sys.stderr)
    if entailer is not None:
        print(f"  entailment: {s.unique_pairs} distinct pairs needed", file=sys.stderr)
    if s.rows and clean_rows == 0 and s.usable == 0:  # likely a condition file's traces, --clean-traces forgotten
        # (a later turn with a fixed reply pairs with its own control, and needs no clean row)
        print("  no clean rows to pair with: every row is excluded; a condition file's traces are paired with "
              "the model's clean outputs in its built-in trace file (--clean-traces TRACES, docs/CONDITIONS.md)",
              file=sys.stderr)


def _write_labels(written: dict[Path, bytes], entailer) -> int:
    for out in written:  # a run killed while writing these left its temporaries: gone with this write
        for stale in tempfiles.remove_stale(out):
            print(f"removed {stale}, left by a run killed while it wrote {out.name}", file=sys.stderr)
    files.write_files(written, "labels")  # every labels file, or (a full disk) none
    for out, data in written.items():
        print(f"wrote {out} (sha256 {hashlib.sha256(data).hexdigest()})")
    if entailer is not None:
        print(f"entailment cache: {entailer.cache_hits} hits, {entailer.computed} computed", file=sys.stderr)
    return 0


def run_placebo(args) -> int:
    from scorer.placebo import placebo

    if args.out is not None and len(args.traces) != 1:
        raise UserError("--out writes the rows of one trace file; give one trace file")
    _refuse_directory(args.out, "--out names the file for the placebo rows")
    if args.out is not None:
        _refuse_own_inputs(args, [args.out], "placebo")
    defined, items, trace_sets = _inputs(args, args.traces)
    entailer = _open_entailer(args, None if args.no_cache else args.cache)
    print("model\ttier\tpositives\trows\trate\tnot_run")
    for traces in trace_sets:
        result = placebo(traces, items, entailer, defined)
        for r in result.rates:
            rate = "not run" if r.rate is None and r.not_run else ("-" if r.rate is None else f"{r.rate:.4f}")
            print(f"{result.model}\t{r.tier}\t{r.positives}\t{r.rows}\t{rate}\t{r.not_run}")
        if args.out is not None:
            jsonl.write(args.out, (row.to_row() for row in result.rows), "placebo rows")
    return 0


def run_audit(args) -> int:
    from scorer.audit import audit

    defined, items, (traces,) = _inputs(args, [args.traces])
    entailer = _open_entailer(args, DEFAULT_CACHE if args.use_cache else None)
    result = audit(args.labels, traces, items, entailer, defined)
    print(f"labels   {args.labels}: sha256 {result.labels_sha256}")
    print(f"rescored {result.rows} rows:  sha256 {result.rescored_sha256}")
    if result.identical:
        print("identical: yes")
        return 0
    print(f"identical: no (first difference at line {result.first_difference})")
    made_with = _models_in(args.labels)
    ran_with = entailer.sha256 if entailer is not None else None
    if made_with and ran_with not in made_with:
        print(f"note: the labels were made with entailment model {', '.join(sorted(made_with))}; "
              f"this audit ran with {ran_with or 'no entailment model'}")
    return 1


def run_nli_export(args) -> int:
    from scorer import export, model_dir

    return export.run(args.model or export.DEFAULT_MODEL, args.out or model_dir.DEFAULT_MODEL_DIR, args.revision)


def _models_in(labels_path: Path) -> set[str]:
    """The entailment models named in a labels file, each row read as a `Label` (a malformed one is a
    UserError naming file, line and field). Lines that are not JSON objects (or not UTF-8) are skipped,
    since the audit has already reported the first line that differs."""
    models = set()
    for number, line in enumerate(labels_path.read_bytes().split(b"\n"), start=1):
        try:
            row = jsonl.parse(line)
        except jsonl.BadJson:
            continue
        if isinstance(row, dict):
            sha = Label.from_row(row, f"{labels_path}:{number}").nli_model_sha256
            if sha:
                models.add(sha)
    return models


def _refuse_directory(out: Path | None, hint: str) -> None:
    """Refuse an output path that is a directory before any work (the write would fail at the end)."""
    if out is not None and out.is_dir():
        raise UserError(f"{out}: is a directory; {hint}")


def labels_file(out_dir: Path, model: str) -> Path:
    """Where `--out-dir` puts a model's labels: named here once, for `compare` to know before it scores."""
    return out_dir / f"{_safe(model)}.jsonl"


def _safe(model: str) -> str:
    """A model name as a file name: path separators and other odd characters become '_'."""
    return "".join(c if c.isalnum() or c in "-_.+" else "_" for c in model)
