"""Round 63 (issue #9): claims of more public repositories (deita, SeeClick, Step-DPO, MovieChat, GRPO-Zero), read claim by
claim. Each test is one false claim of those reports, made from the shape of the real code, with a control that keeps the
rule honest."""

from __future__ import annotations

from pathlib import Path

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check
from .claims import scan_cold_and_cached

# --- deita: ``GRADACC=$(($TOTALBSZ/$NUMGPUS/$BSZPERDEV))`` with the GPU count read from a device list -------------------------

_DEITA_SH = (
    'RUNNAME="Deita-7B-SFT"\nDEVICES=""  # e.g. 0,1,2,3\nNUMGPUS=$(echo $DEVICES | awk -F\',\' \'{{print NF}}\')\n'
    "TOTALBSZ=512\nBSZPERDEV=1\nGRADACC={gradacc}\n\n"
    "deepspeed --include localhost:${{DEVICES}} --master_port 29501 src/deita/alignment/train.py \\\n"
    "    --model_name_or_path mistralai/Mistral-7B-v0.1 \\\n    --per_device_train_batch_size ${{BSZPERDEV}} \\\n"
    "    --gradient_accumulation_steps ${{GRADACC}} \\\n    --learning_rate 2e-5 \\\n    --bf16 True\n"
)


def test_an_accumulation_divided_in_a_chain_is_computed_from_the_global_batch() -> None:
    files = {"src/deita/alignment/train.py": _LLAVA_TRAIN,
             "examples/train/sft.sh": _DEITA_SH.format(gradacc="$(($TOTALBSZ/$NUMGPUS/$BSZPERDEV))")}
    result = _audit(files)
    c5 = _check(result, "C5")
    assert c5.status.value == "used" and "512 / (1 x GPUs)" in c5.detail, c5.detail
    assert "estimated global batch 512" in _check(result, "G2").detail
    # control: a launch that passes a literal 1 accumulates nothing
    files["examples/train/sft.sh"] = _DEITA_SH.format(gradacc="1")
    assert _check(_audit(files), "C5").status.value == "unused"


# --- SeeClick: Qwen-VL's ``fix_vit`` switch, off in the launch -----------------------------------------------------------------

_QWENVL_FT = (
    "from dataclasses import dataclass, field\nimport transformers\n\n\n@dataclass\n"
    "class TrainingArguments(transformers.TrainingArguments):\n    use_lora: bool = False\n    fix_vit: bool = True\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained('Qwen/Qwen-VL-Chat', trust_remote_code=True)\n"
    "    if not training_args.use_lora:\n"
    "        if training_args.fix_vit and hasattr(model, 'transformer') and hasattr(model.transformer, 'visual'):\n"
    "            model.transformer.visual.requires_grad_(False)\n"
    "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n"
)
_SEECLICK_SH = ("torchrun --nproc_per_node 8 finetune/finetune.py \\\n    --model_name_or_path Qwen/Qwen-VL-Chat \\\n"
                "    --bf16 True \\\n    --fix_vit {fix} \\\n    --per_device_train_batch_size 4 \\\n    --use_lora\n")


def test_a_fix_vit_switch_left_off_trains_the_vision_encoder() -> None:
    files = {"finetune/finetune.py": _QWENVL_FT, "finetune/finetune_lora_ds.sh": _SEECLICK_SH.format(fix="False"),
             "qwen_vl/visual.py": "class VisionTransformer:\n    pass\n"}
    h1 = _check(_audit(files), "H1")
    assert h1.status.value == "unused" and any(e.key == "--fix_vit" for e in h1.evidence), h1
    # control: the launch that fixes the ViT freezes it
    files["finetune/finetune_lora_ds.sh"] = _SEECLICK_SH.format(fix="True")
    assert _check(_audit(files), "H1").status.value == "used"


# --- Step-DPO: ``train.py configs/config_full.yaml --gradient_accumulation_steps=8``, then ``python eval_math.py ... -tp 4`` -----

_STEP_DPO_SH = (
    'export output_dir="qwen2-72b-instruct-step-dpo"\n\n'
    "ACCELERATE_LOG_LEVEL=info accelerate launch --config_file accelerate_configs/deepspeed_zero3.yaml --mixed_precision bf16 \\\n"
    "    --num_processes 8 \\\n    train.py configs/config_full.yaml \\\n    --model_name_or_path=\"Qwen/Qwen2-72B-Instruct\" \\\n"
    "    --per_device_train_batch_size=2 \\\n{accum}    --bf16=True \\\n    --output_dir=outputs/$output_dir\n\n"
    "python eval_math.py --model outputs/$output_dir --data_file ./data/test/GSM8K_test_data.jsonl --tensor_parallel_size 4\n"
)
_STEP_DPO_CFG = ("model_name_or_path: Qwen/Qwen2-7B-Instruct\ntorch_dtype: bfloat16\nbf16: true\nbeta: 0.01\n"
                 "gradient_accumulation_steps: 16\nlearning_rate: 5.0e-7\nlr_scheduler_type: cosine\nper_device_train_batch_size: 1\n")
