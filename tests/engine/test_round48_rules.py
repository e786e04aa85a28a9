"""Round 48 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest. (Rules whose shape fits a
check's own examples carry it there: H1 Multimodal-GPT, C1 a handed-on autocast, G6 SPIN's loss.)"""

from __future__ import annotations

from checks.model import Status

from .claims import audit as _audit
from .claims import check as _check

# --- HazyResearch/based: "num_workers=64 per training process" from configs Hydra hands to another data module --------

_LM_MODULE = (
    "import numpy as np\nimport pytorch_lightning as pl\nfrom torch.utils.data import DataLoader\n\n\n"
    "class LMDataModule(pl.LightningDataModule):\n"
    "    def __init__(self, dataset_name, batch_size=32, num_workers=1, pin_memory=False):\n"
    "        super().__init__()\n        self.batch_size = batch_size\n        self.num_workers = num_workers\n\n"
    "    def prepare_data(self):\n        self.raw.map(self.tokenize, num_proc=max(self.num_workers, 1))\n\n"
    "    def train_dataloader(self):\n"
    "        return DataLoader(self.train, batch_size=self.batch_size, num_workers=1,  # Data is already in memory\n"
    "                          pin_memory=True)\n")
_IMAGENET_MODULE = (
    "import pytorch_lightning as pl\nfrom torch.utils.data import DataLoader\n\n\n"
    "class ImagenetDataModule(pl.LightningDataModule):\n"
    "    def __init__(self, data_dir, num_workers=16, batch_size=32):\n"
    "        super().__init__()\n        self.num_workers = num_workers\n        self.batch_size = batch_size\n\n"
    "    def train_dataloader(self):\n"
    "        return DataLoader(self.train, batch_size=self.batch_size, num_workers=self.num_workers, pin_memory=True)\n")
_RUN = (
    "import hydra\nimport pytorch_lightning as pl\n\n\n@hydra.main(config_path='configs', config_name='config')\n"
    "def main(config):\n    datamodule = hydra.utils.instantiate(config.datamodule)\n"
    "    model = hydra.utils.instantiate(config.task)\n    trainer = pl.Trainer(devices=8, precision='bf16')\n"
    "    trainer.fit(model, datamodule=datamodule)\n\n\nif __name__ == '__main__':\n    main()\n")


def _based(target: str) -> dict[str, str]:
    return {
        "train/run.py": _RUN,
        "train/datamodules/__init__.py": "",
        "train/datamodules/language_modeling_hf.py": _LM_MODULE,
        "train/datamodules/imagenet.py": _IMAGENET_MODULE,
        "train/configs/datamodule/openwebtext.yaml": f"_target_: {target}\ndataset_name: openwebtext\nbatch_size: 8\n"
                                                     "num_workers: 32  # For preprocessing only\n",
        "train/configs/datamodule/thepile.yaml": f"_target_: {target}\ndataset_name: the_pile\nbatch_size: 8\n"
                                                 "num_workers: 64  # For preprocessing only\n",
        "README.md": "```bash\ncd train\npython run.py experiment=example/based-360m\n```\n",
    }


def test_config_values_hydra_hands_to_another_data_module_are_not_a_loaders_workers():
    a = _audit(_based("train.datamodules.language_modeling_hf.LMDataModule"))
    f1 = _check(a, "F1")
    assert f1.status is Status.PARTIAL, (f1.status, f1.detail)
    assert f1.values["num_workers"] == 1
    assert not f1.findings and "64" not in f1.detail.split(";")[0]
    # control: the same values given to the ImageNet module, whose loader reads them, are its workers
    f1 = _check(_audit(_based("train.datamodules.imagenet.ImagenetDataModule")), "F1")
    assert f1.status is Status.USED and f1.values.get("max_num_workers") == 64, (f1.status, f1.detail)


