"""D1-D8 logic beyond the checks' own examples: versions, defaults, guards, applicability and priorities."""

from __future__ import annotations

from checks.base import REGISTRY, all_checks
from checks.engine import AuditOptions, audit_files, build_facts, run_checks
from checks.model import CheckResult, Priority, Status
from checks.project import detect_project
from checks.rules.d_compute import dep_version

all_checks()


def run(check_id: str, files: dict[str, str]) -> CheckResult:
    facts = build_facts((p, t.encode()) for p, t in files.items())
    [result], _ = run_checks(facts, detect_project(facts), AuditOptions(), [REGISTRY[check_id]])
    return result


def test_dep_version_bounds():
    facts = build_facts([("requirements.txt", b"transformers>=4.38,<4.46\ntorch==2.4.0\nflash-attn\n")])
    assert dep_version(facts, "transformers")[:2] == ((4, 38), (4, 46))
    assert dep_version(facts, "torch")[:2] == ((2, 4, 0), (2, 4, 0))
    assert dep_version(facts, "flash-attn")[:2] == (None, None)


def test_hf_default_attention_is_partial():
    files = {"sft.py": "from trl import SFTConfig, SFTTrainer\nargs = SFTConfig(output_dir='out')\n"
                       "trainer = SFTTrainer(model='Qwen/Qwen2.5-0.5B', args=args, train_dataset=ds)\ntrainer.train()\n",
             "requirements.txt": "transformers>=4.45\n"}
    r = run("D1", files)
    assert r.status == Status.PARTIAL and r.priority == Priority.HIGH
    assert r.values == {"attn_implementation": "default", "sdpa_default": True}  # transformers >= 4.45: SDPA for certain
    assert "SDPA" in r.detail and "4.45" in r.detail
    loose = run("D1", {**files, "requirements.txt": "transformers>=4.28.0\n"})  # alpaca-lora: may still run eager attention
    assert loose.status == Status.PARTIAL and loose.values["sdpa_default"] is False
    old = run("D1", {**files, "requirements.txt": "transformers==4.31.0\n"})
    assert old.status == Status.UNUSED and old.values == {"attn_implementation": "eager", "advice_for": "transformers<4.34"}


def test_attn_implementation_from_an_argparse_default_and_a_launch_override():
    code = ("import argparse\nfrom transformers import AutoModelForCausalLM\np = argparse.ArgumentParser()\n"
            "p.add_argument('--attn_implementation', default='flash_attention_2')\nargs = p.parse_args()\n"
            "model = AutoModelForCausalLM.from_pretrained(args.model, attn_implementation=args.attn_implementation)\n")
    assert run("D1", {"train.py": code}).values == {"attn_implementation": "flash_attention_2"}
    eager = run("D1", {"train.py": code, "run.sh": "python train.py --attn_implementation eager\n"})
    assert eager.status == Status.UNUSED and eager.values == {"attn_implementation": "eager"}


def test_serving_project_gets_the_engines_attention():
    r = run("D1", {"serve.py": "from vllm import LLM\nllm = LLM('meta-llama/Llama-3.1-8B-Instruct')\nout = llm.generate(prompts)\n"})
    assert r.status == Status.USED


def test_flash_call_behind_a_flag_that_is_off():
    code = ("from flash_attn import flash_attn_func\nUSE_FLASH = False\ndef attn(q, k, v):\n    if USE_FLASH:\n"
            "        return flash_attn_func(q, k, v, causal=True)\n    return (q @ k.transpose(-1, -2)).softmax(-1) @ v\n")
    assert run("D1", {"model.py": code}).status == Status.UNUSED


def test_compile_disabled_or_in_the_else_branch():
    assert run("D2", {"t.py": "import torch\nm = torch.compile(m, disable=True)\n"}).status == Status.UNUSED
    code = ("import argparse\nimport torch\np = argparse.ArgumentParser()\np.add_argument('--no_compile', action='store_true')\n"
            "args = p.parse_args()\nmodel = model if args.no_compile else torch.compile(model)\n")
    assert run("D2", {"t.py": code}).status == Status.USED
    assert run("D2", {"t.py": code, "run.sh": "python t.py --no_compile\n"}).status == Status.UNUSED


def test_keras_compile_is_not_torch_compile():
    code = "import tensorflow as tf\nmodel = tf.keras.Sequential()\nmodel.compile(optimizer='adam', loss='mse')\n"
    assert run("D2", {"k.py": code}).status == Status.UNUSED
    assert run("D2", {"t.py": "import torch\nmodel = build()\nmodel.compile(mode='max-autotune')\n"}).status == Status.USED