_STEP_DPO_EVAL = ("import argparse\nfrom vllm import LLM, SamplingParams\n\nparser = argparse.ArgumentParser()\n"
                  "parser.add_argument('--tensor_parallel_size', type=int, default=1)\nargs = parser.parse_args()\n"
                  "llm = LLM(model=args.model, tensor_parallel_size=args.tensor_parallel_size)\n")


def _step_dpo(accum: tuple[str, str, str]) -> dict[str, str]:
    files = {"train.py": _LLAVA_TRAIN, "configs/config_full.yaml": _STEP_DPO_CFG, "eval_math.py": _STEP_DPO_EVAL}
    for name, a in zip(("qwen2_72b_instruct", "qwen2_72b", "qwen2_7b"), accum, strict=True):
        files[f"bash_scrips/{name}_step_dpo.sh"] = _STEP_DPO_SH.format(accum=f"    --gradient_accumulation_steps={a} \\\n" if a else "")
    return files


def test_a_base_config_every_launch_overrides_runs_nowhere() -> None:
    c5 = _check(_audit(_step_dpo(("8", "8", "4"))), "C5")
    assert "over 8 micro-batches" in c5.detail and "16" not in c5.detail, c5.detail
    assert not any(e.path == "configs/config_full.yaml" for e in c5.evidence), c5.evidence
    # control: a launch that leaves the flag out runs with the base config's 16, a recipe of its own
    c5 = _check(_audit(_step_dpo(("8", "8", ""))), "C5")
    assert "16 in 1 recipe" in c5.detail, c5.detail


def test_the_evaluation_a_launch_file_runs_after_training_is_not_its_parallelism() -> None:
    a4 = _check(_audit(_step_dpo(("8", "8", "4"))), "A4")
    assert a4.status.value != "used", a4
    # control: the same size passed to the training command is tensor parallelism of the run
    files = _step_dpo(("8", "8", "4"))
    files["bash_scrips/qwen2_7b_step_dpo.sh"] = files["bash_scrips/qwen2_7b_step_dpo.sh"].replace(
        "    --bf16=True \\\n", "    --bf16=True \\\n    --tensor_parallel_size=4 \\\n")
    assert _check(_audit(files), "A4").status.value == "used"


# --- MovieChat: LAVIS's runner and registered task classes beside an inference.py; nothing starts the training loop --------

_TASK = ("from MovieChat.common.registry import registry\nfrom MovieChat.tasks.base_task import BaseTask\n\n\n"
         "@registry.register_task(\"video_text_pretrain\")\nclass VideoTextPretrainTask(BaseTask):\n"
         "    def __init__(self):\n        super().__init__()\n\n    def evaluation(self, model, data_loader, cuda_enabled=True):\n"
         "        pass\n")
_BASE_TASK = ("import torch\n\n\nclass BaseTask:\n    def train_step(self, model, samples):\n        return model(samples)['loss']\n\n"
              "    def _train_inner_loop(self, model, data_loader, optimizer):\n        for i in range(len(data_loader)):\n"
              "            loss = self.train_step(model=model, samples=next(data_loader))\n            loss.backward()\n"
              "            optimizer.step()\n")
_INFER = ("import torch\nfrom transformers import LlamaForCausalLM\n\n\nif __name__ == '__main__':\n"
          "    model = LlamaForCausalLM.from_pretrained('lmsys/vicuna-7b-v1.1', torch_dtype=torch.float16)\n"
          "    out = model.generate(input_ids=None, max_new_tokens=300)\n")
_README = "# MovieChat\n\n## How to run\n\n```bash\npython inference.py --cfg-path eval_configs/MovieChat.yaml\n```\n"


def _moviechat() -> dict[str, str]:
    return {"MovieChat/tasks/video_text_pretrain.py": _TASK, "MovieChat/tasks/base_task.py": _BASE_TASK,
            "MovieChat/common/registry.py": "class Registry:\n    pass\n\n\nregistry = Registry()\n",
            "inference.py": _INFER, "README.md": _README}