def test_a_target_module_the_tree_does_not_hold_builds_nothing():
    # based's ``scrolls.yaml``: ``train.datamodules.scrolls.ScrollsDataModule``, a module its ``train/datamodules/`` lacks
    f1 = _check(_audit(_based("train.datamodules.scrolls.ScrollsDataModule")), "F1")
    assert f1.status is Status.PARTIAL and f1.values["num_workers"] == 1, (f1.status, f1.detail)


# --- allenai/RL4LMs: A1/J1/J2 evidence from ``policy.py``, a module its own ``policy/`` package shadows -------------------

def test_a_module_shadowed_by_a_package_of_its_name_is_a_leftover():
    files = {
        "rl4lms/envs/text_generation/policy.py": ("import torch\n\n\nclass LMActorCriticPolicy:\n"
                                                  "    def __init__(self, model):\n        self.model = torch.nn.DataParallel(model)\n"),
        "rl4lms/envs/text_generation/policy/__init__.py": "",
        "rl4lms/envs/text_generation/policy/causal_policy.py": ("class CausalLMActorCriticPolicy:\n"
                                                                "    def __init__(self, model):\n        self.model = model\n"),
        "scripts/training/train_text_generation.py": (
            "import torch\nfrom rl4lms.envs.text_generation.policy.causal_policy import CausalLMActorCriticPolicy\n\n\n"
            "def main():\n    policy = CausalLMActorCriticPolicy(model)\n    opt = torch.optim.AdamW(policy.model.parameters())\n"
            "    for batch in batches:\n        loss = policy.model(batch).loss\n        loss.backward()\n        opt.step()\n\n\n"
            "if __name__ == '__main__':\n    main()\n"),
    }
    a = _audit(files)
    assert a.roles.by_path["rl4lms/envs/text_generation/policy.py"] == "archive"
    assert a.roles.by_path["rl4lms/envs/text_generation/policy/causal_policy.py"] != "archive"
    assert not any(e.path.endswith("text_generation/policy.py") for e in _check(a, "A1").evidence)
    # control: a launch that runs the module as a script reaches it
    files["scripts/run.sh"] = "python rl4lms/envs/text_generation/policy.py --epochs 1\n"
    assert _audit(files).roles.by_path["rl4lms/envs/text_generation/policy.py"] != "archive"


# --- a reference's branch (Yi ``finetune/sft/main.py``): FusedAdam picked only when the launches leave --offload off -------

