"""Round 29 (issue #9, read on GPT-NeoX at HEAD): a -1 sentinel is not a count."""

from __future__ import annotations

from checks.engine import audit_files


def test_a_num_nodes_default_of_minus_one_is_no_node_count_and_no_negative_global_batch():
    # GPT-NeoX NeoXArgsDeepspeedRunner: ``num_nodes: int = -1`` ("use all nodes of the hostfile")
    files = {
        "megatron/neox_arguments/deepspeed_args.py": (
            "from dataclasses import dataclass\n\n\n@dataclass\nclass NeoXArgsDeepspeedRunner:\n"
            "    num_gpus: int = None\n    num_nodes: int = -1\n"),
        "configs/125M.yml": '{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 1\n}\n',
        "train.py": ("import deepspeed\n\nengine, *_ = deepspeed.initialize(model=model, config='configs/125M.yml')\n"
                     "for batch in loader:\n    loss = engine(batch)\n    engine.backward(loss)\n    engine.step()\n"),
    }
    a = audit_files((p, t.encode()) for p, t in files.items())
    assert a.project.num_nodes is None, a.project.num_nodes
    g2 = next(r for r in a.results if r.id == "G2")
    assert g2.values.get("global_batch") == 4, g2.values


def test_a_global_batch_in_tokens_is_not_a_batch_of_sequences():
    # open-instruct scripts/train/olmo3/32b_think_sft.sh: OLMo-core's --global_batch_size counts tokens (1024 x 4096)
    files = {
        "scripts/train/32b_sft.sh": "torchrun --nproc_per_node 8 open_instruct/olmo_core_finetune.py --global_batch_size 4194304 --seq_len 4096\n",
        "open_instruct/olmo_core_finetune.py": ("import torch\n\n\ndef main(args):\n    for batch in loader:\n"
                                                "        loss = model(batch)\n        loss.backward()\n"),
    }
    a = audit_files((p, t.encode()) for p, t in files.items())
    g2 = next(r for r in a.results if r.id == "G2")
    assert g2.values.get("global_batch") != 4194304, g2.values
    assert g2.priority is None, g2.priority


def test_a_projects_own_ppo_config_imported_relatively_is_not_an_hf_trainer():
    # EasyR1 verl/trainer/main.py: ``from .config import PPOConfig`` then ``OmegaConf.structured(PPOConfig())``
    from checks.engine import build_facts
    from checks.rules._helpers import uses_hf_trainer

    files = {
        "verl/trainer/config.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass PPOConfig:\n    save_freq: int = 5\n",
        "verl/trainer/main.py": ("from omegaconf import OmegaConf\n\nfrom .config import PPOConfig\n\n\n"
                                 "def main():\n    default_config = OmegaConf.structured(PPOConfig())\n    return default_config\n"),
    }
    assert not uses_hf_trainer(build_facts((p, t.encode()) for p, t in files.items()))
    trl = {**files, "verl/trainer/main.py": files["verl/trainer/main.py"].replace("from .config import PPOConfig", "from trl import PPOConfig")}
    assert uses_hf_trainer(build_facts((p, t.encode()) for p, t in trl.items()))
