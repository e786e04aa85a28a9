"""Round 30 (issue #9): OpenRLHF at HEAD, read as a new user would. Its launch scripts hold the flags in a heredoc
(``read -r -d '' training_commands <<EOF`` ... ``deepspeed --module $training_commands``); its strategy computes the
accumulation from the global and micro batch; its 4-bit branch sets ``BitsAndBytesConfig(load_in_4bit=True)`` inside
``if load_in_4bit:``; its padding removal is a helper called under ``if self.packing_samples:``; its trainers are its
own classes, not HF's."""

from __future__ import annotations

from checks.rules.c_memory import _ratio_strategy
from tests.rules_ghj.ghj_util import audit

_ACTOR = (
    "import torch\nfrom peft import LoraConfig, get_peft_model\n"
    "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\n"
    "from openrlhf.models.ring_attn_utils import unpad_and_slice_tensor\n\n\n"
    "class Actor(torch.nn.Module):\n"
    "    def __init__(self, pretrain, load_in_4bit=False, lora_rank=0, packing_samples=False):\n"
    "        super().__init__()\n        nf4_config = None\n"
    "        if load_in_4bit:\n            nf4_config = BitsAndBytesConfig(\n                load_in_4bit=True,\n"
    "                bnb_4bit_quant_type='nf4',\n            )\n"
    "        self.model = AutoModelForCausalLM.from_pretrained(pretrain, quantization_config=nf4_config)\n"
    "        if lora_rank > 0:\n            lora_config = LoraConfig(r=lora_rank, lora_alpha=16)\n"
    "            self.model = get_peft_model(self.model, lora_config)\n"
    "        self.packing_samples = packing_samples\n\n"
    "    def forward(self, sequences, attention_mask):\n"
    "        if self.packing_samples:\n"
    "            sequences, position_ids, indices = unpad_and_slice_tensor(sequences, attention_mask)\n"
    "        return self.model(sequences).logits\n"
)
_RING = (
    "from flash_attn.bert_padding import unpad_input\n\n\n"
    "def unpad_and_slice_tensor(sequences, attention_mask):\n"
    "    sequences, indices, cu_seqlens, _, _ = unpad_input(sequences.unsqueeze(-1), attention_mask)\n"
    "    return sequences, cu_seqlens, indices\n"
)
_TRAIN = (
    "import argparse\nfrom openrlhf.models.actor import Actor\nfrom openrlhf.trainer.sft_trainer import SFTTrainer\n\n\n"
    "def train(args):\n"
    "    model = Actor(args.model.model_name_or_path, load_in_4bit=args.ds.load_in_4bit, lora_rank=args.ds.lora.rank,\n"
    "                  packing_samples=args.ds.packing_samples)\n"
    "    trainer = SFTTrainer(model=model, strategy=None, batch_size=args.train.batch_size)\n    trainer.fit(args)\n\n\n"
    "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--ds.load_in_4bit', action='store_true', default=False)\n"
    "    parser.add_argument('--ds.lora.rank', type=int, default=0)\n"
    "    parser.add_argument('--ds.packing_samples', action='store_true', default=False)\n"
    "    train(parser.parse_args())\n"
)
_SFT_TRAINER = (
    "class SFTTrainer:\n    def __init__(self, model, strategy, batch_size=1):\n        self.model = model\n\n"
    "    def fit(self, args):\n        for batch in self.loader:\n            loss = self.model(*batch).mean()\n"
    "            self.strategy.backward(loss, self.model, self.optimizer)\n"
)


def _repo(extra_flags: str) -> dict[str, str]:
    files = _ratio_strategy(256, 2)
    files["examples/scripts/train_sft.sh"] = files["examples/scripts/train_sft.sh"].replace(
        "   --ds.zero_stage 2\n", f"   --ds.zero_stage 2{extra_flags}\n")
    files["openrlhf/cli/train_sft.py"] = _TRAIN
    files |= {"openrlhf/models/actor.py": _ACTOR, "openrlhf/models/ring_attn_utils.py": _RING,
              "openrlhf/trainer/sft_trainer.py": _SFT_TRAINER, "openrlhf/__init__.py": "", "openrlhf/trainer/__init__.py": ""}
    return files


