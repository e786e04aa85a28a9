"""Step zero: the bottleneck guess from code features, and its honesty when the signals are weak."""

from __future__ import annotations

from checks.bottleneck import classify, classify_bottleneck
from checks.engine import audit_files, build_facts
from checks.model import Bottleneck, Evidence, Project, Status
from checks.project import detect_project

from .helpers import result

U, P, N = Status.USED, Status.PARTIAL, Status.UNUSED


def verdict(files: dict[str, str], statuses: dict[str, Status] | None = None, **project):
    facts = build_facts((p, t.encode()) for p, t in files.items())
    proj = detect_project(facts)
    for k, v in project.items():
        setattr(proj, k, v)
    results = [result(cid, st) for cid, st in (statuses or {}).items()]
    return classify(facts, proj, results)


def _off(path: str, line: int, text: str, key: str) -> list[Evidence]:
    return [Evidence(path, line, text, key, False)]


def test_fp32_training_is_compute_bound():
    files = {"train.yaml": "bf16: false\nfp16: false\n", "train.py": "import torch\nloss = model(x)\nloss.backward()\n"}
    facts = build_facts((p, t.encode()) for p, t in files.items())
    v = classify(facts, detect_project(facts), [result("C1", N, evidence=_off("train.yaml", 1, "bf16: false", "bf16"))])
    assert v.bottleneck == Bottleneck.COMPUTE
    assert any("FP32" in r and "train.yaml:1" in r for r in v.reasons) and any("FP32" in r for r in v.reasons_zh)


def test_a_practice_not_seen_alone_is_no_verdict():
    """C1 unused because nothing was found is not proof of FP32: needs profiling, with the measurements that decide."""
    v = verdict({"train.py": "import torch\nloss = model(x)\nloss.backward()\n"}, {"C1": N})
    assert v.bottleneck == Bottleneck.UNKNOWN
    assert "needs profiling" in v.reasons[0] and "nvidia-smi dmon" in v.reasons[0] and "synthetic on-GPU data" in v.reasons[0]
    assert "nsys" in v.reasons[0]
    assert any("was seen" in r and "train.py:3" in r for r in v.reasons)  # says what was not seen, and where the step is
    assert not any("training runs in FP32" in r for r in v.reasons)


def test_unnamed_storage_is_unknown_never_slow():
    files = {"train.py": "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=0)\nloss.backward()\n"}
    v = verdict(files, {"C1": U, "I1": N, "I2": N})
    assert not any("slow" in r or "shared file system" in r for r in v.reasons)
    assert any(r.startswith("storage of the training data: unknown") and "check where" in r for r in v.reasons)
    assert any(r.startswith("训练数据所在存储：未知") for r in v.reasons_zh)


def test_a_scheme_constant_or_an_error_message_is_not_remote_data():
    files = {
        "utils.py": 'S3_PREFIX = "s3://"\ndef check(p):\n    if p.startswith("s3://"):\n        raise ValueError("s3:// paths require s3fs")\n',
        "train.py": "loss.backward()\n",
    }
    v = verdict(files, {"C1": U})
    assert not any("remote" in r for r in v.reasons)


def test_remote_data_and_no_workers_is_data_io_bound():
    files = {
        "train.yaml": "data_path: s3://bucket/corpus/\noutput_dir: /mnt/out\nbf16: true\n",
        "train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=0)\nloss.backward()\n",
    }
    v = verdict(files, {"C1": U})
    assert v.bottleneck == Bottleneck.DATA_IO
    assert any("remote object storage" in r and "train.yaml:1" in r for r in v.reasons)
    assert any("num_workers = 0" in r and "train.py:2" in r for r in v.reasons)


def test_output_paths_are_not_data_sources():
    files = {"train.yaml": "output_dir: s3://bucket/ckpt\nsave_dir: hdfs://x/ckpt\nbf16: true\n", "train.py": "loss.backward()\n"}
    v = verdict(files, {"C1": U})
    assert not any("remote" in r for r in v.reasons)


def test_multi_node_fully_sharded_without_rdma_is_communication_bound():
    files = {
        "run.sh": "torchrun --nnodes 4 --nproc_per_node 8 train.py --deepspeed ds.json\n",
        "ds.json": '{"bf16": {"enabled": true}, "zero_optimization": {"stage": 3, "overlap_comm": false}}',
        "train.py": "import deepspeed\nloss.backward()\n",
    }
    v = verdict(files, {"C1": U, "E1": N, "E2": N})
    assert v.bottleneck == Bottleneck.COMMUNICATION
    assert any("4 nodes" in r for r in v.reasons) and any("ZeRO-3" in r for r in v.reasons)


