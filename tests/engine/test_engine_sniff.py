"""Data files (golden values, datasets, numeric arrays) are recognised from their first bytes and skipped with the reason;
configs, however large, are read."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

from checks.engine import AuditOptions, audit_path
from checks.sniff import HEAD_BYTES, SMALL_BYTES, data_reason
from checks.source import Limits, ReadStats, iter_directory, iter_tarball


def _golden_values(steps: int) -> str:
    """The shape of Megatron-LM's tests/functional_tests/.../golden_values_*.json."""
    metrics = {
        name: {"start_step": 1, "end_step": steps, "step_interval": 1, "values": {str(i): round(10.8 - i * 0.0137, 5) for i in range(1, steps + 1)}}
        for name in ("lm loss", "num-zeros", "mem-allocated-bytes", "iteration-time")
    }
    return json.dumps(metrics, indent=4)


def _ds_config(extra_keys: int) -> str:
    """A DeepSpeed config padded with many named settings (large, but a config)."""
    cfg: dict[str, object] = {
        "train_batch_size": 256, "gradient_accumulation_steps": 8, "bf16": {"enabled": True},
        "zero_optimization": {"stage": 3, "overlap_comm": True, "contiguous_gradients": True, "reduce_bucket_size": 5e8},
    }
    cfg.update({f"custom_setting_{i}": {"enabled": i % 2 == 0, "value": i} for i in range(extra_keys)})
    return json.dumps(cfg, indent=2)


def test_golden_values_are_data_and_a_large_config_is_not() -> None:
    golden = _golden_values(200).encode()
    assert len(golden) > SMALL_BYTES
    assert "golden values" in (data_reason("json", len(golden), golden[:HEAD_BYTES]) or "")
    cfg = _ds_config(400).encode()
    assert len(cfg) > HEAD_BYTES
    assert data_reason("json", len(cfg), cfg[:HEAD_BYTES]) is None


def test_datasets_and_numeric_arrays_are_data() -> None:
    records = json.dumps([{"instruction": f"Summarise paragraph {i}.", "input": "lorem ipsum " * 20, "output": "dolor"} for i in range(200)]).encode()
    assert "dataset" in (data_reason("json", len(records), records[:HEAD_BYTES]) or "")
    arrays = json.dumps({"name": "rope_cache", "cos": [round(0.001 * i, 4) for i in range(5000)]}).encode()
    assert "numeric arrays" in (data_reason("json", len(arrays), arrays[:HEAD_BYTES]) or "")
    yaml_golden = ("lm loss:\n  values:\n" + "".join(f"    {i}: {10.8 - i * 0.01:.4f}\n" for i in range(1, 400))).encode()
    assert "golden values" in (data_reason("yaml", len(yaml_golden), yaml_golden[:HEAD_BYTES]) or "")


def test_json_lines_in_a_json_file_are_data() -> None:
    # artidoro/qlora data/mmlu/zero_shot_mmlu_val.json: one MMLU record per line; parsed as JSON it was reported as a
    # file that could not be parsed
    rows = "".join(json.dumps({"subject": "abstract_algebra", "input": f"Question {i}?\nA. 4\nB. 8\nAnswer:", "output": "A"}) + "\n"
                   for i in range(100)).encode()
    assert "JSON Lines" in (data_reason("json", len(rows), rows[:HEAD_BYTES]) or "")
    # a config written on one line is one value: read
    one_line = (json.dumps(json.loads(_ds_config(60))) + "\n").encode()
    assert len(one_line) > SMALL_BYTES and data_reason("json", len(one_line), one_line[:HEAD_BYTES]) is None

