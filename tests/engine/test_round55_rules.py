"""Round 55 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check

# --- GeoChat: ``--include localhost:gpu_ids``, a placeholder for the GPU list -------------------------------------------------

def test_a_placeholder_gpu_list_is_no_single_gpu_launch() -> None:
    files = {"geochat/train/train_mem.py": _LLAVA_TRAIN,
             "scripts/finetune_lora.sh": ("deepspeed --master_port=$((RANDOM + 10000)) --include localhost:gpu_ids "
                                          "geochat/train/train_mem.py \\\n    --deepspeed ./scripts/zero2.json \\\n"
                                          "    --bf16 True --output_dir out\n"),
             "scripts/zero2.json": '{\n  "zero_optimization": {"stage": 2, "overlap_comm": true}\n}\n'}
    a1 = _check(_audit(files), "A1")
    assert "--num_gpus 1" not in a1.detail and a1.status.value == "used", a1.detail
    # control: a real one-GPU list is one process
    files["scripts/finetune_lora.sh"] = files["scripts/finetune_lora.sh"].replace("localhost:gpu_ids", "localhost:0")
    a1 = _check(_audit(files), "A1")
    assert a1.status.value == "partial" and "--num_gpus 1" in a1.detail, a1.detail


# --- GeoChat: ``--save_strategy "epoch"`` a line above ``--save_steps 7000`` -------------------------------------------------

def test_save_steps_under_an_epoch_strategy_cite_the_strategy() -> None:
    launch = ("deepspeed train.py \\\n    --bf16 True \\\n    --save_strategy \"epoch\" \\\n    --save_steps 7000 \\\n"
              "    --output_dir out\n")
    i3 = _check(_audit({"train.py": _LLAVA_TRAIN, "scripts/run.sh": launch}), "I3")
    assert i3.status.value == "used" and "save_strategy=epoch" in i3.detail, i3.detail
    assert [(e.path, e.line) for e in i3.evidence] == [("scripts/run.sh", 3)], i3.evidence
    # control: a step strategy keeps the step count
    i3 = _check(_audit({"train.py": _LLAVA_TRAIN, "scripts/run.sh": launch.replace('"epoch"', '"steps"')}), "I3")
    assert "save_steps=7000" in i3.detail, i3.detail
    # a "no" strategy saves nothing on a step interval
    i3 = _check(_audit({"train.py": _LLAVA_TRAIN, "scripts/run.sh": launch.replace('"epoch"', '"no"')}), "I3")
    assert "no periodic checkpoint" in i3.detail and "save_strategy" in i3.detail, i3.detail


# --- GOT-OCR2.0: the README runs ``deepspeed /GOT-OCR-2.0-master/GOT/train/train_GOT.py``, the checkout at / ----------------

_GOT_README = ("# GOT\n\n## Train\n\n```Shell\ndeepspeed   /GOT-master/GOT/train/train_GOT.py \\\n"
               " --deepspeed /GOT-master/zero_config/zero2.json \\\n --gradient_checkpointing True \\\n"
               " --gradient_accumulation_steps 2 \\\n --dataloader_num_workers 8 \\\n --model_max_length 8192 \\\n"
               " --output_dir /your/output/path\n```\n")


def test_a_documented_command_rooted_at_the_checkout_is_the_run() -> None:
    files = {"README.md": _GOT_README, "GOT-master/GOT/train/train_GOT.py": _LLAVA_TRAIN,
             "GOT-master/GOT/train/train_lora.py": _LLAVA_TRAIN.replace("train()", "train_lora()"),
             "GOT-master/zero_config/zero2.json": '{\n  "zero_optimization": {"stage": 2}\n}\n'}
    a = _audit(files)
    assert a.roles.entry_points == ["GOT-master/GOT/train/train_GOT.py"], a.roles.entry_points
    assert _check(a, "C3").status.value == "used" and _check(a, "C5").status.value == "used"
    assert a.project.max_seq_len == 8192
    # control: a path that is not the repository's (``/workspace/train.py``) stays unresolved
    files["README.md"] = _GOT_README.replace("/GOT-master/GOT/train/train_GOT.py", "/workspace/GOT/train/train_GOT.py")
    a = _audit(files)
    assert _check(a, "C3").status.value == "unused", _check(a, "C3").detail


# --- understand-r1-zero: the training loop is Oat's learner --------------------------------------------------------------

_OAT_TRAIN = (
    "from dataclasses import dataclass\n\nfrom oat.algorithms.ppo import PPOActor, PPOArgs, PPOLearner\n"
    "from oat.args import default_args_validation, get_default_args\nfrom oat.interface import get_program, lp\n"
    "from torch.utils.data import DataLoader\n\n\n@dataclass\nclass ZeroMathArgs(PPOArgs):\n    critic_type: str = 'drgrpo'\n\n\n"
    "class ZeroMathLearner(PPOLearner):\n    def evaluate(self, dataloader, steps):\n"
    "        for name, dataset in self.eval_dataset_dict.items():\n"
    "            eval_loader = DataLoader(dataset, batch_size=8, shuffle=False)\n"
    "            super().evaluate(eval_loader, f'{steps}_{name}')\n\n\n"
    "def run(args):\n    program, resources = get_program(args, learner_cls=ZeroMathLearner, actor_cls=PPOActor)\n"
    "    lp.launch_programs(program, local_resources=resources)\n\n\nif __name__ == '__main__':\n"
    "    args = get_default_args(ZeroMathArgs)\n    run(default_args_validation(args))\n")
_OAT_RUN = ("python train_zero_math.py \\\n    --gpus 8 \\\n    --gradient-checkpointing \\\n    --flash-attn \\\n    --bf16 \\\n"
            "    --zero-stage 2 \\\n    --prompt_max_length 1024 \\\n    --generate_max_length 3000 \\\n"
            "    --pretrain Qwen/Qwen2.5-Math-1.5B\n")


_SERVING = ("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 16 --trust-remote-code "
            "--host 0.0.0.0 --port 30000\n")


def test_a_library_learner_is_training_and_its_internals_are_not_judged() -> None:
    a = _audit({"train_zero_math.py": _OAT_TRAIN, "examples/qwen2.5-math-1.5b.sh": _OAT_RUN,
                "deploy_dpsk/serving.sh": _SERVING})
    assert a.project.does_training and a.project.alignment and "oat" in a.project.frameworks
    assert a.project.max_seq_len == 4024  # the prompt and the response
    assert _check(a, "C1").status.value == "used" and _check(a, "C3").status.value == "used"
    for cid in ("B1", "C5", "D6", "E2", "F1", "F3"):
        r = _check(a, cid)
        assert r.status.value == "n/a" and "the training loop is a library's" in r.detail and "PPOLearner" in r.detail, (cid, r.detail)
    # the evaluation loader the learner builds is not the training loader
    assert "eval_loader" not in " ".join(e.snippet for e in _check(a, "F1").evidence)


def test_a_library_learner_reason_is_chinese_in_the_chinese_report() -> None:
    from reports.markdown import render_markdown

    a = _audit({"train_zero_math.py": _OAT_TRAIN, "examples/qwen2.5-math-1.5b.sh": _OAT_RUN})
    zh = render_markdown(a, lang="zh")
    line = next(x for x in zh.splitlines() if "**D6**" in x)
    assert "第三方库的 learner" in line and "the training loop" not in line, line


def test_an_rl_run_without_a_learner_import_is_still_judged_as_before() -> None:
    # control: the same launch beside a script that does not import a learner is not a library run
    train = _OAT_TRAIN.replace("from oat.algorithms.ppo import PPOActor, PPOArgs, PPOLearner\n",
                               "PPOActor = PPOArgs = PPOLearner = object\n")
    a = _audit({"train_zero_math.py": train, "examples/qwen2.5-math-1.5b.sh": _OAT_RUN})
    assert "library_learner" not in a.project.notes
    assert not any("the training loop is a library's" in (r.detail or "") for r in a.results)


# --- lmm-r1: the README runs ``bash examples/scripts/lmm_r1/train_fre_text.sh`` beside upstream OpenRLHF examples -----------

def _openrlhf(model: str, prompt: int, generate: int) -> str:
    return ("ray job submit -- python3 -m openrlhf.cli.train_ppo_ray \\\n"
            f"   --pretrain {model} \\\n   --prompt_max_len {prompt} \\\n   --generate_max_len {generate} \\\n"
            "   --bf16 \\\n   --freeze_prefix visual\n")


def test_the_recipes_the_readme_runs_size_the_run() -> None:
    files = {"openrlhf/cli/train_ppo_ray.py": ("import argparse\n\nparser = argparse.ArgumentParser()\n"
                                               "parser.add_argument('--pretrain', type=str)\n"
                                               "parser.add_argument('--use_liger_kernel', action='store_true', default=False)\n"
                                               "args = parser.parse_args()\nloss.backward()\n"),
             "README.md": "# LMM-R1\n\n```bash\nbash examples/scripts/lmm_r1/train_fre_text.sh\n```\n"}
    for i in range(3):
        files[f"examples/scripts/train_ppo_llama_{i}.sh"] = _openrlhf("OpenRLHF/Llama-3-8b-sft-mixture", 1024, 1024)
    files["examples/scripts/lmm_r1/train_fre_text.sh"] = _openrlhf("./models/Qwen2.5-VL-3B-Instruct", 4096, 8192)
    files["examples/scripts/lmm_r1/train_sokoban.sh"] = _openrlhf("Qwen/Qwen2.5-VL-3B-Instruct", 1024, 1024)
    a = _audit(files)
    assert a.project.params_billions == 3.0 and a.project.model_names[0] == "Qwen/Qwen2.5-VL-3B-Instruct", a.project.model_names
    assert a.project.max_seq_len == 12288
    assert _check(a, "H1").status.value == "used"  # ``--freeze_prefix visual``
    # control: without the README's command the upstream examples are the majority
    del files["README.md"]
    a = _audit(files)
    assert a.project.params_billions == 8.0 and a.project.max_seq_len == 2048, (a.project.params_billions, a.project.max_seq_len)


def test_a_switch_flag_is_suggested_bare() -> None:
    from reports.snippets import repo_style

    files = {"train.py": ("import argparse\n\nparser = argparse.ArgumentParser()\n"
                          "parser.add_argument('--use_liger_kernel', action='store_true', default=False)\n"
                          "parser.add_argument('--logging_steps', type=int, default=1)\n")}
    from reports.snippets import _hf_yaml_to

    a = _audit(files)
    style = repo_style(a.facts, a.project, a.roles.by_path)
    assert "use_liger_kernel" in style.switch_args and "logging_steps" not in style.switch_args
    flags = _hf_yaml_to("hf-flags", "use_liger_kernel: true\nlogging_steps: 10\n", style) or ""
    assert "--use_liger_kernel --logging_steps 10" in flags and "True" not in flags, flags


def test_a_frameworks_quickstart_recipe_sizes_no_run() -> None:
    """LLaMA-Factory's README trains ``examples/train_lora/qwen3_lora_sft.yaml`` as a quick start: one example of a
    catalogue of recipes for every size, not the project's run; the sizes its recipes span stay a range."""
    files = {"README.md": "# LF\n\n```bash\nllamafactory-cli train examples/train_lora/qwen3_lora_sft.yaml\n```\n",
             "src/llamafactory/train.py": "from transformers import Trainer\n\n\ndef run(args):\n    Trainer(args=args).train()\n"}
    for name, model in (("qwen3_lora_sft", "Qwen/Qwen3-4B"), ("llama3_lora_sft", "meta-llama/Meta-Llama-3-8B-Instruct"),
                        ("qwen3_full_sft", "Qwen/Qwen3-32B"), ("llama3_full_sft", "meta-llama/Meta-Llama-3-70B-Instruct")):
        files[f"examples/train_lora/{name}.yaml"] = (f"model_name_or_path: {model}\nstage: sft\nfinetuning_type: lora\n"
                                                     "template: qwen3\nlearning_rate: 1.0e-4\n")
    a = _audit(files)
    assert a.project.params_billions is None and "params_range" in a.project.notes, a.project.params_billions