def test_long_sequences_without_fused_attention_are_memory_bound():
    files = {"train.yaml": "max_seq_length: 16384\nbf16: true\n", "train.py": "loss.backward()\n"}
    v = verdict(files, {"C1": U, "D1": N, "D2": N, "D5": N, "D6": N})
    assert v.bottleneck == Bottleneck.MEMORY
    assert any("16384" in r for r in v.reasons)


def test_small_model_with_sync_points_is_launch_bound():
    files = {"train.py": "import torch\nfor x in dl:\n    loss = model(x)\n    loss.backward()\n    print(loss.item())\n"}
    # (round 41: a small-model launch signal is positive only under 50M parameters; a 124M GPT-2 at 64 x 1024 tokens per
    # micro-batch runs millisecond matmuls, see test_round41_rules)
    v = verdict(files, {"C1": U, "D2": N, "D4": N}, params_billions=0.03)
    assert v.bottleneck == Bottleneck.LAUNCH
    assert v.scores == {"launch-bound": 3, "latency-bound": 1}


def test_inference_only_projects():
    engine = verdict({"serve.py": "from vllm import LLM\nllm = LLM('meta-llama/Llama-3.1-8B')\nllm.generate(prompts)\n"})
    assert engine.bottleneck == Bottleneck.MEMORY
    eager = verdict({"chat.py": "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('gpt2')\nout = m.generate(ids)\n"},
                    does_training=False, does_inference=True)
    assert eager.bottleneck == Bottleneck.LATENCY and any("chat.py:3" in r for r in eager.reasons)


def test_weak_or_conflicting_signals_need_profiling():
    weak = verdict({"train.py": "loss.backward()\n"}, {"C1": U})
    assert weak.bottleneck == Bottleneck.UNKNOWN and "profile" in weak.reasons[0]
    files = {"train.yaml": "data_path: s3://bucket/x\nbf16: false\n",
             "train.py": "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=0)\nloss.backward()\n"}
    facts = build_facts((p, t.encode()) for p, t in files.items())
    tie = classify(facts, detect_project(facts), [result("C1", N, evidence=_off("train.yaml", 2, "bf16: false", "bf16"))])
    assert tie.bottleneck == Bottleneck.UNKNOWN
    assert "compute-bound" in tie.reasons[0] and "data-io-bound" in tie.reasons[0]
    assert any(r.startswith("compute-bound: ") for r in tie.reasons)
    nothing = verdict({"README.md": "hello\n"}, does_training=False)
    assert nothing.bottleneck == Bottleneck.UNKNOWN


def test_checks_that_did_not_run_are_not_signals():
    files = {"train.py": "loss.backward()\n"}
    assert verdict(files, {}).scores == {}  # C1 never ran: no FP32 claim
    assert verdict(files, {"C1": P}).scores == {}


def test_the_engine_writes_the_verdict_into_the_project():
    audit = audit_files([("train.py", b"import torch\nloss = model(x)\nloss.backward()\n")])
    p = audit.project
    assert isinstance(p.bottleneck, Bottleneck) and p.bottleneck_reasons
    assert len(p.notes["bottleneck_reasons_zh"]) == len(p.bottleneck_reasons)
    assert p.to_json()["bottleneck"] == p.bottleneck.value
    again = Project()
    assert classify_bottleneck(audit.facts, again, audit.results) == p.bottleneck


def test_storage_verdict_needs_a_location():
    files = {"train.py": "from torch.utils.data import DataLoader\nDataLoader(ds, num_workers=0)\nloss.backward()\n"}
    v = verdict(files, {"C1": U, "I1": N, "I2": N})  # the storage checks found no data path at all
    assert v.scores == {"data-io-bound": 2}


def test_syncs_in_an_evaluation_function_are_not_training_step_syncs():
    """nanoGPT's ``estimate_loss`` calls ``loss.item()`` in a loop: evaluation, not the training step."""
    files = {"train.py": "import torch\ndef estimate_loss():\n    for k in range(200):\n        losses[k] = loss.item()\n"
                         "for it in range(10):\n    loss = model(x)\n    loss.backward()\n"}
    assert "latency-bound" not in verdict(files, {"C1": U}).scores


