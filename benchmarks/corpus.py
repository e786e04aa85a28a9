"""Assemble the benchmark corpus: real training code from pinned sdists plus realistic test-data JSON.

The packages are downloaded with :mod:`corpus.fetch` (pinned versions, sha256 checked, unpacked
safely, cached outside the repository); nothing here runs or imports them. They are hard-linked
(copied where links fail) into one tree, ``pkgs/<name>/...``, beside test data shaped as real
training repositories carry it: Megatron-LM-style golden values of functional tests
(``{"lm loss": {"start_step": 1, "values": {"1": 10.8, ...}}}``), SFT datasets (JSON arrays of
records) and a few DeepSpeed configs, generated deterministically. About the size of Megatron-LM
(20 MB of Python, 30 MB of JSON).

    python -m benchmarks.corpus --dest /work/corpus-cache --out /tmp/bench-tree [--copies 2] [--with-transformers]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from corpus.fetch import DEFAULT_DEST, fetch  # noqa: E402

#: about 20 MB of Python, as Megatron-LM
PINNED = (
    "megatron-core==0.19.2", "deepspeed==0.15.1", "trl==0.12.0", "accelerate==1.1.1", "peft==0.13.2",
    "lightning==2.4.0", "llamafactory==0.9.1",
)
LARGE = ("transformers==4.46.3",)
_METRICS = ("lm loss", "num-zeros", "mem-allocated-bytes", "mem-max-allocated-bytes", "iteration-time")


def link_tree(src: Path, dst: Path) -> None:
    for dirpath, _dirs, files in os.walk(src):
        rel = Path(dirpath).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            if f == ".complete":
                continue
            s, d = Path(dirpath) / f, dst / rel / f
            try:
                os.link(s, d)
            except OSError:
                shutil.copy2(s, d)


def _golden(rng: random.Random, steps: int) -> dict[str, object]:
    out: dict[str, object] = {}
    for m in _METRICS:
        base = {"lm loss": 10.8, "num-zeros": 1.5e7, "iteration-time": 0.9}.get(m, 4.2e10)
        vals: dict[str, object] = {}
        for i in range(1, steps + 1):
            v = base * (1 - 0.5 * i / steps) * (1 + rng.uniform(-0.01, 0.01))
            vals[str(i)] = round(v, 5) if base < 100 else int(v)
        out[m] = {"start_step": 1, "end_step": steps, "step_interval": 1, "values": vals}
    return out


def _dataset(rng: random.Random, rows: int) -> list[dict[str, str]]:
    words = "the model gradient batch token sequence attention layer optimizer schedule learning rate loss data".split()
    return [
        {
            "instruction": " ".join(rng.choice(words) for _ in range(rng.randint(8, 30))),
            "input": "",
            "output": " ".join(rng.choice(words) for _ in range(rng.randint(40, 200))),
        }
        for _ in range(rows)
    ]


def write_test_data(out: Path, seed: int = 0) -> int:
    """Realistic data JSON and a few configs under ``out``; returns the bytes written."""
    rng = random.Random(seed)
    total = 0

    def put(rel: str, obj: object, indent: int | None = 4) -> None:
        nonlocal total
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(obj, indent=indent)
        p.write_text(text)
        total += len(text)

    for i in range(700):  # functional-test golden values: most are 50-100 steps, a few long runs
        steps = rng.choice((50, 50, 100, 100, 100, 200)) if i % 50 else 2000
        case = f"tests/functional_tests/test_cases/gpt/gpt3_mcore_tp{1 << (i % 3)}_pp{1 << (i % 2)}_case{i:03d}"
        put(f"{case}/golden_values_dev_dgx_h100.json", _golden(rng, steps))
        if i % 4 == 0:
            put(f"{case}/golden_values_lts_dgx_a100.json", _golden(rng, steps))
    for i in range(12):
        put(f"data/sft/alpaca_part{i:02d}.json", _dataset(rng, 300), indent=2)
    for stage in (1, 2, 3):
        put(f"examples/deepspeed/ds_zero{stage}.json", {
            "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto", "bf16": {"enabled": True},
            "zero_optimization": {"stage": stage, "overlap_comm": True, "contiguous_gradients": True, "reduce_bucket_size": 5e8},
            "gradient_clipping": 1.0,
        }, indent=2)
    return total


def build(out: Path, dest: Path = DEFAULT_DEST, copies: int = 1, large: bool = False) -> Path:
    """The corpus tree at ``out`` (made once; ``copies`` > 1 repeats it in ``copy<N>/`` folders)."""
    stamp = out / ".corpus-complete"
    want = f"{','.join(PINNED + (LARGE if large else ()))};copies={copies}"
    if stamp.exists() and stamp.read_text() == want:
        return out
    if out.exists():
        shutil.rmtree(out)
    one = out / "copy1" if copies > 1 else out
    for spec in PINNED + (LARGE if large else ()):
        src = fetch(spec, dest, "sdist")
        link_tree(src, one / "pkgs" / spec.split("==")[0])
    write_test_data(one)
    for c in range(2, copies + 1):
        link_tree(one, out / f"copy{c}")
    stamp.write_text(want)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=DEFAULT_DEST, help="download cache (outside the repository)")
    ap.add_argument("--out", type=Path, required=True, help="where to assemble the tree")
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--with-transformers", action="store_true", help="add transformers 4.46.3 (45 MB of Python more)")
    args = ap.parse_args(argv)
    print(build(args.out, args.dest, args.copies, args.with_transformers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