# --- SEED-X: ``HfArgumentParser((ConfigPathArguments, TrainingArguments))`` of the project's own dataclasses ---------------

_SEED_TRAIN = (
    "from dataclasses import dataclass, field\n\nimport transformers\nfrom accelerate import Accelerator\n"
    "from torchdata.dataloader2 import DataLoader2, MultiProcessingReadingService\n\n\n@dataclass\nclass ConfigPathArguments:\n"
    "    llm: str = field(default=None)\n\n\n@dataclass\nclass TrainingArguments:\n    output_dir: str = field(default='out')\n"
    "    dataloader_num_workers: int = field(default=8)\n\n\n"
    "def build_dataloader(dataset, dataloader_num_workers=4):\n"
    "    mp_service = MultiProcessingReadingService(num_workers=dataloader_num_workers)\n"
    "    return DataLoader2(dataset, reading_service=mp_service)\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((ConfigPathArguments, TrainingArguments))\n"
    "    cfg_path, args = parser.parse_args_into_dataclasses()\n    accelerator = Accelerator()\n"
    "    loader = build_dataloader(None, dataloader_num_workers=args.dataloader_num_workers)\n"
    "    for batch in loader:\n        loss = model(**batch)\n        accelerator.backward(loss)\n\n\n"
    "if __name__ == '__main__':\n    train()\n")


