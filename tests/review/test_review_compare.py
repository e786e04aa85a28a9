"""Comparing base and head audits: status drops, value drops with quantified costs, moved settings, improvements."""

from __future__ import annotations

from checks.model import Evidence, Project, Status
from review.compare import compare_audits

from .review_util import audit_tree, result, synthetic

U, P, N, NA = Status.USED, Status.PARTIAL, Status.UNUSED, Status.NA


def test_status_drop_is_a_regression_and_rise_an_improvement():
    base = synthetic([result("D5", U), result("F3", N)])
    head = synthetic([result("D5", P), result("F3", U)])
    cmp = compare_audits(base, head)
    assert [(c.check, c.finding, c.before, c.after) for c in cmp.regressions] == [("D5", "status", "used", "partial")]
    assert [(c.check, c.kind) for c in cmp.improvements] == [("F3", "improvement")]


def test_applicability_changes_are_not_regressions():
    cmp = compare_audits(synthetic([result("E1", U)]), synthetic([result("E1", NA)]))
    assert cmp.regressions == [] and cmp.improvements == []


def test_value_drop_with_status_held_is_quantified():
    base = synthetic([result("I3", U, values={"save_steps": 500}), result("F1", U, values={"num_workers": 8})])
    head = synthetic([result("I3", U, values={"save_steps": 50}), result("F1", U, values={"num_workers": 0})])
    regs = {c.finding: c for c in compare_audits(base, head).regressions}
    assert set(regs) == {"save_steps", "num_workers"}
    assert "500 → 50" in regs["save_steps"].what and "10× more checkpoint writes" in regs["save_steps"].why
    assert "num_workers` 8 → 0" in regs["num_workers"].what and "GPU idles" in regs["num_workers"].why
    assert regs["save_steps"].why_zh and regs["num_workers"].why_zh


def test_save_steps_to_one_says_every_step_and_checkpoint_size():
    project = Project(params_billions=8.0)
    base = synthetic([result("I3", U, values={"save_steps": 500})], project=project)
    head = synthetic([result("I3", N, values={"save_steps": 1})], project=project)
    [c] = compare_audits(base, head).regressions
    assert "500× more checkpoint writes" in c.why and "every optimizer step" in c.why
    assert "112 GB" in c.why  # 14 bytes per parameter x 8B
    assert "(I3 used → unused)" in c.what  # the status drop rides on the value change: one change, not two


def test_precision_attention_compile_checkpointing_zero_offload():
    project = Project(params_billions=7.0, num_gpus=8, num_nodes=1, max_seq_len=4096)
    base = synthetic([
        result("C1", U, values={"precision": "bf16"}), result("D1", U, values={"attn_implementation": "flash_attention_2"}),
        result("D2", U, values={"torch_compile": True}), result("C3", U, values={"gradient_checkpointing": True}),
        result("A3", U, values={"zero_stage": 3}), result("C4", U, values={"offload_optimizer": "cpu"}),
    ], project=project)
    head = synthetic([
        result("C1", U, values={"precision": "fp32"}), result("D1", U, values={"attn_implementation": "eager"}),
        result("D2", U, values={"torch_compile": False}), result("C3", U, values={"gradient_checkpointing": False}),
        result("A3", U, values={"zero_stage": 2}), result("C4", U, values={"offload_optimizer": "none"}),
    ], project=project)
    regs = {c.finding: c for c in compare_audits(base, head).regressions}
    assert set(regs) == {"precision", "attn_implementation", "torch_compile", "gradient_checkpointing", "zero_stage", "offload_optimizer"}
    assert "about 2× activation memory" in regs["precision"].why
    assert "32 MiB per head" in regs["attn_implementation"].why  # 4096² x 2 bytes
    assert "3.8 instead of 2.0 bytes per parameter" in regs["zero_stage"].why  # ZeRO-2: 2 + 14/8; ZeRO-3: 16/8
    assert "14 GB → 26 GB" in regs["zero_stage"].why
    assert "about 10 GB of Adam state per GPU" in regs["offload_optimizer"].why  # 12 bytes x 7B / 8 GPUs
    assert "torch.compile switched off" in regs["torch_compile"].why
    assert "gradient checkpointing switched off" in regs["gradient_checkpointing"].why


