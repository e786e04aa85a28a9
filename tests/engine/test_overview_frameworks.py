"""The overview's frameworks are the ones the project trains with: a library imported only to load weights is not one."""

from __future__ import annotations

from checks.engine import audit_files

TRAIN = ("import torch\nfrom torch.distributed.fsdp import fully_shard\n\n"
         "def train(model, loader, opt):\n    fully_shard(model)\n    for batch in loader:\n"
         "        loss = model(batch).loss\n        loss.backward()\n        opt.step()\n")
CONVERTER = ("try:\n    from accelerate import init_empty_weights\nexcept ImportError:\n    init_empty_weights = None\n\n"
             "def load_hf_model(config):\n    with init_empty_weights():\n        return AutoModelForCausalLM.from_config(config)\n")


def _frameworks(files: dict[str, str]) -> list[str]:
    return audit_files((p, t.encode()) for p, t in files.items()).project.frameworks


def test_accelerate_imported_only_to_build_empty_weights_is_not_a_framework():
    # olmo-core: ``from accelerate import init_empty_weights`` in its HF checkpoint converter
    assert "accelerate" not in _frameworks({"src/pkg/train.py": TRAIN, "src/pkg/nn/hf/checkpoint.py": CONVERTER})


def test_accelerate_imported_only_for_set_seed_is_not_a_framework():
    # SpecForge ``train.py``: ``from accelerate.utils import set_seed`` seeds the RNGs; FSDP runs the training
    seeding = "from accelerate.utils import set_seed\n\n\ndef main(args):\n    set_seed(args.seed)\n"
    assert "accelerate" not in _frameworks({"src/pkg/train.py": TRAIN, "src/pkg/cli.py": seeding})
    # with its Accelerator beside it, it is
    driver = seeding + "from accelerate import Accelerator\n\naccelerator = Accelerator()\n"
    assert "accelerate" in _frameworks({"src/pkg/train.py": TRAIN, "src/pkg/cli.py": driver})


def test_accelerate_that_drives_training_is_a_framework():
    driver = "from accelerate import Accelerator\n\naccelerator = Accelerator(mixed_precision='bf16')\nmodel, opt = accelerator.prepare(model, opt)\n"
    assert "accelerate" in _frameworks({"src/pkg/train.py": TRAIN, "src/pkg/nn/hf/checkpoint.py": CONVERTER, "src/pkg/launch.py": driver})
    assert "accelerate" in _frameworks({"src/pkg/train.py": TRAIN, "run.sh": "accelerate launch src/pkg/train.py\n",
                                        "src/pkg/nn/hf/checkpoint.py": CONVERTER})


def _overview(files: dict[str, str]):
    return audit_files((p, t.encode()) for p, t in files.items()).project


def test_model_names_are_models_the_project_trains():
    """ms-swift: a token counter loads a tokenizer by name, a reward plugin calls a hosted API, a trainer registry maps
    names to classes, a speech encoder loads whisper weights: none of them is the model, nor its size."""
    trainer = ("from transformers import AutoModelForCausalLM, Trainer\n\ndef train(args):\n"
               "    model = AutoModelForCausalLM.from_pretrained(args.model)\n    Trainer(model=model, args=args).train()\n")
    files = {
        "swift/llm/train/sft.py": trainer,
        "swift/plugin/env.py": ("def count_qwen_tokens(messages):\n    from modelscope import AutoTokenizer\n"
                                "    model_name = 'Qwen/Qwen2.5-3B-Instruct'\n    tokenizer = AutoTokenizer.from_pretrained(model_name)\n"
                                "    return len(tokenizer.apply_chat_template(messages))\n"),
        "swift/plugin/prm.py": ("def score(client, messages):\n"
                                "    completion = client.chat.completions.create(\n        model='qwen-max', messages=messages)\n"
                                "    return completion.choices[0].message.content\n"),
        "swift/trainers/trainer_factory.py": "TRAINING_ARGS_MAPPING = {\n    'rm': 'swift.trainers.RewardConfig',\n}\n",
        "swift/llm/model/model/llama.py": ("import whisper\n\ndef get_model_tokenizer_omni(model_dir):\n"
                                           "    return whisper.load_model('large-v3', download_root=model_dir)\n"),
    }
    p = _overview(files)
    assert p.model_names == [] and p.params_billions is None
    # a model the training script names is still one
    named = _overview({**files, "swift/llm/train/sft.py": trainer.replace("args.model", "'Qwen/Qwen2.5-7B-Instruct'")})
    assert named.model_names == ["Qwen/Qwen2.5-7B-Instruct"]