def test_own_argument_dataclasses_are_no_hf_trainer() -> None:
    files = {"src/train/train_seed_x_sft.py": _SEED_TRAIN,
             "scripts/train.sh": "torchrun --nproc_per_node=8 src/train/train_seed_x_sft.py --dataloader_num_workers 4\n"}
    a = _audit(files)
    f1, f2 = _check(a, "F1"), _check(a, "F2")
    assert f1.status.value == "used" and "4" in f1.detail, f1.detail
    assert "worker_prefetch_cnt=10" in f2.detail, f2.detail
    assert "HF Trainer" not in (_check(a, "I4").detail or ""), _check(a, "I4").detail
    # control: a TrainingArguments that derives from HF's is the HF Trainer's
    files["src/train/train_seed_x_sft.py"] = _SEED_TRAIN.replace("class TrainingArguments:",
                                                                 "class TrainingArguments(transformers.TrainingArguments):")
    assert "HF Trainer" in (_check(_audit(files), "I4").detail or "")


# --- lmm-r1 (OpenRLHF): ``torchrun --nnodes $SLURM_NNODES`` under ``#SBATCH -N 1`` --------------------------------------------

def test_a_slurm_node_count_comes_from_the_batch_script() -> None:
    script = ("#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=1\n\nsrun bash -c \"torchrun --nproc_per_node 8 "
              "--nnodes $SLURM_NNODES --node_rank $SLURM_PROCID --master_addr $MASTER_ADDR train.py --bf16 True\"\n")
    files = {"train.py": _LLAVA_TRAIN, "scripts/train_slurm.sh": script}
    a = _audit(files)
    assert a.project.num_nodes == 1 and _check(a, "E1").status.value == "n/a", a.project.num_nodes
    files["scripts/train_slurm.sh"] = script.replace("#SBATCH -N 1", "#SBATCH -N 4")
    assert _audit(files).project.num_nodes == 4