def test_max_autotune_uses_cuda_graphs():
    assert run("D4", {"t.py": "import torch\nmodel = torch.compile(model, mode='max-autotune')\n"}).status == Status.USED
    assert run("D4", {"t.py": "import torch\nif False:\n    g = torch.cuda.CUDAGraph()\n"}).status == Status.UNUSED  # dead code
    assert run("D4", {"run.sh": "torchrun pretrain_gpt.py --cuda-graph-impl none\n"}).status == Status.UNUSED


def test_liger_priority_follows_the_model():
    hf = {"train.py": "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-7B')\n"}
    assert run("D5", hf).priority == Priority.HIGH
    custom = {"model.py": "import torch\nclass GPT(torch.nn.Module):\n    pass\n", "train.py": "loss.backward()\n"}
    assert run("D5", custom).priority == Priority.LOW
    bloom = {"train.py": "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('bigscience/bloom-7b1')\n"}
    unsupported = run("D5", bloom)
    assert unsupported.status == Status.UNUSED and unsupported.priority is None and "bloom" in unsupported.detail
    liger_bloom = {**bloom, "x.py": "from liger_kernel.transformers import LigerCrossEntropyLoss\nloss_fn = LigerCrossEntropyLoss()\n"}
    assert run("D5", liger_bloom).status == Status.USED


def test_liger_is_low_where_transformers_serves_only_tokenizers_conversion_or_a_frozen_text_encoder():
    # nanotron / torchtitan: their own model code; transformers loads a tokenizer, a checkpoint converter compares logits
    # with the HF model, and Flux's CLIP/T5 text encoders are frozen
    own = {
        "src/mylib/models/llama.py": "import torch\n\n\nclass LlamaModel(torch.nn.Module):\n    pass\n",
        "src/mylib/trainer.py": ("from transformers import AutoTokenizer\n\nfrom mylib.models.llama import LlamaModel\n\n\n"
                                 "def train(cfg):\n    tok = AutoTokenizer.from_pretrained(cfg.tokenizer)\n    model = LlamaModel(cfg)\n"
                                 "    for batch in loader:\n        loss = model(batch)\n        loss.backward()\n"),
        "run_train.py": "from mylib.trainer import train\n\ntrain(cfg)\n",
        "scripts/checkpoint_conversion/numerical_tests.py": (
            "from transformers import AutoModelForCausalLM\n\nhf = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.1-8B')\n"),
        "src/mylib/models/flux/hf_embedder.py": (
            "from torch import nn\nfrom transformers import CLIPTextModel\n\n\nclass HFEmbedder(nn.Module):\n"
            "    def __init__(self, version):\n        super().__init__()\n"
            "        self.hf_module = CLIPTextModel.from_pretrained(version).eval().requires_grad_(False)\n"),
    }
    def d5(files: dict[str, str]) -> CheckResult:  # the whole audit: the training path decides which loads count
        return next(r for r in audit_files([(p, t.encode()) for p, t in files.items()]).results if r.id == "D5")

    assert d5(own).priority == Priority.LOW
    trained = {**own, "src/mylib/trainer.py": own["src/mylib/trainer.py"].replace(
        "    model = LlamaModel(cfg)\n", "    model = AutoModelForCausalLM.from_pretrained(cfg.model)\n").replace(
        "import AutoTokenizer", "import AutoModelForCausalLM, AutoTokenizer")}
    assert d5(trained).priority == Priority.HIGH


def test_liger_alignment_losses_belong_to_g6():
    code = "from liger_kernel.chunked_loss import LigerFusedLinearDPOLoss\nloss_fn = LigerFusedLinearDPOLoss(beta=0.1)\n"
    assert run("D5", {"dpo.py": code}).status == Status.UNUSED


def test_hf_default_optimizer_is_fused_on_new_versions():
    train = "from transformers import Trainer, TrainingArguments\nargs = TrainingArguments(output_dir='o')\n"
    assert run("D6", {"train.py": train, "requirements.txt": "transformers>=4.56.0\ntorch>=2.8.0\n"}).status == Status.USED
    assert run("D6", {"train.py": train, "requirements.txt": "transformers>=4.56.0\ntorch>=2.4\n"}).status == Status.UNUSED