def test_vocabularies_and_tokenizers_are_data() -> None:
    # Megatron-DeepSpeed ships examples_deepspeed/rebase/gpt2-vocab.json (1 MB, token -> id); read as a config, its
    # "Adapter" token turned G4 "LoRA/PEFT fine-tuning" on
    vocab = json.dumps({**{c: i for i, c in enumerate("!#$%&()*+,-./0123456789")},
                        **{f"\u0120tok{i}": 23 + i for i in range(3000)}, "Adapter": 3100, "r": 3101}).encode()
    assert "vocabulary" in (data_reason("json", len(vocab), vocab[:HEAD_BYTES]) or "")
    tokenizer = json.dumps({"version": "1.0", "truncation": None, "padding": None, "added_tokens": [
        {"id": i, "content": f"<|extra_{i}|>", "special": True} for i in range(300)], "model": {"type": "BPE", "vocab": {}}}).encode()
    assert "tokenizer" in (data_reason("json", len(tokenizer), tokenizer[:HEAD_BYTES]) or "")
    # an HF model config: many integer settings, but strings, floats and booleans beside them
    hf = json.dumps({"architectures": ["LlamaForCausalLM"], "hidden_act": "silu", "rope_theta": 500000.0, "tie_word_embeddings": False,
                     **{f"setting_{i}": i * 64 for i in range(120)}, **{f"name_{i}": f"v{i}" for i in range(30)}}, indent=2).encode()
    assert len(hf) > SMALL_BYTES and data_reason("json", len(hf), hf[:HEAD_BYTES]) is None


def test_small_files_and_configs_are_always_read() -> None:
    tiny = json.dumps({str(i): i for i in range(40)}).encode()  # integer keys, but under SMALL_BYTES
    assert len(tiny) <= SMALL_BYTES and data_reason("json", len(tiny), tiny) is None
    yaml_cfg = ("model:\n  hidden_size: 4096\n  num_layers: 32\ntrainer:\n  precision: bf16-mixed\n  devices: 8\n" * 60).encode()
    assert data_reason("yaml", len(yaml_cfg), yaml_cfg[:HEAD_BYTES]) is None
    assert data_reason("toml", 10**6, b"1 = 2\n" * 2000) is None  # only JSON and YAML are sniffed


def _tree(root: Path) -> None:
    case = root / "tests" / "functional_tests" / "test_cases" / "gpt3_tp2"
    case.mkdir(parents=True)
    (case / "golden_values_dev_dgx_h100.json").write_text(_golden_values(300))
    (root / "configs").mkdir()
    (root / "configs" / "ds_zero3.json").write_text(_ds_config(300))
    (root / "train.py").write_text("import deepspeed\nengine, *_ = deepspeed.initialize(config='configs/ds_zero3.json')\n")


def test_directory_and_tarball_list_data_files_as_skipped_with_the_reason(tmp_path: Path) -> None:
    _tree(tmp_path)
    stats = ReadStats()
    read = dict(iter_directory(tmp_path, Limits(), stats))
    golden = "tests/functional_tests/test_cases/gpt3_tp2/golden_values_dev_dgx_h100.json"
    assert set(read) == {"configs/ds_zero3.json", "train.py"}
    assert [s.path for s in stats.skipped] == [golden] and stats.skipped[0].reason.startswith("data: ")
    assert stats.files_read == 2 and stats.files_seen == 3

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for p in sorted(tmp_path.rglob("*")):
            if p.is_file():
                tf.add(p, arcname=f"repo-abc/{p.relative_to(tmp_path)}")
    tstats = ReadStats()
    assert {p: d for p, d in iter_tarball(io.BytesIO(buf.getvalue()), Limits(), tstats)} == read
    assert [(s.path, s.reason) for s in tstats.skipped] == [(s.path, s.reason) for s in stats.skipped]


def test_the_config_still_counts_in_the_audit(tmp_path: Path) -> None:
    _tree(tmp_path)
    audit = audit_path(tmp_path, AuditOptions())
    stages = [e.value for e in audit.facts.config("zero_optimization.stage")]
    assert stages == [3]
    assert not audit.facts.files.get("tests/functional_tests/test_cases/gpt3_tp2/golden_values_dev_dgx_h100.json")
