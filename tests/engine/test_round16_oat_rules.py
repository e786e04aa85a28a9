"""Round 16 (held-out oat-llm 0.2.4): rules fixed after its first contact. Each rule test fails on the engine before the
fix; the controls pass on both."""

from __future__ import annotations

from checks.rules.e_comm import _DS_CONFIG_BUILDER
from tests.rules_ghj.ghj_util import audit, status


def test_overlap_comm_under_a_builder_parameter_left_false_is_not_use():
    files = {"myrl/utils/deepspeed.py": _DS_CONFIG_BUILDER.replace("{extra}", "")}
    result, _ = audit(files, "E2")
    assert result.status.value == "unused"
    assert not any(e.line == 11 for e in result.evidence)  # not the ``zero_opt_dict["overlap_comm"] = True`` line


def test_control_the_builder_called_with_overlap_comm_true_overlaps():
    files = {"myrl/utils/deepspeed.py": _DS_CONFIG_BUILDER.replace("{extra}", ", overlap_comm=True")}
    assert status(files, "E2") == "used"


def test_control_a_zero3_builder_with_overlap_comm_off_keeps_deepspeeds_stage3_default():
    files = {"myrl/utils/deepspeed.py": _DS_CONFIG_BUILDER.replace("{extra}", "").replace("stage=2", "stage=3")}
    files["myrl/config.yaml"] = "zero_stage: 3\n"
    assert status(files, "E2") == "used"


def test_deepspeed_global_batch_over_a_micro_batch_set_from_a_field_accumulates_on_one_node():
    from checks.rules.c_memory import _ds_batch_strategy

    result, _ = audit(_ds_batch_strategy(128), "C5")
    assert result.status.value == "used"
    assert result.values["gradient_accumulation_steps"] == 16
    assert {(e.path, e.line) for e in result.evidence} == {("myrl/args.py", 6), ("myrl/strategy.py", 12), ("myrl/args.py", 7)}


def test_control_a_global_batch_one_node_could_spread_one_per_gpu_is_not_judged_accumulation():
    from checks.rules.c_memory import _ds_batch_strategy

    assert status(_ds_batch_strategy(8), "C5") == "unused"


def test_control_a_known_gpu_count_still_decides_the_exact_count():
    from checks.rules.c_memory import _ds_batch_strategy

    files = {**_ds_batch_strategy(128), "run.sh": "deepspeed --num_gpus 8 myrl/train.py\n", "myrl/train.py": "import deepspeed\n"}
    result, _ = audit(files, "C5")
    assert result.status.value == "used"


def _chunked(default: str) -> dict[str, str]:
    from checks.rules.g_strategy import _CHUNKED_HEAD

    return {k: v.replace("{default}", default) for k, v in _CHUNKED_HEAD.items()}


def test_an_algo_setting_naming_ppo_or_dpo_is_alignment_training():
    _, project = audit({"myrl/args.py": _chunked("True")["myrl/args.py"]}, "G6")
    assert project.alignment


def test_a_projects_own_chunked_lm_head_logprob_is_a_fused_alignment_loss():
    result, _ = audit(_chunked("True"), "G6")
    assert result.status.value == "used"
    assert {(e.path, e.line) for e in result.evidence} == {("myrl/ppo.py", 8), ("myrl/utils/lm_head.py", 17)}


def test_control_the_chunked_head_behind_a_switch_that_is_off():
    assert status(_chunked("False"), "G6") == "unused"


def test_control_a_loop_over_rows_of_computed_logits_is_not_fused():
    files = {"myrl/args.py": "algo = 'grpo'\n", "myrl/ops.py": (
        "def selective_log_softmax(logits, index):\n    out = []\n"
        "    for chunk_logits, chunk_index in zip(logits.chunk(4), index.chunk(4)):\n"
        "        out.append(row_logps(chunk_logits, chunk_index))\n    return out\n\n\n"
        "def row_logps(logits, index):\n    return logits.log_softmax(-1).gather(-1, index.unsqueeze(-1))\n")}
    assert status(files, "G6") == "unused"



def test_control_an_explicit_fused_kernel_switch_that_is_off_wins_over_the_chunked_head():
    # verl: ``use_fused_kernels: false`` leaves its FusedLinearForPPO patches uninstalled
    files = {**_chunked("True"), "myrl/config/actor.yaml": "model:\n  use_fused_kernels: false\n"}
    assert status(files, "G6") == "unused"


_VLLM_ACTOR = ("import vllm\n\nllm = vllm.LLM(model=path, gpu_memory_utilization=0.25{extra})\n"
               "outputs = llm.generate(prompts, sampling_params=sp)\n")
_MOSEC_SERVER = ("from mosec import Runtime, Server\n\nserver = Server()\n"
                 "runtime = Runtime(worker=RewardModel, num=8, max_batch_size=1, timeout=10)\nserver.run()\n")


def test_another_servers_batch_limit_does_not_limit_the_rollout_engine():
    files = {"myrl/actors/actor.py": _VLLM_ACTOR.replace("{extra}", ""), "myrl/oracles/remote/server.py": _MOSEC_SERVER}
    result, _ = audit(files, "J2")
    assert result.status.value == "used"
    assert all(e.path == "myrl/actors/actor.py" for e in result.evidence)


def test_control_the_engines_own_limit_of_one_sequence_is_still_partial():
    files = {"myrl/actors/actor.py": _VLLM_ACTOR.replace("{extra}", ", max_num_seqs=1"), "myrl/oracles/remote/server.py": _MOSEC_SERVER}
    assert status(files, "J2") == "partial"


def test_an_openrlhf_style_pretrain_field_names_the_trained_model():
    files = {"myrl/args.py": ("from dataclasses import dataclass\n\n\n@dataclass\nclass Args:\n"
                              "    pretrain: str = \"trl-lib/pythia-1b-deduped-tldr-sft\"\n    bf16: bool = True\n"),
             "myrl/learner.py": ("from transformers import AutoModelForCausalLM\n\n\ndef build(args):\n"
                                 "    return AutoModelForCausalLM.from_pretrained(args.pretrain)\n")}
    _, project = audit(files, "C1")
    assert project.model_names == ["trl-lib/pythia-1b-deduped-tldr-sft"]
    assert project.estimated_params == "1B"


def test_control_a_pretrain_switch_is_no_model_name():
    files = {"myrl/args.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass Args:\n    pretrain: bool = False\n"}
    _, project = audit(files, "C1")
    assert project.model_names == []


def test_control_a_pretrain_key_naming_a_config_file_is_no_model_name():
    files = {"configs/pretrain.yaml": "model:\n  arch: blip2\n  pretrain: configs/models/blip2/blip2_pretrain.yaml\n"}
    _, project = audit(files, "C1")
    assert project.model_names == []
