#!/usr/bin/env python3
"""Entailment throughput: the scorer's onnxruntime path versus plain transformers/torch.

The real weights cannot be downloaded here, so this builds a randomly
initialised model with microsoft/deberta-large-mnli's shape (24 layers,
hidden 1024, 16 heads, vocabulary 50,265; ~1.6 GB in float32), exports it with
the same code as `seam.py nli-export`, opens it with the scorer's loader
(checksum included) and measures pairs per second on ~40-token pairs at batch
1 and 8, median of repeated interleaved passes:
  scorer        scorer.nli.logits: onnxruntime, basic graph optimisations (the scorer's setting)
  ort-all       the same session with all graph optimisations, for comparison
  torch         the transformers model called directly under torch.inference_mode,
                what a user would otherwise run
All at the same thread count. It also checks, on this full-size shape, that the
scorer's logits are bitwise identical across 1 and 2 threads, alone and in a
padded batch. Needs torch and transformers (development only: requirements-export.txt). Not a test.

    python perf/scorer_nli.py [--shape large|base|small] [--pairs 16] [--repeat 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import jsonl  # noqa: E402
from scorer import export, model_dir, nli  # noqa: E402

SHAPES = {
    "large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096),
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
    "small": dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512),
}
FIXTURE = ROOT / "tests" / "fixtures" / "tiny-deberta"
WORDS = ("the report goes to the whole team after lunch and the committee approved a new budget for "
         "the river library while Elizabeth walked through muddy fields to Netherfield").split()


def make_pairs(tokenizer, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """Sentence pairs of about 40 tokens each ([CLS] A [SEP] B [SEP])."""
    pairs = []
    for _ in range(100 * count):
        premise = " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 15))).capitalize() + "."
        hypothesis = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 5))).capitalize() + "."
        if 36 <= len(tokenizer.encode(premise, hypothesis).ids) <= 44:
            pairs.append((premise, hypothesis))
            if len(pairs) == count:
                return pairs
    raise SystemExit("could not draw pairs of 36-44 tokens; check the tokenizer")


def rates(runs: dict, pairs, repeat: int) -> dict:
    """Median pairs per second of each named `run(batch_of_pairs)` at batch 1 and 8.

    The runs are interleaved (one pass of each, then again), so a change of
    load on the shared machine hits them all alike rather than one of them.
    """
    passes = {(name, batch): [] for name in runs for batch in (1, 8)}
    for name, batch in passes:
        runs[name](pairs[:batch])  # warm-up
    for _ in range(repeat):
        for (name, batch), times in passes.items():
            start = time.perf_counter()
            for i in range(0, len(pairs), batch):
                runs[name](pairs[i: i + batch])
            times.append(time.perf_counter() - start)
    return {key: len(pairs) / statistics.median(times) for key, times in passes.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="large")
    parser.add_argument("--pairs", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="export into this directory and keep it; reuse it if it "
                        "already holds an export (weights come from a fixed seed, so it matches the same shape)")
    args = parser.parse_args()

    import numpy as np
    import onnxruntime as ort
    try:
        import torch
        import transformers
        from transformers import DebertaConfig, DebertaForSequenceClassification
    except ImportError as exc:  # development only: not in requirements.txt or requirements-dev.txt
        print(f"perf/scorer_nli.py needs torch and transformers ({exc}): "
              "python -m pip install -r requirements-export.txt", file=sys.stderr)
        return 2

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    tokenizer = export.pair_tokenizer((FIXTURE / "tokenizer.json").read_text(encoding="utf-8"))
    labels = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}
    config = DebertaConfig(
        vocab_size=50265, max_position_embeddings=512, type_vocab_size=0, relative_attention=True,
        max_relative_positions=-1, pos_att_type=["c2p", "p2c"], position_biased_input=False,
        layer_norm_eps=1e-7, pad_token_id=0, num_labels=3, id2label=labels,
        label2id={v: k for k, v in labels.items()}, **SHAPES[args.shape])
    model = DebertaForSequenceClassification(config).eval()
    pairs = make_pairs(tokenizer, args.pairs, random.Random(0))
    lengths = [len(tokenizer.encode(p, h).ids) for p, h in pairs]
    print(f"shape {args.shape}: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters; "
          f"{len(pairs)} pairs of {min(lengths)}-{max(lengths)} tokens; threads {args.threads}; "
          f"torch {torch.__version__}, transformers {transformers.__version__}, onnxruntime {ort.__version__}")

    work = args.keep or Path(tempfile.mkdtemp(prefix="seam-perf-nli-"))
    reused = args.keep is not None and (work / "MANIFEST.json").exists()
    try:
        start = time.perf_counter()
        encoded = [tokenizer.encode(p, h).ids for p, h in pairs[:2]]
        width = max(map(len, encoded))
        ids = torch.zeros((2, width), dtype=torch.long)
        mask = torch.zeros((2, width), dtype=torch.long)
        for row, seq in enumerate(encoded):
            ids[row, : len(seq)] = torch.tensor(seq)
            mask[row, : len(seq)] = 1
        if not reused:
            work.mkdir(parents=True, exist_ok=True)
            export.export_onnx(model, work / "model.onnx", ids, mask)
            tokenizer.save(str(work / "tokenizer.json"))
            jsonl.write(work / "labels.json", [{"id2label": {str(k): v for k, v in labels.items()},
                                                "max_length": 512, "pad_token_id": 0}])
            model_dir.write_manifest(work)
            size = (work / "model.onnx").stat().st_size / 1e9
            print(f"export: {time.perf_counter() - start:.0f} s, model.onnx {size:.2f} GB")

        start = time.perf_counter()
        session = nli.load(work, threads=args.threads)
        print(f"load with checksum check: {time.perf_counter() - start:.1f} s")

        def scorer_run(batch):
            return nli.logits(session, batch, batch_size=len(batch))

        options = nli.session_options(args.threads)
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        full = nli.NliSession(session.info, session.tokenizer,
                              ort.InferenceSession(str(work / "model.onnx"), options,
                                                   providers=["CPUExecutionProvider"]), args.threads)

        def ort_all_run(batch):
            return nli.logits(full, batch, batch_size=len(batch))

        def torch_run(batch):
            enc = [tokenizer.encode(p, h).ids for p, h in batch]
            width = max(map(len, enc))
            ids = torch.zeros((len(enc), width), dtype=torch.long)
            mask = torch.zeros_like(ids)
            for row, seq in enumerate(enc):
                ids[row, : len(seq)] = torch.tensor(seq)
                mask[row, : len(seq)] = 1
            with torch.inference_mode():
                return model(input_ids=ids, attention_mask=mask).logits.numpy()

        results = rates({"scorer": scorer_run, "ort-all": ort_all_run, "torch": torch_run}, pairs, args.repeat)
        for (name, batch), value in results.items():
            print(f"  {name:8s} batch {batch}: {value:.2f} pairs/s")
        for batch in (1, 8):
            print(f"batch {batch}: scorer / torch = {results[('scorer', batch)] / results[('torch', batch)]:.2f}x, "
                  f"ort-all / scorer = {results[('ort-all', batch)] / results[('scorer', batch)]:.2f}x")

        alone = np.stack([scorer_run([p])[0] for p in pairs])
        reference = torch_run(pairs)
        print(f"max |scorer - torch| logit difference: {np.abs(alone - reference).max():.2e}")
        batched = nli.logits(session, pairs, batch_size=8)
        one = nli.load(work, threads=1)
        single = nli.logits(one, pairs, batch_size=8)
        print(f"bitwise: alone == in padded batch: {alone.tobytes() == batched.tobytes()}; "
              f"{args.threads} threads == 1 thread: {batched.tobytes() == single.tobytes()}")
        full_alone = np.stack([ort_all_run([p])[0] for p in pairs])
        full_batched = nli.logits(full, pairs, batch_size=8)
        print(f"ort-all bitwise: alone == in padded batch: {full_alone.tobytes() == full_batched.tobytes()}; "
              f"== scorer setting: {full_alone.tobytes() == alone.tobytes()}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    from common.pipes import run_main

    sys.exit(run_main(main))