def test_a_module_of_registered_task_classes_is_no_entry_point() -> None:
    result = _audit(_moviechat())
    assert "MovieChat/tasks/video_text_pretrain.py" not in result.roles.entry_points, result.roles.entry_points
    # control: the same module running its task under a main block is one
    files = _moviechat()
    files["MovieChat/tasks/video_text_pretrain.py"] = _TASK + "\n\nif __name__ == '__main__':\n    VideoTextPretrainTask()._train_inner_loop(None, None, None)\n"
    assert "MovieChat/tasks/video_text_pretrain.py" in _audit(files).roles.entry_points
    # control: in a package (LAVIS's sdist), the registered tasks are what its users' scripts start
    files = {**_moviechat(), "pyproject.toml": "[project]\nname = \"moviechat\"\n"}
    assert "MovieChat/tasks/video_text_pretrain.py" in _audit(files).roles.entry_points


def test_a_training_loop_nothing_starts_beside_an_inference_script_is_not_training() -> None:
    result = _audit(_moviechat())
    assert not result.project.does_training and result.project.does_inference
    assert _check(result, "A1").status.value == "n/a"
    # control: the same tree packaged as a library: its users start the loop
    files = {**_moviechat(), "setup.py": "from setuptools import setup\n\nsetup(name='moviechat', packages=['MovieChat'])\n"}
    assert _audit(files).project.does_training


# --- GRPO-Zero: the step loop calls ``update_policy`` imported from grpo.py, which accumulates and steps the optimizer ---------

_GRPO = ("import torch\n\n\ndef update_policy(model, optimizer, episodes, micro_batch_size):\n"
         "    for i in range(0, len(episodes), micro_batch_size):\n        loss = model(episodes[i:i + micro_batch_size])\n"
         "        loss.backward()\n    optimizer.step()\n    optimizer.zero_grad(set_to_none=True)\n    return {'loss': 0.0}\n")
_GRPO_TRAIN = ("import torch\nfrom torch.utils.tensorboard.writer import SummaryWriter\nfrom grpo import update_policy\n\n\n"
               "def main(config):\n    tb_writer = SummaryWriter()\n    train_dataloader = []\n"
               "    for step, batch in enumerate(train_dataloader, start=1):\n"
               "        results = {call}\n        tb_writer.add_scalar('loss', results['loss'], step)\n\n\n"
               "if __name__ == '__main__':\n    main({{}})\n")


def test_a_step_loop_calling_an_imported_update_function_is_a_training_step_loop() -> None:
    files = {"grpo.py": _GRPO, "train.py": _GRPO_TRAIN.format(call="update_policy(model=None, optimizer=None, episodes=batch, micro_batch_size=2)")}
    i5 = _check(_audit(files), "I5")
    assert i5.status.value == "unused" and any(e.path == "train.py" for e in i5.evidence), i5
    # control: a loop that only evaluates (no update) is no step loop
    files["train.py"] = _GRPO_TRAIN.format(call="{'loss': 0.0}").replace("from grpo import update_policy\n", "")
    assert _check(_audit(files), "I5").status.value != "unused"


# --- MA-LMM: LAVIS's ``--options run.accum_grad_iters 2 ...``, config keys overridden in pairs -------------------------------

_MALMM_SH = ("torchrun --nproc_per_node=4 \\\n    --master_port=34651 \\\n    train.py \\\n"
             "    --cfg-path lavis/projects/malmm/cap_msrvtt.yaml \\\n    --options \\\n    model.arch blip2_vicuna_instruct \\\n"
             "    model.freeze_vit True \\\n    run.init_lr 1e-5 \\\n    run.accum_grad_iters 2 \\\n    run.num_workers 12 \\\n"
             "    run.prefix train\n")


def test_lavis_option_pairs_are_the_launch_settings() -> None:
    files = {"train.py": _LLAVA_TRAIN, "run_scripts/msrvtt/train_cap.sh": _MALMM_SH,
             "lavis/projects/malmm/cap_msrvtt.yaml": "run:\n  init_lr: 1e-4\n  accum_grad_iters: 1\n  num_workers: 4\n"}
    f = _audit(files).facts
    launch = [(s.value, s.line) for s in f.settings("accum_grad_iters") if s.source == "launcher"]
    assert launch == [(2, 9)], launch
    assert [s.value for s in f.settings("num_workers") if s.source == "launcher"] == [12]
    # control: mmengine's ``--cfg-options key=value`` spelling reads the same way
    files["run_scripts/msrvtt/train_cap.sh"] = ("torchrun --nproc_per_node=4 train.py --cfg-path x.yaml "
                                                "--cfg-options run.accum_grad_iters=4 run.num_workers=2\n")
    f = _audit(files).facts
    assert [s.value for s in f.settings("accum_grad_iters") if s.source == "launcher"] == [4]


def test_registered_task_modules_read_through_the_cache_recording(tmp_path: Path) -> None:
    # the roles read calls through the recording view (``RoleCall``) when a scan keeps a facts cache: the same tree scans
    # with and without the cache to the same report
    assert scan_cold_and_cached(tmp_path, _moviechat())["scan"]["entry_points"] == []
