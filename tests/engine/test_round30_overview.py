"""Overview, round 30 of issue #9 (TinyLlama): names that round one model size differently (``tiny_LLaMA_1b`` in the
pre-training script and lit_gpt's config, ``TinyLlama-1.1B-...`` in checkpoint paths) are one size, so the scale is not
left unknown beside a 12B speculative-decoding target; the size is cited at the training path's own name."""

from __future__ import annotations

from checks.project import _params_from_names


def test_names_within_ten_percent_are_one_size():
    named = [("pretrain/tinyllama.py", "tiny_LLaMA_1b"), ("pretrain/tinyllama_code.py", "code_tiny_LLaMA_1b"),
             ("script.sh", "tiny_LLaMA_1b"), ("chat_gradio/app.py", "PY007/TinyLlama-1.1B-Chat-v0.1"),
             ("sft/finetune.py", "PY007/TinyLlama-1.1B-intermediate-step-240k-503b"),
             ("speculative_decoding/hf.py", "EleutherAI/pythia-12b"), ("speculative_decoding/llama.py", "huggyllama/llama-13b")]
    b, dist = _params_from_names(named)
    assert b == 1.0 and dist == {"1B": 3, "1.1B": 2, "12B": 1, "13B": 1}


def test_control_sizes_far_apart_have_no_majority():
    named = [("a.yaml", "Qwen/Qwen2.5-1.5B"), ("b.yaml", "Qwen/Qwen2.5-7B"), ("c.yaml", "Qwen/Qwen2.5-32B"),
             ("d.yaml", "meta-llama/Llama-3.1-8B")]
    b, _ = _params_from_names(named)
    assert b is None


def test_debug_and_ci_recipes_do_not_vote_on_the_size():
    """prime-rl: twelve ``configs/debug/**`` and CI configs run Qwen3-0.6B; the recipes users run name 0.6B to 744B.
    Without the debug/CI votes no size has a majority, and the scale is not claimed."""
    named = [(f"configs/debug/algo/{a}.toml", "Qwen/Qwen3-0.6B") for a in ("grpo", "opd", "rae", "echo", "max_rl")]
    named += [("configs/ci/integration/start.toml", "Qwen/Qwen3-0.6B"), ("examples/basic/reverse-text/rl.toml", "Qwen/Qwen3-0.6B"),
              ("examples/advanced/qwen3-30b-a3b/math.toml", "Qwen/Qwen3-30B-A3B"), ("examples/wiki/rl.toml", "Qwen/Qwen3-4B"),
              ("examples/advanced/glm/swe.toml", "zai-org/GLM-4.5-Air-106B")]
    b, dist = _params_from_names(named)
    assert b is None and dist == {"600M": 1, "30B": 1, "4B": 1, "106B": 1}