_YI_SFT = (
    "import argparse\n\nimport torch\nfrom deepspeed.ops.adam import DeepSpeedCPUAdam, FusedAdam\n\n\n"
    "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--offload', action='store_true')\n"
    "    args = parser.parse_args()\n    model = build_model()\n"
    "    AdamOptimizer = DeepSpeedCPUAdam if args.offload else FusedAdam\n"
    "    optimizer = AdamOptimizer(model.parameters(), lr=2e-6, betas=(0.9, 0.95))\n"
    "    for batch in loader:\n        loss = model(**batch).loss\n        model.backward(loss)\n        model.step()\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


def test_a_class_picked_by_a_conditional_expression_counts_only_in_its_arm():
    files = {"finetune/sft/main.py": _YI_SFT,
             "finetune/scripts/run_sft.sh": "deepspeed main.py --zero_stage 2 --offload --max_seq_len 4096\n"}
    d6 = _check(_audit(files), "D6")
    assert not any(e.path == "finetune/sft/main.py" for e in d6.evidence), (d6.status, d6.detail)
    # control: launches that leave --offload off build FusedAdam
    files["finetune/scripts/run_sft.sh"] = "deepspeed main.py --zero_stage 2 --max_seq_len 4096\n"
    d6 = _check(_audit(files), "D6")
    assert d6.status is Status.USED and any(e.path == "finetune/sft/main.py" for e in d6.evidence), (d6.status, d6.detail)


def test_a_dry_run_launch_is_no_training_recipe():
    # oat ``examples/dry_run/dry_run_sft.sh`` passes --adam_offload; its recipes under examples/ do not
    files = {"finetune/sft/main.py": _YI_SFT,
             "examples/sft.sh": "deepspeed finetune/sft/main.py --zero_stage 2 --max_seq_len 4096\n",
             "examples/dry_run/dry_run_sft.sh": "deepspeed finetune/sft/main.py --zero_stage 2 --offload\n"}
    a = _audit(files)
    assert a.roles.by_path["examples/dry_run/dry_run_sft.sh"] == "test"
    assert _check(a, "D6").status is Status.USED


# --- THUDM/LongAlign: F7 "no sequence packing found" beside launches that pick ``--batch_method "pack"`` ----------------

_LONGALIGN_MAIN = (
    "from dataclasses import dataclass, field\n\nimport transformers\nfrom transformers import Trainer\n\n"
    "from dataset import LMDataset, LMPackDataset, LMSortDataset\n\n\n@dataclass\nclass DataArguments:\n"
    "    train_file: str = field(default=None)\n    batch_method: str = field(default='naive')\n\n\n"
    "def make_supervised_data_module(data_args):\n    if data_args.batch_method == 'naive':\n"
    "        train_dataset = LMDataset(data_args.train_file)\n    elif data_args.batch_method == 'pack':\n"
    "        train_dataset = LMPackDataset(data_args.train_file)\n    elif data_args.batch_method == 'sort':\n"
    "        train_dataset = LMSortDataset(data_args.train_file)\n    return dict(train_dataset=train_dataset)\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((DataArguments, transformers.TrainingArguments))\n"
    "    data_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained('THUDM/LongAlign-6B-64k-base')\n"
    "    trainer = Trainer(model=model, args=training_args, **make_supervised_data_module(data_args))\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    train()\n")


def _longalign(methods: list[str]) -> dict[str, str]:
    files = {"main.py": _LONGALIGN_MAIN}
    for i, m in enumerate(methods):
        files[f"scripts/run_{i}.sh"] = (f"deepspeed --include localhost:0,1,2,3,4,5,6,7 main.py \\\n--train_file ./data/{m} \\\n"
                                        f"--batch_method \"{m}\" \\\n--bf16 True\n")
    return files


def test_a_batch_method_option_that_picks_packing_is_a_packing_strategy():
    f7 = _check(_audit(_longalign(["pack", "sort", "pack", "sort", "sort"])), "F7")
    assert f7.status is Status.UNUSED and "packing batching strategy in 2 of 5" in f7.detail, f7.detail
    f7 = _check(_audit(_longalign(["pack", "pack", "sort"])), "F7")
    assert f7.status is Status.USED, (f7.status, f7.detail)


# --- THUDM/LongAlign: F10 "no pre-tokenized binary data found" beside ``np.save(..., 'inputs.npy')`` read by the dataset ---

_LONGALIGN_DATASET = (
    "import os\n\nimport numpy as np\nimport torch\n\n\nclass LMDataset(torch.utils.data.Dataset):\n"
    "    def __init__(self, filepath):\n"
    "        input_ids = torch.from_numpy(np.load(os.path.join(filepath, '{name}.npy')))\n"
    "        labels = torch.from_numpy(np.load(os.path.join(filepath, 'labels.npy')))\n"
    "        self.input_ids, self.labels = input_ids, labels\n\n"
    "    def __getitem__(self, idx):\n        return {{'input_ids': self.input_ids[idx], 'labels': self.labels[idx]}}\n")


def test_token_ids_saved_as_npy_arrays_are_pre_tokenized_binary_data():
    files = {**_longalign(["sort"]), "dataset.py": _LONGALIGN_DATASET.format(name="inputs")}
    files["main.py"] = files["main.py"].replace("from dataset import LMDataset, LMPackDataset, LMSortDataset",
                                                "from dataset import LMDataset\nLMPackDataset = LMSortDataset = LMDataset")
    a = _audit(files)
    f10 = _check(a, "F10")
    assert f10.status is Status.USED and any(e.path == "dataset.py" for e in f10.evidence), (f10.status, f10.detail)
    # an array of rows, one sample each, is no token stream cut into windows: not packing by itself
    assert _check(a, "F7").status is Status.UNUSED, _check(a, "F7").detail


# --- allenai/RL4LMs: "Estimated scale: 11B" from the frozen T5-11B a reward module loads ---------------------------------

_REWARD_MODULE = (
    "import torch\nimport transformers\n\n_model = None\n\n\ndef get_model(model_type='11b', device='cpu'):\n"
    "    global _model\n    if _model is None:\n        hf_model_name = 't5-' + model_type\n"
    "        if model_type == '11b':\n            model_path = 't5-11b~commongen_prefs.pt'\n"
    "        state = torch.load(model_path)\n        _model = transformers.AutoModelForSeq2SeqLM.from_pretrained(hf_model_name)\n"
    "        _model.load_state_dict(state)\n        _model.eval()\n    return _model\n")
_POLICY_TRAIN = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\ndef main():\n"
    "    model = AutoModelForCausalLM.from_pretrained('gpt2-xl')\n    opt = torch.optim.AdamW(model.parameters())\n"
    "    for batch in batches:\n        loss = model(**batch).loss\n        loss.backward()\n        opt.step()\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


def test_a_model_named_in_a_reward_module_is_not_the_trained_model():
    files = {"scripts/train.py": _POLICY_TRAIN, "rl4lms/envs/text_generation/preference_reward.py": _REWARD_MODULE}
    p = _audit(files).project
    assert "11b" not in " ".join(p.model_names).lower() and (p.params_billions or 0) < 10, (p.model_names, p.params_billions)
    # control: the same assignment in a training module names a model of the project
    files["rl4lms/envs/text_generation/policy_loader.py"] = _REWARD_MODULE
    del files["rl4lms/envs/text_generation/preference_reward.py"]
    p = _audit(files).project
    assert any("11b" in n.lower() for n in p.model_names), p.model_names


# --- InternLM/InternEvo: C5 "no gradient accumulation found" beside ``micro_num=4``; E1 single-node beside doc/usage.md ------

_INTERNEVO_TRAIN = (
    "import argparse\n\nimport torch\n\nimport internlm\nfrom internlm.core.trainer import Trainer\n\n\n"
    "def main(args):\n    internlm.launch_from_slurm(config=args.config)\n    trainer = Trainer(engine=engine)\n"
    "    for batch in train_iter:\n        trainer.zero_grad()\n        _, _, loss = trainer.execute_schedule(batch, forward_only=False)\n"
    "        trainer.step()\n\n\nif __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--config', type=str)\n    main(parser.parse_args())\n")
_INTERNEVO_CONFIG = (
    "SEQ_LEN = 2048\nHIDDEN_SIZE = 4096\n\n"
    "data = dict(\n    seq_len=SEQ_LEN,\n    # micro_num means the number of micro_batch contained in one gradient update\n"
    "    micro_num={micro_num},\n    micro_bsz=2,\n    pack_sample_into_one=False,\n)\n"
    "model = dict(\n    hidden_size=HIDDEN_SIZE,\n    num_layers=32,\n    dtype='torch.bfloat16',\n    use_flash_attn=True,\n)\n")


def test_internevo_micro_num_is_the_accumulation_count_shown_at_its_own_line():
    files = {"train.py": _INTERNEVO_TRAIN, "configs/7B_sft.py": _INTERNEVO_CONFIG.format(micro_num=4),
             "README.md": "```bash\ntorchrun --nproc_per_node=8 train.py --config ./configs/7B_sft.py\n```\n"}
    c5 = _check(_audit(files), "C5")
    assert c5.status is Status.USED, (c5.status, c5.detail)
    e = next(e for e in c5.evidence if e.path == "configs/7B_sft.py")
    assert (e.line, e.snippet) == (7, "micro_num=4"), (e.line, e.snippet)
    c5 = _check(_audit({**files, "configs/7B_sft.py": _INTERNEVO_CONFIG.format(micro_num=1)}), "C5")
    assert c5.status is not Status.USED, (c5.status, c5.detail)


def test_a_usage_guide_documents_its_launches():
    files = {"train.py": _INTERNEVO_TRAIN, "configs/7B_sft.py": _INTERNEVO_CONFIG.format(micro_num=4),
             "doc/en/usage.md": ("## Training\n\nTo train on slurm with 16 GPUs across nodes:\n\n```bash\n"
                                 "$ srun -p internllm -N 2 -n 16 --ntasks-per-node=8 --gpus-per-task=1 python train.py "
                                 "--config ./configs/7B_sft.py\n```\n")}
    a = _audit(files)
    assert a.project.notes.get("multi_node_documented", "").startswith("doc/en/usage.md:6"), a.project.notes
    assert _check(a, "E1").status is not Status.NA


# --- uclaml/SPIN: J3 "prefill is chunked by the engine's default (vLLM's V1 engine)" beside setup.py's ``vllm==0.3.0`` ------

_HF_STYLE_SETUP = (
    "import re\n\nfrom setuptools import find_packages, setup\n\n"
    "_deps = [\n    \"vllm=={vllm}\",\n    \"accelerate==0.23.0\",\n    \"torch==2.1.0\",\n    \"transformers==4.37.0\",\n]\n"
    "deps = {{b: a for a, b in (re.findall(r\"^(([^!=<>~ \\[\\]]+)(?:\\[[^\\]]+\\])?(?:[!=<>~ ].*)?$)\", x)[0] for x in _deps)}}\n"
    "install_requires = [\n    deps[\"vllm\"],\n    deps[\"accelerate\"],\n    deps[\"transformers\"],\n]\n"
    "setup(name=\"spin\", packages=find_packages(), install_requires=install_requires)\n")
_VLLM_GENERATE = (
    "from vllm import LLM, SamplingParams\n\n\ndef main():\n    llm = LLM(model='alignment-handbook/zephyr-7b-sft-full', "
    "tensor_parallel_size=8)\n    outputs = llm.generate(prompts, SamplingParams(temperature=1.0, max_tokens=256))\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


def test_pins_of_a_setup_py_requirement_table_are_the_projects_pins():
    files = {"setup.py": _HF_STYLE_SETUP.format(vllm="0.3.0"), "spin/generate_vllm.py": _VLLM_GENERATE,
             "scripts/generate.sh": "python spin/generate_vllm.py --model zephyr\n"}
    a = _audit(files)
    assert [(d.name, d.spec, d.line) for d in a.facts.deps("vllm")] == [("vllm", "==0.3.0", 6)]
    assert _check(a, "J3").status is Status.UNUSED, _check(a, "J3").detail
    # control: the same table pinning a V1-engine vLLM
    assert _check(_audit({**files, "setup.py": _HF_STYLE_SETUP.format(vllm="0.8.5")}), "J3").status is Status.USED


# --- HazyResearch/based: "Frameworks detected: ... deepspeed" and B1 partial from its FLOPs profiler's import -------------

def test_a_deepspeed_utility_import_is_no_training_framework():
    files = {**_based("train.datamodules.language_modeling_hf.LMDataModule"),
             "train/utils/flops.py": ("from deepspeed.profiling.flops_profiler import get_model_profile\n\n\n"
                                      "def profile_deepspeed(model, input_size=(1, 2048)):\n"
                                      "    return get_model_profile(model=model, input_shape=input_size, print_profile=False)\n")}
    a = _audit(files)
    assert "deepspeed" not in a.project.frameworks and a.project.notes.get("deepspeed_utility_only") == ["train/utils/flops.py:1"]
    assert _check(a, "B1").status is Status.UNUSED
    # control: the engine itself
    files["train/utils/engine.py"] = "import deepspeed\n\n\ndef wrap(model, cfg):\n    return deepspeed.initialize(model=model, config=cfg)\n"
    assert "deepspeed" in _audit(files).project.frameworks
