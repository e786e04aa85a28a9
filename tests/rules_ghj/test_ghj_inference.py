"""J1-J7 and what makes a project an inference project."""

from __future__ import annotations

import pytest

from checks.project import _INFER_PATH
from tests.rules_ghj.ghj_util import audit, status

HF_GEN = "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n" \
         "out = model.generate(**inputs, max_new_tokens=128)\n"


@pytest.mark.parametrize(("path", "is_inference"), [
    ("chat.py", True), ("llava/serve/cli.py", True), ("inference_vllm.py", True), ("scripts/web_demo.py", True),
    ("sample.py", True), ("eval.py", False), ("chatglm_train.py", False), ("apply_lora.py", False), ("mapping.py", False),
])
def test_inference_paths_are_whole_words(path, is_inference):
    assert bool(_INFER_PATH.search(path)) is is_inference


def test_generate_inside_training_or_eval_code_does_not_make_j_applicable():
    files = {"train.py": "from transformers import Trainer\ntrainer = Trainer(model=model)\ntrainer.train()\n",
             "eval.py": HF_GEN}
    assert status(files, "J1") == "n/a"
    files["inference.py"] = HF_GEN
    assert status(files, "J1") == "partial"


def test_online_rl_rollouts_are_inference():
    grpo = {"grpo.py": "from trl import GRPOConfig, GRPOTrainer\ntrainer = GRPOTrainer(model=m, args=GRPOConfig(output_dir='o'))\n"}
    assert status(grpo, "J5") == "unused"
    assert status(grpo, "J1") == "partial"  # TRL generates with HF's dynamic cache
    grpo["grpo.yaml"] = "use_vllm: true\nvllm_gpu_memory_utilization: 0.3\n"
    assert status(grpo, "J5") == "used" and status(grpo, "J2") == "used"


def test_j3_vllm_version_decides_the_default():
    serve = {"serve.sh": "vllm serve Qwen/Qwen2.5-7B-Instruct\n"}
    assert status({**serve, "requirements.txt": "vllm\n"}, "J3") == "used"
    assert status({**serve, "requirements.txt": "vllm==0.6.3\n"}, "J3") == "unused"
    assert status({**serve, "Dockerfile": "FROM python:3.11\nENV VLLM_USE_V1=0\n"}, "J3") == "unused"


def test_j4_training_quantization_flag_is_not_inference_quantization():
    files = {"run.sh": "torchrun --nproc_per_node 8 train.py --quantization 4bit --model_name_or_path Qwen/Qwen2-7B\n",
             "inference.py": HF_GEN}
    assert status(files, "J4") == "unused"
    files["serve.sh"] = "vllm serve Qwen/Qwen2-7B --quantization fp8\n"
    r, _ = audit(files, "J4")
    assert r.status.value == "used" and r.values["quantization"] == "fp8"


def test_j6_enforce_eager_through_args_and_star_kwargs():
    code = ("import argparse\nfrom vllm import LLM\np = argparse.ArgumentParser()\n"
            "p.add_argument('--enforce_eager', action='store_true')\nargs = p.parse_args()\n"
            "llm = LLM(model=args.model, enforce_eager=args.enforce_eager)\n")
    assert status({"infer.py": code}, "J6") == "used"
    assert status({"infer.py": code, "run.sh": "python infer.py --enforce_eager\n"}, "J6") == "unused"


def test_j6_verl_rollout_eager_is_reported_at_its_key():
    cfg = "actor_rollout_ref:\n  rollout:\n    name: vllm\n    enforce_eager: True\n"
    r, _ = audit({"ppo_trainer.yaml": cfg}, "J6")
    assert r.status.value == "unused" and r.evidence[0].key == "actor_rollout_ref.rollout.enforce_eager"


def test_j7_no_advice_for_a_small_model():
    files = {"serve.sh": "vllm serve Qwen/Qwen2.5-1.5B-Instruct\n"}
    r, p = audit(files, "J7")
    assert r.status.value == "unused" and p.params_billions == 1.5 and r.priority is None
    files = {"serve.sh": "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4\n"}
    assert audit(files, "J7")[0].priority is not None
