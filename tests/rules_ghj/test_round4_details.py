"""Round 4 (held-out misses): the details and evidence a status cites must say what the code does."""

from __future__ import annotations

from checks.engine import build_facts
from checks.rules._helpers import guard_off
from checks.rules.d_compute import rounded_multiple

from .ghj_util import audit

_OWN_GENERATE = {
    "model.py": ("import torch\nimport torch.nn as nn\n\nclass GPT(nn.Module):\n"
                 "    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):\n"
                 "        for _ in range(max_new_tokens):\n            logits, _ = self(idx)\n"
                 "            idx = torch.cat((idx, logits.argmax(-1)[:, -1:]), dim=1)\n        return idx\n"),
    "sample.py": "from model import GPT\nmodel = GPT.from_pretrained('gpt2')\ny = model.generate(x, 100, temperature=0.8, top_k=200)\n",
}


def test_j5_names_the_projects_own_generate_loop():
    result, _ = audit(_OWN_GENERATE, "J5")
    assert result.detail == "generation runs in PyTorch eager (the project's own `generate` loop)"


def test_j5_hf_generate_is_named_hf():
    files = {"infer.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                         "out = model.generate(**inputs, max_new_tokens=256, do_sample=True)\n"}
    result, _ = audit(files, "J5")
    assert result.detail == "generation runs in PyTorch eager (HF `generate`)"


def test_rounded_multiple_reads_hand_written_round_ups():
    assert rounded_multiple("int(8 * math.ceil(len(self.tokenizer) / 8.0))") == 8
    assert rounded_multiple("(n + 63) // 64 * 64") == 64
    assert rounded_multiple("find_multiple(vocab_size, 128)") == 128
    assert rounded_multiple("len(tokenizer)") is None
    assert rounded_multiple("len(tokenizer) * 2") is None


def test_d7_unpadded_resize_quotes_the_argument():
    files = {"train.py": ("from transformers import AutoModelForCausalLM, AutoTokenizer\n"
                          "tokenizer = AutoTokenizer.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
                          "tokenizer.add_special_tokens({'pad_token': '<pad>'})\n"
                          "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
                          "model.resize_token_embeddings(len(tokenizer))\n")}
    result, _ = audit(files, "D7")
    assert result.status.value == "unused"
    assert "resized to `len(tokenizer)` (train.py:5), not rounded up to a multiple of 8" in result.detail


def test_guard_with_string_and_enum_comparisons_is_off_only_when_every_value_misses():
    enum = "from enum import Enum\n\nclass PEFT_METHOD(Enum):\n    LORA = \"lora\"\n    PT = \"pt\"\n"
    code = ("from peft import LoraConfig\nimport argparse\nfrom methods import PEFT_METHOD\n"
            "p = argparse.ArgumentParser()\np.add_argument('--peft_method', type=str, default='none')\nargs = p.parse_args()\n"
            "if args.peft_method == PEFT_METHOD.LORA.value:\n    cfg = LoraConfig(r=8)\n"
            "if args.peft_method in ('pt', 'prefix'):\n    cfg2 = LoraConfig(r=4)\n"
            "if args.peft_method != 'pt':\n    cfg3 = LoraConfig(r=2)\n")
    facts = build_facts([("methods.py", enum.encode()), ("train.py", code.encode())])
    by_line = {c.line: c for c in facts.calls("LoraConfig")}
    assert guard_off(facts, by_line[8])  # 'none' == 'lora': never
    assert guard_off(facts, by_line[10])  # 'none' in ('pt', 'prefix'): never
    assert not guard_off(facts, by_line[12])  # 'none' != 'pt': always
    launched = build_facts([("methods.py", enum.encode()), ("train.py", code.encode()),
                            ("run.sh", b"python train.py --peft_method lora\n")])
    assert not guard_off(launched, {c.line: c for c in launched.calls("LoraConfig")}[8])


def test_g4_unused_detail_cites_the_switch_not_a_local_condition():
    files = {
        "trl/trainer/model_config.py": ("from dataclasses import dataclass\n\n@dataclass\nclass ModelConfig:\n"
                                        "    model_name_or_path: str = None\n    use_peft: bool = False\n    lora_r: int = 16\n"),
        "trl/trainer/utils.py": ("from peft import LoraConfig\n\ndef get_peft_config(model_config):\n"
                                 "    if model_config.use_peft is False:\n        return None\n"
                                 "    return LoraConfig(r=model_config.lora_r)\n"),
        "trl/trainer/sft_trainer.py": ("from peft import get_peft_model\nfrom transformers import Trainer\n\n"
                                       "class SFTTrainer(Trainer):\n    def __init__(self, model, args=None, peft_config=None):\n"
                                       "        is_sharded_qlora = False\n"
                                       "        if peft_config is not None and is_sharded_qlora:\n"
                                       "            model = get_peft_model(model, peft_config)\n"
                                       "        super().__init__(model=model, args=args)\n"),
        "trl/commands/scripts/sft.py": ("from trl import ModelConfig, SFTTrainer, get_peft_config\n"
                                        "trainer = SFTTrainer(model_config.model_name_or_path, peft_config=get_peft_config(model_config))\n"
                                        "trainer.train()\n"),
    }
    result, _ = audit(files, "G4")
    assert result.status.value == "unused"
    assert "ModelConfig.use_peft is False at trl/trainer/model_config.py:6" in result.detail
    assert "is_sharded_qlora" not in result.detail
    assert [(e.path, e.line) for e in result.evidence] == [("trl/trainer/model_config.py", 6)]