def test_same_rank_changes_are_not_regressions():
    base = synthetic([result("C1", U, values={"precision": "bf16"}), result("D1", U, values={"attn_implementation": "flash_attention_2"})])
    head = synthetic([result("C1", U, values={"precision": "fp16"}), result("D1", U, values={"attn_implementation": "flash_attention_2"})])
    cmp = compare_audits(base, head)
    assert cmp.regressions == [] and cmp.improvements == []


def test_gradient_accumulation_effective_batch():
    base = synthetic([result("C5", U, values={"gradient_accumulation_steps": 8, "per_device_train_batch_size": 4})])
    head = synthetic([result("C5", U, values={"gradient_accumulation_steps": 2, "per_device_train_batch_size": 4})])
    [c] = compare_audits(base, head).regressions
    assert "32 → 8" in c.why and "4× more optimizer steps" in c.why
    # the micro batch grew to compensate: the effective batch holds, no regression
    head2 = synthetic([result("C5", U, values={"gradient_accumulation_steps": 2, "per_device_train_batch_size": 16})])
    assert compare_audits(base, head2).regressions == []


def test_nccl_variable_removed_in_multi_node_only():
    multi = Project(multi_node=True, num_nodes=2, num_gpus=8)
    base = synthetic([result("E4", U, values={"nccl_vars": ["NCCL_IB_HCA", "NCCL_SOCKET_IFNAME"]})], project=multi)
    head = synthetic([result("E4", U, values={"nccl_vars": ["NCCL_SOCKET_IFNAME"]})], project=multi)
    [c] = compare_audits(base, head).regressions
    assert c.finding == "NCCL_IB_HCA" and "InfiniBand" in c.why
    single = Project()
    assert compare_audits(synthetic(base.results, project=single), synthetic(head.results, project=single)).regressions == []


def test_moved_setting_is_neither_regression_nor_hides_one():
    base = audit_tree({"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nbf16: true\nlr: 0.001\n"})
    moved = audit_tree({"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nlr: 0.001\n",
                        "ds.json": '{\n  "bf16": {\n    "enabled": true\n  }\n}\n'})
    assert compare_audits(base, moved).regressions == []
    moved_off = audit_tree({"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nlr: 0.001\n",
                            "ds.json": '{\n  "bf16": {\n    "enabled": false\n  }\n}\n'})
    [c] = compare_audits(base, moved_off).regressions
    assert c.check == "C1" and c.finding == "precision"


def test_improvements_and_category_delta():
    base = synthetic([result("C1", N, values={"precision": "fp32"}), result("D5", N)])
    head = synthetic([result("C1", U, values={"precision": "bf16"}), result("D5", U)])
    cmp = compare_audits(base, head)
    assert cmp.regressions == []
    assert {c.check for c in cmp.improvements} == {"C1", "D5"}
    assert cmp.category_delta == {"C": 1.0, "D": 1.0}
    assert cmp.total == ((0.0, 2), (2.0, 2))


def test_new_finding_is_a_regression_and_no_base_counts_only_findings():
    finding = Evidence("train.yaml", 3, "logging_steps: 1", "logging_steps", 1)
    base = synthetic([result("I4", U)])
    head = synthetic([result("I4", U, findings=[finding])])
    [c] = compare_audits(base, head).regressions
    assert c.finding == "finding:logging_steps"
    cmp = compare_audits(None, head)
    assert cmp.base_missing and [x.finding for x in cmp.regressions] == ["finding:logging_steps"] and cmp.category_delta == {}