# --- moondream: the training step runs the model's vision encoder -------------------------------------------------------------

def test_a_vision_encoder_run_in_the_training_step_makes_an_mllm() -> None:
    train = ("import torch\n\n\ndef main(model, dataset, optimizer):\n    for sample in dataset:\n"
             "        with torch.no_grad():\n            img_emb = model._run_vision_encoder(sample['image'])\n"
             "        loss = model.text(img_emb, sample['qa'])\n        loss.backward()\n        optimizer.step()\n")
    a = _audit({"moondream/finetune/finetune_text.py": train})
    assert a.project.multimodal and a.project.model_type == "MLLM"
    a = _audit({"moondream/finetune/finetune_text.py": train.replace("_run_vision_encoder", "_run_text_encoder")})
    assert not a.project.multimodal


# --- GOT-OCR2.0 / moondream: the vision encoder runs without autograd ---------------------------------------------------------

_GOT_MODEL = (
    "import torch\nfrom transformers import Qwen2ForCausalLM\n\n\nclass GOTQwenForCausalLM(Qwen2ForCausalLM):\n"
    "    def forward(self, input_ids, images):\n        vision_tower_high = self.vision_tower_high\n"
    "        with torch.set_grad_enabled(False):\n            cnn_feature = vision_tower_high(images)\n"
    "        return self.model(input_ids, cnn_feature)\n")
