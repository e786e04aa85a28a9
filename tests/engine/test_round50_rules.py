"""Round 50 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- baaivision/EVE: LLaVA's placeholder default named as a model family ------------------------------------------------

_EVE_TRAIN = (
    "from dataclasses import dataclass, field\nfrom typing import Optional\n\nimport transformers\n\n\n"
    "@dataclass\nclass ModelArguments:\n"
    "    model_name_or_path: Optional[str] = field(default=\"facebook/opt-125m\")\n"
    "    version: Optional[str] = field(default=\"v0\")\n\n\n"
    "def train():\n"
    "    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
    "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.LlamaForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
    "    trainer = transformers.Trainer(model=model, args=training_args)\n"
    "    trainer.train()\n\n\nif __name__ == \"__main__\":\n    train()\n")


def _eve_launch(model: str) -> str:
    return ("#!/bin/bash\nCKPT_PATH=\"" + model + "\"\n"
            "torchrun --nproc_per_node=8 --nnodes=4 eve/train/train_mem.py \\\n"
            "    --deepspeed ./scripts/zero3.json \\\n    --model_name_or_path ${CKPT_PATH} \\\n"
            "    --version plain \\\n    --bf16 True \\\n    --model_max_length 2048\n")


def test_a_default_every_launch_overrides_names_no_model_family() -> None:
    files = {"eve/train/train_mem.py": "from eve.train.train import train\n\nif __name__ == \"__main__\":\n    train()\n",
             "eve/train/train.py": _EVE_TRAIN, "scripts/eve/eve7b_prealign.sh": _eve_launch("Qwen/Qwen2.5-7B-Instruct")}
    p = _audit(files).project
    assert p.model_families == ["qwen2"]
    assert p.model_names == ["Qwen/Qwen2.5-7B-Instruct"]
    # control: a launch that leaves the default in place trains that model, whose family it names
    files["scripts/eve/eve7b_prealign.sh"] = _eve_launch("Qwen/Qwen2.5-7B-Instruct").replace(" \\\n    --model_name_or_path ${CKPT_PATH}", "")
    assert "opt" in _audit(files).project.model_families


# --- mbzuai-oryx/groundingLMM (and dvlab-research/LISA): the step loop around a gradient-accumulation loop -------------

_GLAMM_TRAIN = (
    "import argparse\n\nimport deepspeed\nimport torch\nfrom torch.utils.tensorboard import SummaryWriter\n\n\n"
    "def parse_args():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument(\"--steps_per_epoch\", default=500, type=int)\n"
    "    parser.add_argument(\"--grad_accumulation_steps\", default=10, type=int)\n"
    "    parser.add_argument(\"--epochs\", default=10, type=int)\n"
    "    parser.add_argument(\"--local_rank\", default=0, type=int)\n    return parser.parse_args()\n\n\n"
    "def train(data_loader, model, scheduler, writer, args):\n"
    "    model.train()\n    data_iter = iter(data_loader)\n"
    "    for global_step in range(args.steps_per_epoch):\n"
    "        for _ in range(args.grad_accumulation_steps):\n"
    "            data_batch = next(data_iter)\n"
    "            output_dict = model(**data_batch)\n"
    "            model.backward(output_dict[\"loss\"])\n"
    "            model.step()\n\n"
    "{report}\n\n"
    "def main():\n    args = parse_args()\n    writer = SummaryWriter(\"runs\")\n"
    "    model_engine, optimizer, train_loader, scheduler = deepspeed.initialize(args=args, model=torch.nn.Linear(8, 8))\n"
    "    for epoch in range(args.epochs):\n        train(train_loader, model_engine, scheduler, writer, args)\n\n\n"
    "if __name__ == \"__main__\":\n    main()\n")
_EVERY_STEP = ("        if global_step != 0:\n            curr_lr = scheduler.get_last_lr()\n"
               "            if args.local_rank == 0:\n                writer.add_scalar(\"train/lr\", curr_lr[0], global_step)\n")
_EVERY_50 = _EVERY_STEP.replace("if global_step != 0:", "if global_step % 50 == 0:")


def test_a_tracker_call_in_the_loop_around_the_accumulation_loop_reports_every_step() -> None:
    files = {"train.py": _GLAMM_TRAIN.format(report=_EVERY_STEP),
             "scripts/train.sh": "deepspeed --master_port 24999 train.py --grad_accumulation_steps 10\n"}
    i5 = _check(_audit(files), "I5")
    assert i5.status.value == "unused" and "every step" in i5.detail
    assert [e.line for e in i5.evidence] == [30]  # writer.add_scalar("train/lr", ...)
    # control: the same report every 50 steps is sane
    files["train.py"] = _GLAMM_TRAIN.format(report=_EVERY_50)
    assert _check(_audit(files), "I5").status.value == "used"


# --- baaivision/EVE: a global batch multiplied from four different launch scripts --------------------------------------

def _eve_stage(nodes: int, micro: int, accum: int) -> str:
    return ("#!/bin/bash\nexport GPUS_PER_NODE=8\nexport NNODES=" + str(nodes) + "\nexport MASTER_PORT=23456\n\n"
            "torchrun --nproc_per_node=$GPUS_PER_NODE --nnode=$NNODES --node_rank=$1 --master_addr=$2 --master_port=$MASTER_PORT \\\n"
            "    eve/train/train_mem.py \\\n    --deepspeed ./scripts/zero3.json \\\n"
            "    --model_name_or_path Qwen/Qwen2.5-7B-Instruct \\\n    --bf16 True \\\n"
            f"    --per_device_train_batch_size {micro} \\\n    --per_device_eval_batch_size 4 \\\n"
            f"    --gradient_accumulation_steps {accum} \\\n    --learning_rate 2e-5 \\\n    --model_max_length 4096\n")


def test_the_global_batch_is_each_launchs_own() -> None:
    files = {"eve/train/train_mem.py": "from eve.train.train import train\n\nif __name__ == \"__main__\":\n    train()\n",
             "eve/train/train.py": _EVE_TRAIN,
             "scripts/eve/eve7b_prealign.sh": _eve_stage(4, 16, 1),  # 16 x 1 x 8 x 4 = 512
             "scripts/eve/2_eve7b_fullalign.sh": _eve_stage(16, 2, 2),  # 2 x 2 x 8 x 16 = 512
             "scripts/eve/0_eve7b_prealign_ve.sh": _eve_stage(16, 8, 1)}  # 8 x 1 x 8 x 16 = 1024
    g2 = _check(_audit(files), "G2")
    assert g2.detail.endswith("(estimated global batch 512)")  # not 16 x 2 x 8 x 16 = 4096, which no launch runs


# --- TIGER-AI-Lab/VLM2Vec: the scale taken from a baseline's score file ------------------------------------------------

_VLM2VEC_TRAIN = (
    "from transformers import HfArgumentParser\n\nfrom src.arguments import DataArguments, ModelArguments, TrainingArguments\n"
    "from src.model.model import MMEBModel\nfrom src.trainer import GradCacheLateProcessTrainer\n\n\n"
    "def main():\n    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))\n"
    "    model_args, data_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = MMEBModel.build(model_args)\n"
    "    trainer = GradCacheLateProcessTrainer(model=model, args=training_args)\n    trainer.train()\n\n\n"
    "if __name__ == \"__main__\":\n    main()\n")
_VLM2VEC_LAUNCH = ("torchrun --nproc_per_node=8 --master_port=22447 --max_restarts=0 train.py \\\n"
                   "    --lora --lora_r 16 --model_name Qwen/Qwen2-VL-2B-Instruct --bf16 --pooling eos \\\n"
                   "    --per_device_train_batch_size 128 --gc_q_chunk_size 8 --save_steps 50 --logging_steps 1\n")
_SCORES = ('{\n    "metadata": {\n        "model_name": "LamRA-Ret-Qwen2.5VL-7b",\n'
           '        "report_generated_date": "2025-08-17T20:34:06.593887"\n    },\n'
           '    "metrics": {\n        "image": {\n            "ImageNet-1K": {\n                "hit@1": 0.592,\n'
           '                "ndcg_linear@5": 0.7199949989383112\n            }\n        }\n    }\n}\n')


def test_a_model_named_by_a_score_file_is_not_the_trained_model() -> None:
    files = {"train.py": _VLM2VEC_TRAIN, "experiments/public/train/train_v2-qwen2vl-2B.sh": _VLM2VEC_LAUNCH,
             "experiments/public/all_scores/v2.0.1/LamRA-Ret-Qwen2.5VL-7b.json": _SCORES}
    p = _audit(files).project
    assert "LamRA-Ret-Qwen2.5VL-7b" not in p.model_names and p.estimated_params != "7B"
    # control: the same name in a plain config (no scores beside it) is a model the project names
    files["experiments/public/all_scores/v2.0.1/LamRA-Ret-Qwen2.5VL-7b.json"] = _SCORES.replace('"metrics"', '"settings"')
    assert "LamRA-Ret-Qwen2.5VL-7b" in _audit(files).project.model_names


# --- apple/ml-ferret: LLaVA's serving CLI default read as the project's model ------------------------------------------

_FERRET_CLI = (
    "import argparse\n\nimport torch\nfrom ferretui.model.builder import load_pretrained_model\n\n\n"
    "def main(args):\n    tokenizer, model, image_processor, context_len = load_pretrained_model(args.model_path, args.model_base)\n"
    "    while True:\n        inp = input('USER: ')\n        if not inp:\n            break\n"
    "        with torch.inference_mode():\n            output_ids = model.generate(tokenizer(inp).input_ids, max_new_tokens=args.max_new_tokens)\n"
    "        print(tokenizer.decode(output_ids[0]))\n\n\n"
    "if __name__ == \"__main__\":\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument(\"--model-path\", type=str, default=\"facebook/opt-350m\")\n"
    "    parser.add_argument(\"--model-base\", type=str, default=None)\n"
    "    parser.add_argument(\"--max-new-tokens\", type=int, default=512)\n    main(parser.parse_args())\n")
_FERRET_LAUNCH = ("MODEL_VERSION=\"vicuna-7b-v1-3\"\n\ntorchrun --nnodes=1 --nproc_per_node=8 --master_port=25001 \\\n"
                  "    ferretui/train/train_mem.py \\\n    --model_name_or_path ./model/$MODEL_VERSION \\\n"
                  "    --version v1 \\\n    --bf16 True \\\n    --per_device_train_batch_size 16 \\\n"
                  "    --gradient_accumulation_steps 1 \\\n    --model_max_length 2048\n")


def test_a_serving_tools_model_default_is_no_model_of_the_run() -> None:
    files = {"ferretui/train/train_mem.py": "from ferretui.train.train import train\n\nif __name__ == \"__main__\":\n    train()\n",
             "ferretui/train/train.py": _EVE_TRAIN, "ferretui/serve/cli.py": _FERRET_CLI,
             "experiments/ferret_7b_train.sh": _FERRET_LAUNCH}
    p = _audit(files).project
    assert "facebook/opt-350m" not in p.model_names and "opt" not in p.model_families
    # control: with no training launch naming its model, the CLI's default is the one model the project names
    del files["experiments/ferret_7b_train.sh"]
    assert "facebook/opt-350m" in _audit(files).project.model_names