def test_heredoc_launch_sets_the_lora_rank_and_the_4bit_branch_is_not_qlora():
    r, _ = audit(_repo(" \\\n   --ds.lora.rank 64"), "G4")
    assert r.status.value == "used" and r.detail == "LoRA/PEFT fine-tuning", r.detail
    assert (r.evidence[0].path, r.evidence[0].line) == ("examples/scripts/train_sft.sh", 9)  # the launch's flag first


def test_control_a_launch_that_loads_in_4bit_is_qlora():
    r, _ = audit(_repo(" \\\n   --ds.lora.rank 64 \\\n   --ds.load_in_4bit"), "G4")
    assert r.detail == "QLoRA fine-tuning", r.detail


def test_accumulation_computed_from_the_launch_sizes():
    r, _ = audit(_repo(""), "C5")
    assert r.status.value == "used"
    assert r.detail.startswith("the trainer accumulates global batch / (micro-batch x data-parallel ranks) micro-batches per "
                               "step (openrlhf/utils/deepspeed/deepspeed.py:12); 1 of 1 launches"), r.detail
    assert r.values["gradient_accumulation_steps"] == 16


def test_padding_removed_by_a_helper_called_under_the_packing_flag():
    r, _ = audit(_repo(" \\\n   --ds.packing_samples"), "F7")
    assert r.status.value == "partial" and "unpad_input at openrlhf/models/ring_attn_utils.py:5" in r.detail, r.detail
    r, _ = audit(_repo(""), "F7")  # the flag left at its default: the helper never runs
    assert r.status.value == "unused", r.detail


def test_the_projects_own_trainer_is_not_an_hf_trainer():
    files = _repo("")
    del files["openrlhf/utils/deepspeed/deepspeed.py"]  # no accumulation count computed: C5 falls back to the trainer's
    r, _ = audit(files, "C5")
    assert "HF Trainer" not in (r.detail or ""), r.detail


def test_with_no_launch_the_parser_defaults_give_the_sizes():
    """OpenRLHF 0.11.2's wheel ships no launch script: ``--train.batch_size`` 128 over ``--train.micro_batch_size`` 8."""
    files = _ratio_strategy(256, 2)
    del files["examples/scripts/train_sft.sh"]
    r, _ = audit(files, "C5")
    assert r.status.value == "used" and "1 of 1 argument parsers' defaults set sizes that accumulate (train.batch_size 128 over " \
        "a micro-batch of 8 at openrlhf/cli/train_sft.py:4: 2 micro-batches per step on 8 GPUs)" in r.detail, r.detail


def test_an_accumulation_of_one_set_for_one_optimizer_only_is_not_the_runs():
    """collie: ``ds_config["gradient_accumulation_steps"] = 1`` only when the optimizer is LOMO; the config's own default
    (1) is what runs get, and is what the finding cites."""
    files = {
        "collie/config.py": ("from dataclasses import dataclass, field\n\n\n@dataclass\nclass CollieConfig:\n"
                             "    train_micro_batch_size: int = field(default=1)\n"
                             "    gradient_accumulation_steps: int = field(default=1)\n"),
        "collie/controller/trainer.py": (
            "class Trainer:\n    def __init__(self, model, optimizer, config):\n        self.config = config\n"
            "        if 'Lomo' in optimizer.__class__.__name__:\n            if self.config.gradient_accumulation_steps > 1:\n"
            "                self.config.ds_config['gradient_accumulation_steps'] = 1\n\n"
            "    def train(self):\n        for batch in self.loader:\n            loss = self.model(batch)\n"
            "            self.engine.backward(loss)\n            self.engine.step()\n"),
    }
    r, _ = audit(files, "C5")
    assert r.status.value == "unused" and r.detail == "gradient_accumulation_steps is 1", r.detail
    assert [(e.path, e.line) for e in r.evidence] == [("collie/config.py", 7)]
