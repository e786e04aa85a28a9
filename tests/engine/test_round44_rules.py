"""Round 44 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status
from checks.rules.a_parallelism import ONE_GPU_INFERENCE


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


# --- DeepSeek-VL (round 43 leftover): one-GPU generation scored as missing tensor parallelism and NCCL tuning ------------

_CLI_CHAT = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\ndef load_model(model_path):\n"
    "    vl_gpt = AutoModelForCausalLM.from_pretrained(model_path, trust_remote_code=True)\n"
    "    return vl_gpt.to(torch.bfloat16).cuda().eval()\n\n\n"
    "def chat(vl_gpt, inputs_embeds, attention_mask):\n"
    "    return vl_gpt.language_model.generate(inputs_embeds=inputs_embeds, attention_mask=attention_mask, max_new_tokens=512,"
    " do_sample=False, use_cache=True)\n")


def test_one_gpu_generation_leaves_tensor_parallel_and_nccl_out_of_the_score():
    a = _audit({"inference.py": ONE_GPU_INFERENCE, "cli_chat.py": _CLI_CHAT})
    assert a.project.does_inference and not a.project.does_training
    for cid in ("A4", "E4"):
        r = _check(a, cid)
        assert r.status is Status.NA and "no generation spans GPUs" in (r.detail or ""), (cid, r.status, r.detail)
    # control: the same chat run by a two-process launch spans GPUs; both stay judged
    b = _audit({"inference.py": ONE_GPU_INFERENCE, "cli_chat.py": _CLI_CHAT,
                "run.sh": "deepspeed --num_gpus 2 cli_chat.py --model_path deepseek-ai/deepseek-vl-7b-chat\n"})
    assert {_check(b, c).status for c in ("A4", "E4")} == {Status.UNUSED}


# --- gpt-fast (round 43 leftover): NCCL tuning advised for 8-GPU generation inside one node --------------------------------

def test_nccl_tuning_is_withheld_for_single_node_generation():
    from reports.advice import build_plan
    run = "torchrun --standalone --nproc_per_node=8 generate.py --compile --checkpoint_path checkpoints/model.pth\n"
    a = _audit({"generate.py": ONE_GPU_INFERENCE, "run.sh": run})
    assert _check(a, "E4").status is Status.UNUSED and not a.project.multi_node
    plan = build_plan(a)
    assert "E4" not in {r.check for r in plan.recommendations}
    assert any(w.check == "E4" and "no multi-node launch" in w.reason for w in plan.withheld)
    # control: across two nodes the advice stands
    b = _audit({"generate.py": ONE_GPU_INFERENCE, "run.sh": run.replace("--standalone ", "--nnodes 2 --node_rank $RANK ")})
    assert "E4" in {r.check for r in build_plan(b).recommendations}
