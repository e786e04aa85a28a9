"""Round 52 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.roles import TEST, path_role

from .claims import audit as _audit
from .claims import check as _check

# --- google/maxtext: a JAX project read with PyTorch spellings -------------------------------------------------------------

_MAXTEXT_TRAIN = (
    "import functools\nimport jax\nimport optax\n\n\ndef train_step(model, config, state, data, dropout_rng):\n"
    "    grads = jax.grad(lambda p: model.apply(p, data).mean())(state.params)\n    return state.apply_gradients(grads=grads)\n\n\n"
    "def train_loop(config, state, model, data_iterator):\n"
    "    functional_train = functools.partial(train_step, model, config)\n"
    "    p_train_step = jax.jit(\n        functional_train,\n        donate_argnums=0,\n    )\n"
    "    for step in range(config.steps):\n        state = p_train_step(state, next(data_iterator), None)\n")


def test_a_jitted_function_bound_to_a_train_step_name_is_jax_training() -> None:
    project = _audit({"MaxText/train.py": _MAXTEXT_TRAIN}).project
    assert project.notes.get("jax_training", "").startswith("jax.jit on p_train_step (MaxText/train.py:"), project.notes
    # control: a jit bound to another name (an evaluation step) is not the training step
    project = _audit({"MaxText/train.py": _MAXTEXT_TRAIN.replace("p_train_step", "p_eval_step")}).project
    assert "jax_training" not in project.notes
    # control: a PyTorch trainer run beside the JAX driver (tevatron's HF Trainer subclass): the project trains both ways
    project = _audit({"driver/jax_train.py": _MAXTEXT_TRAIN,
                      "driver/train.py": ("from transformers import Trainer\n\n\ndef main(model, args, ds):\n"
                                          "    trainer = Trainer(model=model, args=args, train_dataset=ds)\n    trainer.train()\n")}).project
    assert "jax_training" not in project.notes


# --- FreedomIntelligence/LLMZoo: recipes of two sizes read as "scale unknown" -------------------------------------------------

_FASTCHAT_TRAIN = (
    "import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n"
    "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n")


def _launch(model: str) -> str:
    return (f"#!/bin/bash\ntorchrun --nproc_per_node=8 train.py \\\n    --model_name_or_path {model} \\\n"
            "    --bf16 True \\\n    --output_dir out\n")


def test_recipes_of_several_sizes_give_a_range() -> None:
    files = {"train.py": _FASTCHAT_TRAIN, "scripts/train_chimera_7b.sh": _launch("llama_hf_7b"),
             "scripts/train_chimera_13b.sh": _launch("llama_hf_13b")}
    project = _audit(files).project
    assert project.estimated_params is None
    assert project.notes.get("params_range") == "7B-13B", project.notes
    assert project.notes["params_range_sources"] == ["scripts/train_chimera_7b.sh:3", "scripts/train_chimera_13b.sh:3"]
    # control: a majority size is the size
    files["scripts/train_vicuna_7b.sh"] = _launch("llama_hf_7b")
    files["scripts/train_alpaca_7b.sh"] = _launch("llama_hf_7b")
    project = _audit(files).project
    assert project.estimated_params == "7B" and "params_range" not in project.notes, project.notes


# --- allenai/molmo: empty_cache() while restoring a checkpoint read as a training-loop anti-pattern ----------------------------

_MOLMO_CKPT = (
    "import gc\nimport torch\n\n\ndef restore_checkpoint(load_path, dist_model, optim, world_size, rank):\n"
    "    state = torch.load(load_path, map_location='cpu')\n    for turn in range(world_size):\n        if turn == rank:\n"
    "            optim.load_state_dict(state)\n            gc.collect()\n            torch.cuda.empty_cache()\n")
_MOLMO_TRAIN = (
    "import torch\nfrom olmo.checkpoint import restore_checkpoint\n\n\ndef fit(model, optim, loader):\n"
    "    restore_checkpoint('ckpt', model, optim, 8, 0)\n    for batch in loader:\n        loss = model(batch).loss\n"
    "        loss.backward()\n        optim.step()\n")


def test_empty_cache_while_restoring_a_checkpoint_is_no_training_loop_finding() -> None:
    files = {"olmo/checkpoint.py": _MOLMO_CKPT, "olmo/train.py": _MOLMO_TRAIN}
    c6 = _check(_audit(files), "C6")
    assert not c6.findings, c6.findings
    # control: the same call in the step loop is the finding
    files["olmo/train.py"] = _MOLMO_TRAIN.replace("        optim.step()\n", "        optim.step()\n        torch.cuda.empty_cache()\n")
    c6 = _check(_audit(files), "C6")
    assert [(e.path, e.line) for e in c6.findings] == [("olmo/train.py", 11)], c6.findings


# --- google/maxtext: I3 "every step" from its converters and end-to-end tests; lsdefine/simple_GRPO: a sentence as a model ---

_MAXTEXT_CONVERT = (
    "import checkpointing\n\n\ndef convert(base_output_directory):\n  enable_checkpointing = True\n"
    "  save_interval_steps = 1\n  return checkpointing.create_orbax_checkpoint_manager(\n"
    "      base_output_directory, enable_checkpointing, save_interval_steps)\n")


def test_a_converters_save_interval_and_end_to_end_tests_are_not_the_runs() -> None:
    files = {"MaxText/train.py": _MAXTEXT_TRAIN, "MaxText/convert_gemma_chkpt.py": _MAXTEXT_CONVERT,
             "MaxText/llama_or_mistral_ckpt.py": _MAXTEXT_CONVERT,
             "MaxText/configs/base.yml": "run_name: ''\nenable_checkpointing: True\ncheckpoint_period: 10_000\nsteps: 150_001\n",
             **{f"end_to_end/tpu/{m}/test_{m}.sh": ("python3 MaxText/train.py MaxText/configs/base.yml "
                                                   "checkpoint_period=5 steps=10\n") for m in ("gemma", "llama2", "mixtral")}}
    # (maxtext's own ``checkpoint_period`` is no key I3 reads; Detectron2 spells its solver's the same: not judged, not "every step")
    i3 = _check(_audit(files), "I3")
    assert i3.status.value == "n/a" and i3.detail.startswith("not judged:"), i3.detail
    # maxtext's ``end_to_end/`` scripts are its end-to-end tests (``checkpoint_period=5 steps=10``), context like ``e2e/``
    assert path_role("end_to_end/tpu/gemma/test_gemma.sh", "shell")[0] == TEST
    # control: the same manager settings in a module not named for a checkpoint tool are the run's
    files["MaxText/train_utils.py"] = _MAXTEXT_CONVERT
    assert _check(_audit(files), "I3").status.value == "unused"


def test_a_sentence_is_no_model_name() -> None:
    files = {"train.py": _FASTCHAT_TRAIN, "scripts/train_chimera_7b.sh": _launch("llama_hf_7b"),
             "Auto_Program/config.py": 'train_config = {\n    "model_path": "here is the base model path",\n}\n'}
    assert "here is the base model path" not in _audit(files).project.model_names
    files["Auto_Program/config.py"] = 'train_config = {\n    "model_path": "Qwen/Qwen2.5-7B",\n}\n'
    assert "Qwen/Qwen2.5-7B" in _audit(files).project.model_names