_GOT_ARGS = ("from dataclasses import dataclass, field\n\n\n@dataclass\nclass ModelArguments:\n"
             "    freeze_vision_tower: bool = field(default=False)\n    use_im_start_end: bool = field(default=False)\n")
_GOT_TRAIN = ("import transformers\n\nfrom GOT.model.GOT_ocr_2_0 import GOTQwenForCausalLM\nfrom GOT.utils.arguments import ModelArguments\n\n\n"
              "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
              "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
              "    model = GOTQwenForCausalLM.from_pretrained('/GOT_weights/')\n"
              "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n")


def test_a_vision_tower_run_without_autograd_is_frozen() -> None:
    files = {"GOT/model/GOT_ocr_2_0.py": _GOT_MODEL, "GOT/utils/arguments.py": _GOT_ARGS, "GOT/train/train_GOT.py": _GOT_TRAIN,
             "scripts/train.sh": "deepspeed GOT/train/train_GOT.py --bf16 True --pixel_values 1024 --output_dir out\n"}
    a = _audit(files)
    h1 = _check(a, "H1")
    assert h1.status.value == "used" and "torch.set_grad_enabled(False)" in h1.detail, h1.detail
    # control: a launch that unfreezes the tower on purpose decides
    files["scripts/train.sh"] = files["scripts/train.sh"].replace("--bf16 True", "--bf16 True --freeze_vision_tower False")
    assert _check(_audit(files), "H1").status.value == "unused"
    # control: with autograd on, the tower trains
    files["scripts/train.sh"] = files["scripts/train.sh"].replace(" --freeze_vision_tower False", "")
    files["GOT/model/GOT_ocr_2_0.py"] = _GOT_MODEL.replace("set_grad_enabled(False)", "set_grad_enabled(True)")
    assert _check(_audit(files), "H1").status.value == "unused"


# --- OneLLM: Meta's params.json sets ``"vocab_size": -1`` (taken from the tokenizer) ------------------------------------------

def test_a_vocabulary_of_minus_one_is_no_vocabulary_size() -> None:
    files = {"config/llama2/7B.json": '{"dim": 4096, "multiple_of": 256, "n_heads": 32, "n_layers": 32, "norm_eps": 1e-05, '
                                      '"vocab_size": -1}\n',
             "main_pretrain.py": ("import json\n\nimport torch\n\n\ndef main(args, model, loader, optimizer):\n"
                                  "    params = json.load(open('config/llama2/7B.json'))\n    for batch in loader:\n"
                                  "        loss = model(batch)\n        loss.backward()\n        optimizer.step()\n"),
             "exps/pretrain.sh": "torchrun --nproc_per_node=8 main_pretrain.py --llama_config config/llama2/7B.json\n"}
    p = _audit(files).project
    assert p.params_billions is not None and 6.6 < p.params_billions < 6.8, p.params_billions
    assert "32,000 tokens assumed" in p.notes.get("params_note", ""), p.notes