def _ev(path: str, line: int, text: str) -> list[Evidence]:
    return [Evidence(path, line, text)]


_LOADER = {"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=0)\nloss.backward()\n"}


def test_memory_mapped_checkpoints_do_not_make_online_tokenization_cheap():
    """torchtune: F8 used (a state dict loaded with mmap=True) beside F6 unused (tokenized in __getitem__): the loader
    signal must not say "the data is tokenized ahead" next to the reason that says it is tokenized online."""
    files = dict(_LOADER, **{"ds.py": "class D:\n    def __getitem__(self, i):\n        return self.tok.encode(self.rows[i])\n"})
    facts = build_facts((p, t.encode()) for p, t in files.items())
    results = [result("F1", N, evidence=_ev("train.py", 2, "loader = DataLoader(ds, batch_size=8, num_workers=0)")),
               result("F6", N, evidence=_ev("ds.py", 3, "return self.tok.encode(self.rows[i])")),
               result("F8", U, evidence=_ev("utils.py", 4, "sd = torch.load(p, mmap=True)"))]
    v = classify(facts, detect_project(facts), results)
    loader = [r for r in v.reasons if "num_workers = 0" in r]
    assert loader and not any("tokenized ahead" in r or "memory-mapped" in r for r in loader)
    assert any("tokenization or feature extraction runs online" in r for r in v.reasons)


def test_the_weak_qualifier_names_the_check_and_cites_it():
    facts = build_facts((p, t.encode()) for p, t in _LOADER.items())
    results = [result("F1", N, evidence=_ev("train.py", 2, "loader = DataLoader(ds, batch_size=8, num_workers=0)")),
               result("F10", U, evidence=_ev("data.py", 7, "tokens = np.memmap('train.bin', dtype=np.uint16, mode='r')"))]
    v = classify(facts, detect_project(facts), results)
    loader = next(r for r in v.reasons if "num_workers = 0" in r)
    assert "weak: the data is stored pre-tokenized, F10 at `data.py:7`" in loader
    assert "F6/F8/F10" not in loader


def test_text_batches_beside_a_large_model_are_a_weak_loader_signal():
    """Collating a text batch takes milliseconds; a 7B step far longer: num_workers=0 alone is no data-io verdict."""
    facts = build_facts((p, t.encode()) for p, t in _LOADER.items())
    proj = detect_project(facts)
    proj.params_billions = 7.0
    results = [result("F1", N, evidence=_ev("train.py", 2, "loader = DataLoader(ds, batch_size=8, num_workers=0)")), result("F6", N)]
    v = classify(facts, proj, results)
    assert v.bottleneck == Bottleneck.UNKNOWN
    assert any("num_workers = 0" in r and "model of 7B parameters or more" in r for r in v.reasons)
    small = detect_project(facts)
    small.params_billions = 0.124
    v2 = classify(facts, small, results)
    assert not any("parameters or more" in r for r in v2.reasons)


_DS = {
    "ds_z0.json": '{"zero_optimization": {"stage": 0}}\n',
    "ds_z2.json": '{"zero_optimization": {"stage": 2}}\n',
    "ds_z3.json": '{"zero_optimization": {"stage": 3}}\n',
}


def test_zero3_among_other_deepspeed_configs_is_a_choice_not_proof():
    """LLaMA-Factory ships ZeRO-0/2/3 configs side by side and one multi-node example: ZeRO-3 is one choice, and
    "all-gathered over the network" holds only for a run that spans nodes."""
    files = dict(_DS, **{"train.py": "loss.backward()\n"})
    v = verdict(files, {"E1": U}, multi_node=True, num_nodes=2)
    shard = [r for r in v.reasons if "fully sharded" in r]
    assert shard and "in 1 of 3 DeepSpeed configs" in shard[0] and "in a run that spans nodes" in shard[0]
    assert not any("sharded across nodes" in r for r in v.reasons)


def test_zero3_everywhere_on_a_multi_node_launch_is_positive():
    files = {"ds_z3.json": _DS["ds_z3.json"],
             "run.sh": "torchrun --nnodes 4 --nproc_per_node 8 train.py --deepspeed ds_z3.json\n", "train.py": "loss.backward()\n"}
    v = verdict(files, {"E1": U})
    assert any("fully sharded across nodes" in r and "ds_z3.json:1" in r for r in v.reasons)


