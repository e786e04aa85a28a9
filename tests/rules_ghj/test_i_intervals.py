"""I3-I5 (issue 9): intervals resolved as the guarding file sees them, and no "sane" claim without a site."""

from __future__ import annotations

from checks.base import REGISTRY, all_checks
from checks.engine import AuditOptions, build_facts, run_checks
from checks.project import detect_project


def _run(files: dict[str, str], *ids: str):
    all_checks()
    facts = build_facts((p, t.encode()) for p, t in files.items())
    results, _ = run_checks(facts, detect_project(facts), AuditOptions(), [REGISTRY[i] for i in ids])
    return {r.id: r for r in results}


LITGPT = {
    "litgpt/args.py": "from dataclasses import dataclass\n@dataclass\nclass TrainArgs:\n    save_interval: int = 1000\n",
    "litgpt/pretrain.py": (
        "def fit(fabric, model, optimizer, train, state):\n"
        "    for batch in train_iterator:\n        loss = model(batch)\n        fabric.backward(loss)\n        optimizer.step()\n"
        "        if train.save_interval is not None and state['step_count'] % train.save_interval == 0:\n"
        "            save_checkpoint(fabric, state, out_dir)\n"),
    "tests/test_pretrain.py": "from litgpt.args import TrainArgs\ndef test_pretrain():\n    TrainArgs(save_interval=1)\n",
}


def test_a_tests_interval_does_not_decide_the_loop_guard():
    r = _run(LITGPT, "I3")["I3"]
    assert r.status.value == "used" and not r.findings


def test_nothing_seen_is_said_so_not_called_sane():
    r = _run({"train.py": "import torch\nmodel = torch.nn.Linear(2, 2)\n"}, "I3", "I4", "I5")
    for cid in ("I3", "I4", "I5"):  # not judged: n/a (out of the score), never a "used" that claims a sane frequency
        assert r[cid].status.value == "n/a" and r[cid].detail.startswith("not judged"), r[cid].detail
        assert "sane" not in r[cid].detail and not r[cid].recommendation


def test_a_floor_for_tiny_data_is_not_the_logging_interval():
    # the interval is computed from the data size, floored at 1 (``if logging_steps == 0``) and capped at 25: the floor
    # made I4 "every step" and I5 "every step" before; the cap is the interval for any real data set
    files = {
        "llm/params.py": "from pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                         "    logging_steps: int = Field(-1, title='steps between logging events')\n"
                         "    log: str = Field('none', title='tracker')\n",
        "llm/train.py": (
            "from transformers import Trainer, TrainingArguments\n\n"
            "def configure_logging_steps(config, train_data):\n"
            "    if config.logging_steps == -1:\n"
            "        logging_steps = int(0.2 * len(train_data) / config.batch_size)\n"
            "        if logging_steps == 0:\n            logging_steps = 1\n"
            "        if logging_steps > 25:\n            logging_steps = 25\n"
            "    else:\n        logging_steps = config.logging_steps\n"
            "    return logging_steps\n\n"
            "def train(config, model, data):\n"
            "    args = TrainingArguments(output_dir='out', logging_steps=configure_logging_steps(config, data),\n"
            "                             report_to=config.log)\n"
            "    Trainer(model=model, args=args, train_dataset=data).train()\n"),
    }
    r = _run(files, "I4")["I4"]
    assert r.status.value == "used" and "logging_steps=25" in r.detail, r.detail
    assert (r.evidence[0].path, r.evidence[0].line) == ("llm/train.py", 9)