def test_megatron_launch_fuses_by_default_unless_turned_off():
    launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --bf16"
    files = {"run.sh": launch + "\n", "megatron/__init__.py": "import megatron\n"}
    assert run("D6", files).status == Status.USED
    files["run.sh"] = launch + " --no-masked-softmax-fusion --no-bias-gelu-fusion\n"
    assert run("D6", files).status == Status.UNUSED


def test_fp8_needs_multiples_of_16():
    cfg = {"model.json": '{\n  "hidden_size": 4104,\n  "vocab_size": 32000\n}\n'}
    assert run("D7", cfg).status == Status.USED  # 4104 = 8 x 513
    r = run("D7", {**cfg, "acc.yaml": "mixed_precision: fp8\n"})
    assert r.status == Status.UNUSED and r.values["hidden_size"] == 4104


def test_alignment_ignores_test_configs_and_reused_pad_tokens():
    tiny = run("D7", {"tests/test_tiny.py": "from transformers import LlamaConfig\ncfg = LlamaConfig(vocab_size=99, hidden_size=100)\n"})
    assert tiny.status == Status.NA and tiny.values == {"dims_visible": False} and tiny.priority is None
    llava = ("tokenizer.add_special_tokens({'pad_token': '[PAD]'})\nmodel.resize_token_embeddings(len(tokenizer))\n"
             "tokenizer.pad_token = tokenizer.unk_token\n")
    assert run("D7", {"train.py": llava}).values == {"dims_visible": False}
    gpt2 = run("D7", {"cfg.yaml": "vocab_size: 50257\nn_embd: 768\n"})
    assert gpt2.status == Status.UNUSED and gpt2.priority == Priority.MEDIUM


def test_triton_library_only_is_not_advised():
    r = run("D3", {"t.py": "import flag_gems\nflag_gems.enable()\n"})
    assert r.status == Status.UNUSED and r.priority is None
    assert run("D3", {"t.py": "import torch\nloss.backward()\n"}).priority == Priority.LOW


def test_flash_attention_3_counts_as_persistent():
    code = "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('x', attn_implementation='flash_attention_3')\n"
    r = run("D8", {"t.py": code})
    assert r.status == Status.USED and "FlashAttention-3" in r.detail
    assert run("D8", {"t.py": code.replace("_3", "_2")}).status == Status.UNUSED


def _tune_recipe(name: str, extra: str = "") -> str:
    return (f"output_dir: /tmp/{name}\ntokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\n"
            "  path: /tmp/Meta-Llama-3-8B-Instruct/original/tokenizer.model\n"
            "model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n"
            "dataset:\n  _component_: torchtune.datasets.alpaca_dataset\nseed: null\nshuffle: True\nbatch_size: 2\n"
            "optimizer:\n  _component_: torch.optim.AdamW\n  lr: 2e-5\ngradient_accumulation_steps: 1\ncompile: False\n"
            "dtype: bf16\nenable_activation_checkpointing: True\nlog_every_n_steps: 1\n" + extra)


def test_a_misaligned_dimension_in_a_minority_recipe_is_that_recipes_low_finding():
    """torchtune: one PPO recipe's reward model sets ``vocab_size: 32001``; the other recipes take their model from a
    builder. The project is not judged misaligned by that recipe, and step zero does not cite it."""
    files = {f"recipes/configs/llama3_1/{n}.yaml": _tune_recipe(n) for n in ("8B_full", "8B_lora", "8B_qlora", "70B_lora")}
    ppo = _tune_recipe("ppo", "reward_and_value_model:\n  _component_: torchtune.models.mistral.mistral_reward_7b\n"
                              "  num_classes: 1\n  vocab_size: 32001\n")
    files["recipes/configs/mistral/7B_full_ppo_low_memory.yaml"] = ppo
    files["recipes/full_finetune_distributed.py"] = "import torch\n\ndef train(cfg):\n    loss.backward()\n"
    r = run("D7", files)
    assert r.status == Status.UNUSED and r.values.get("minority") is True
    assert "1 of 5 recipes" in (r.detail or "") and "7B_full_ppo_low_memory.yaml:" in (r.detail or "")
    assert r.priority == Priority.LOW
    audit = audit_files((p, t.encode()) for p, t in files.items())
    assert not any("7B_full_ppo_low_memory" in x for x in audit.project.bottleneck_reasons)
    files_alone = {**files, **{p: _tune_recipe(p.rsplit("/", 1)[-1], "model_extra:\n  vocab_size: 32001\n") for p in files if "llama3_1" in p}}
    assert any("not multiples of 8" in x for x in audit_files((p, t.encode()) for p, t in files_alone.items()).project.bottleneck_reasons)
    # the same recipe alone is the project's verdict, at the check's priority
    alone = run("D7", {"recipes/configs/mistral/7B_full_ppo_low_memory.yaml": ppo})
    assert alone.status == Status.UNUSED and not alone.values.get("minority") and alone.priority == Priority.MEDIUM