def test_few_workers_over_pre_tokenized_data_is_weak_and_says_why():
    """Megatron: --num-workers 2 over indexed pre-tokenized data: 'only 1-3 workers' carries what makes it weak."""
    files = {"train.py": "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=2)\nloss.backward()\n"}
    facts = build_facts((p, t.encode()) for p, t in files.items())
    results = [result("F1", P, evidence=_ev("train.py", 2, "loader = DataLoader(ds, batch_size=8, num_workers=2)")),
               result("F10", U, evidence=_ev("data.py", 3, "idx = np.memmap(path, dtype=np.int32, mode='r')"))]
    v = classify(facts, detect_project(facts), results)
    few = next(r for r in v.reasons if "only 1-3 DataLoader workers" in r)
    assert "weak: the data is stored pre-tokenized, F10 at `data.py:3`" in few
    few_zh = next(r for r in v.reasons_zh if "1~3" in r)
    assert "较弱" in few_zh and "F10" in few_zh


def test_offload_is_counted_against_every_sharding_recipe_not_only_deepspeed_ones():
    """oumi: 3 offloading DeepSpeed recipes beside dozens of FSDP ones: offload is one choice, not the project's run."""
    files = {"ds_offload.json": '{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}\n',
             "train.py": "loss.backward()\n"}
    for i in range(4):
        files[f"recipes/r{i}.yaml"] = "fsdp:\n  sharding_strategy: FULL_SHARD\n"
    v = verdict(files, {"C4": U})
    off = next(r for r in v.reasons if "offloaded" in r)
    assert "in 1 of 5 DeepSpeed/FSDP configs" in off


def test_offload_configs_no_launch_uses_are_not_a_per_step_cost():
    """ms-swift / lmms-engine: offload presets shipped beside the other DeepSpeed configs, picked by no launch (C4 partial):
    nothing moves over PCIe every step of a run the project describes."""
    files = {"ds/zero2.json": '{"zero_optimization": {"stage": 2}}\n',
             "ds/zero2_offload.json": '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}\n',
             "train.py": "loss.backward()\n"}
    assert not [r for r in verdict(files, {"C4": P}).reasons if "offloaded" in r]
    assert [r for r in verdict(files, {"C4": U}).reasons if "offloaded" in r]


def test_a_vocabulary_bound_into_one_registered_loader_is_not_the_trained_models():
    """ms-swift: ``partial(get_model_tokenizer_mplug_owl2, vocab_size=151851, ...)`` inside one ``register_model`` entry
    among hundreds pre-binds that loader's argument; the trained model is whatever ``--model`` names."""
    reg = ("from functools import partial\n\nregister_model(ModelMeta('mplug_owl2_1', [Model('iic/mPLUG-Owl2.1')],\n"
           "    partial(get_model_tokenizer_mplug_owl2, vocab_size=151851, get_model_tokenizer_function=get_qwen)))\n")
    statuses = {"D5": N, "D2": N, "D6": N}
    assert not [r for r in verdict({"mylib/model/mplug.py": reg, "train.py": "loss.backward()\n"}, statuses).reasons
                if "vocabulary" in r]
    cfg = "from mylib import GPTConfig\n\nconfig = GPTConfig(n_layer=24, vocab_size=151851)\nloss.backward()\n"
    assert [r for r in verdict({"train.py": cfg}, statuses).reasons if "vocabulary" in r]


def test_gemm_bound_reason_needs_attention_fused_outright():
    # alpaca-lora: D1 partial (transformers >= 4.28 may run eager attention); the reason said "with fused attention"
    files = {"train.py": "import torch\nloss = model(x)\nloss.backward()\n"}
    partial = verdict(files, {"C1": U, "D1": P}, params_billions=7.0)
    assert not any("fused attention" in r for r in partial.reasons)
    used = verdict(files, {"C1": U, "D1": U}, params_billions=7.0)
    assert any("with fused attention: step time is dominated by GEMMs" in r for r in used.reasons)
    # transformers held at 4.36+ by the requirements runs SDPA by default: fused, though FlashAttention-2 is not chosen
    facts = build_facts((p, t.encode()) for p, t in files.items())
    proj = detect_project(facts)
    proj.params_billions = 7.0
    d1 = result("D1", P)
    d1.values["sdpa_default"] = True
    v = classify(facts, proj, [result("C1", U), d1])
    assert any("with fused attention: step time is dominated by GEMMs" in r for r in v.reasons)