def test_a_config_key_string_is_not_a_tracker_name():
    # ``params["log"] = self.config["log"]``: "log" is the key read, not a tracker; the tracker is the preset's value
    files = {
        "app/parser.py": "class Parser:\n    def parse(self):\n        params = {}\n"
                         "        params['log'] = self.config['log']\n        return params\n",
        "app/presets.py": "from llm.params import LLMParams\nPRESET = LLMParams(log='tensorboard', logging_steps=50)\n",
        "llm/params.py": "from pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                         "    logging_steps: int = Field(50)\n    log: str = Field('none')\n",
        "llm/train.py": ("from transformers import Trainer, TrainingArguments\n\n"
                         "def train(config, model, data):\n"
                         "    args = TrainingArguments(output_dir='out', logging_steps=config.logging_steps, report_to=config.log)\n"
                         "    Trainer(model=model, args=args, train_dataset=data).train()\n"),
    }
    r = _run(files, "I5")["I5"]
    assert "log," not in r.detail and "reporting to log" not in r.detail, r.detail


def test_a_save_strategy_of_no_or_epoch_is_not_the_hf_500_step_default():
    # ``save_strategy=config.eval_strategy if config.valid_split is not None else "no"`` with eval_strategy "epoch": the run
    # saves per epoch or only at the end; "a checkpoint every 500 steps (HF default)" was a false reason
    files = {
        "llm/params.py": "from typing import Optional\nfrom pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                         "    valid_split: Optional[str] = Field(None)\n    eval_strategy: str = Field('epoch')\n",
        "llm/train.py": ("from transformers import Trainer, TrainingArguments\n\ndef train(config, model, data):\n"
                         "    args = TrainingArguments(output_dir='out', eval_strategy=config.eval_strategy,\n"
                         "        save_strategy=config.eval_strategy if config.valid_split is not None else 'no')\n"
                         "    Trainer(model=model, args=args, train_dataset=data).train()\n"),
    }
    r = _run(files, "I3")["I3"]
    assert r.status.value == "used" and "500" not in r.detail and "save_strategy is 'no' or 'epoch'" in r.detail, r.detail
    assert any((e.path, e.line) == ("llm/train.py", 5) for e in r.evidence)
    # a strategy that may save by steps keeps the HF default reason
    files["llm/params.py"] = files["llm/params.py"].replace("Field('epoch')", "Field('steps')")
    assert "500" in _run(files, "I3")["I3"].detail


def test_an_epoch_interval_and_a_step_interval_of_one_name_are_reported_without_a_crash():
    # open-instruct: one launch saves ``--checkpointing_steps epoch``, the training script's own default is 500 steps; the
    # report's values took min("epoch", 500) and the scan died with a TypeError
    files = {
        "open_instruct/finetune.py": (
            "from dataclasses import dataclass\n\n\n@dataclass\nclass FlatArguments:\n"
            "    checkpointing_steps: str = '500'\n\n\n"
            "def main(args, accelerator, model, optimizer, train_dataloader):\n"
            "    checkpointing_steps = args.checkpointing_steps\n"
            "    if checkpointing_steps is not None and checkpointing_steps.isdigit():\n"
            "        checkpointing_steps = int(checkpointing_steps)\n"
            "    completed_steps = 0\n"
            "    for step, batch in enumerate(train_dataloader):\n"
            "        loss = model(**batch).loss\n        accelerator.backward(loss)\n        optimizer.step()\n"
            "        completed_steps += 1\n"
            "        if isinstance(checkpointing_steps, int) and completed_steps % checkpointing_steps == 0:\n"
            "            accelerator.save_state(f'step_{completed_steps}')\n"),
        "scripts/finetune_lora_with_accelerate.sh": (
            "accelerate launch --num_processes 8 open_instruct/finetune.py \\\n    --use_lora \\\n"
            "    --checkpointing_steps epoch \\\n    --with_tracking\n"),
        "scripts/finetune_with_accelerate.sh": (
            "accelerate launch --num_processes 8 open_instruct/finetune.py \\\n    --checkpointing_steps 500 \\\n"
            "    --with_tracking\n"),
    }
    r = _run(files, "I3")["I3"]
    assert r.status.value == "used", r.detail
    assert r.values["checkpointing_steps"] == 500
