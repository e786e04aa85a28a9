"""Overview rules of round 13 of issue #9 (openpipe-art): each test fails on the rule before it."""

from __future__ import annotations

from .claims import audit as _audit

_DEMO_PIPELINE = (
    "import asyncio\n\nfrom mylib.hosted import HostedBackend\n\nfrom . import PipelineTrainer\n\n"
    "BASE_MODEL = \"Qwen/Qwen3-30B-A3B-Instruct-2507\"\nMODEL_NAME = \"pipeline-demo\"\n\n\n"
    "async def main() -> None:\n    backend = HostedBackend()\n"
    "    trainer = PipelineTrainer(base_model=BASE_MODEL, name=MODEL_NAME, backend=backend)\n    await trainer.train()\n\n\n"
    "if __name__ == \"__main__\":\n    asyncio.run(main())\n")


def _library(demo: str) -> dict[str, str]:
    return {
        "mylib/__init__.py": "from mylib.trainer import train_step\n",
        "mylib/trainer.py": (
            "import torch\n\n\ndef train_step(model, optimizer, batches):\n    for batch in batches:\n"
            "        loss = model(batch.to('cuda')).loss\n        loss.backward()\n        optimizer.step()\n        optimizer.zero_grad()\n"),
        "mylib/pipeline/__init__.py": "class PipelineTrainer:\n    pass\n",
        "mylib/pipeline/demo_pipeline.py": demo,
        "mylib/hosted.py": "class HostedBackend:\n    pass\n",
    }


def test_a_model_named_only_by_a_demo_module_off_the_training_path_does_not_size_the_run():
    # a package's runnable demo (``BASE_MODEL = ...`` then ``asyncio.run(main())``) that no entry point reaches: the model
    # it names is the demo's; it gave "compute-bound: large dense model (~30B, from the model name ...)"
    a = _audit(_library(_DEMO_PIPELINE))
    assert "mylib/pipeline/demo_pipeline.py" not in a.project.training_files
    assert a.project.estimated_params is None
    assert not any("~30B" in r for r in a.project.bottleneck_reasons)


def test_the_same_name_in_a_recipe_still_sizes_the_model():
    files = _library(_DEMO_PIPELINE)
    files["configs/grpo.yaml"] = "base_model: Qwen/Qwen3-30B-A3B-Instruct-2507\nlearning_rate: 5.0e-6\nnum_epochs: 1\n"
    a = _audit(files)
    assert a.project.estimated_params == "30B"


def _sft(model: str) -> dict[str, str]:
    return {"train.py": (
        "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\n"
        f"model = AutoModelForCausalLM.from_pretrained(\"{model}\", attn_implementation=\"flash_attention_2\")\n"
        "args = TrainingArguments(output_dir=\"out\", bf16=True, per_device_train_batch_size=4, gradient_accumulation_steps=8,\n"
        "                         learning_rate=1e-5, logging_steps=50, save_steps=500)\n"
        "trainer = Trainer(model=model, args=args, train_dataset=train_ds)\ntrainer.train()\n")}


def test_a_mixture_of_experts_named_with_its_active_size_is_not_called_dense():
    # ``Qwen3-30B-A3B`` runs ~3B parameters per token: it was "large dense model (~30B, from the model name ...)"
    a = _audit(_sft("Qwen/Qwen3-30B-A3B-Instruct-2507"))
    assert a.project.estimated_params == "30B"
    assert not any("dense" in r for r in a.project.bottleneck_reasons)
    assert not any("~30B" in r and "compute-bound" in r for r in a.project.bottleneck_reasons)


def test_a_large_active_size_is_a_large_mixture_of_experts_and_a_dense_name_stays_dense():
    big = _audit(_sft("Qwen/Qwen3-235B-A22B"))
    assert any("large mixture-of-experts model (~235B total, ~22B active per token" in r for r in big.project.bottleneck_reasons)
    dense = _audit(_sft("meta-llama/Llama-3.1-70B"))
    assert any("large dense model (~70B" in r for r in dense.project.bottleneck_reasons)