def test_padding_in_an_adapter_merge_is_not_the_runs_vocabulary():
    # ``merge_adapter`` pads to 8 only when loading the adapter fails, after training; the run resizes unpadded
    files = {"llm/utils.py": (
        "from peft import PeftModel\nfrom transformers import AutoModelForCausalLM\n\n"
        "def merge_adapter(base, tokenizer, adapter):\n"
        "    model = AutoModelForCausalLM.from_pretrained(base)\n"
        "    try:\n        model.resize_token_embeddings(len(tokenizer))\n"
        "    except RuntimeError:\n        model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=8)\n"
        "    return PeftModel.from_pretrained(model, adapter).merge_and_unload()\n\n"
        "def get_model(name, tokenizer):\n    model = AutoModelForCausalLM.from_pretrained(name)\n"
        "    model.resize_token_embeddings(len(tokenizer))\n    return model\n")}
    r = run("D7", files)
    assert r.status == Status.UNUSED, r.detail
    assert all(e.line != 9 for e in r.evidence)


def test_an_opt_in_attention_hijack_elsewhere_does_not_bypass_a_recipes_eager():
    """axolotl: ``hijack_llama_attention()`` (behind ``xformers_attention``) replaces LlamaAttention.forward; a DeepSeek
    recipe's ``attn_implementation: eager`` is still eager, judged among the recipes, not 'bypassed'."""
    files = {
        "src/proj/monkeypatch/llama_attn_hijack_xformers.py": (
            "import transformers\n\ndef hijack_llama_attention():\n"
            "    transformers.models.llama.modeling_llama.LlamaAttention.forward = xformers_forward\n\n"
            "def xformers_forward(self, hidden_states, **kwargs):\n    return self.o_proj(hidden_states)\n"),
        "src/proj/train.py": ("from transformers import AutoModelForCausalLM\n\ndef load(cfg):\n"
                              "    return AutoModelForCausalLM.from_pretrained(cfg.base_model, attn_implementation=cfg.attn_implementation)\n"),
        "examples/llama-3/lora-8b.yml": "base_model: meta-llama/Meta-Llama-3-8B\nattn_implementation: flash_attention_2\n",
        "examples/qwen2/lora-7b.yml": "base_model: Qwen/Qwen2-7B\nattn_implementation: flash_attention_2\n",
        "examples/deepseek-v4/lora.yaml": "base_model: deepseek-ai/DeepSeek-V4-Flash\nattn_implementation: eager\n",
    }
    r = run("D1", files)
    assert r.status == Status.USED
    assert "bypassed" not in (r.detail or "") and "eager attention in 1 of 3 recipes" in (r.detail or "")


def test_a_few_eager_training_paths_beside_many_fused_ones_are_low_priority():
    # axolotl: one DeepSeek-V4 recipe (its kernels own attention) and the EBFT strided trainer ask for eager; 20+ sites
    # choose flash_attention_2
    trainer = ("from transformers import AutoModelForCausalLM\n\n\ndef load(cfg):\n"
               "    return AutoModelForCausalLM.from_pretrained(cfg.base_model, attn_implementation='eager')\n\n\n"
               "def train(cfg, loader):\n    model = load(cfg)\n    for batch in loader:\n        model(**batch).loss.backward()\n")
    recipe = "base_model: meta-llama/Llama-3.1-8B\nattn_implementation: {a}\nmicro_batch_size: 2\n"

    def d1(n_fused: int) -> CheckResult:
        files = {"src/mylib/core/trainers/ebft/strided.py": trainer, "examples/dsv4/lora.yaml": recipe.format(a="eager"),
                 **{f"examples/m{i}/lora.yaml": recipe.format(a="flash_attention_2") for i in range(n_fused)}}
        return next(r for r in audit_files([(p, t.encode()) for p, t in files.items()]).results if r.id == "D1")

    many = d1(8)
    assert many.status == Status.PARTIAL and many.priority == Priority.LOW, (many.status, many.priority, many.detail)
    few = d1(1)
    assert few.status == Status.PARTIAL and few.priority == Priority.HIGH, (few.status, few.priority, few.detail)
