"""Round 62 (issue #9): claims of more public repositories (MobiLlama, VisualGLM-6B, LongVU, MPP-LLaVA, VL-RLHF, MM-EUREKA,
Osprey), read claim by claim. Each test is one false claim of those reports, made from the shape of the real code, with a
control that keeps the rule honest."""

from __future__ import annotations

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check

# --- MobiLlama: ``fire.Fire(main)`` with ``accumulate_grad_batches=1``; a progress bar fed a dict holding the loss ------------

_MOBI_MAIN = (
    "import fire\nimport torch\nimport tqdm\nimport lightning as L\nimport wandb\n\n\n"
    "def train_chunk(fabric, model, optimizer, examples, per_device_batch_size, accumulate_grad_batches, run_wandb):\n"
    "    step = 0\n    example_batch_idxes = tqdm.trange(0, len(examples), per_device_batch_size)\n"
    "    for i in example_batch_idxes:\n        step += 1\n"
    "        is_accumulating = (step % accumulate_grad_batches != 0)\n"
    "        input_ids = torch.tensor(examples[i:i + per_device_batch_size], device=fabric.device)\n"
    "        with fabric.no_backward_sync(model, enabled=is_accumulating):\n"
    "            loss = model(input_ids).loss\n            fabric.backward(loss / accumulate_grad_batches)\n"
    "        if not is_accumulating:\n            optimizer.step()\n            optimizer.zero_grad()\n\n"
    "        log = {\n            'loss': loss.item(),\n            'step': step,\n        }\n"
    "        example_batch_idxes.set_postfix(log)\n"
    "{tracker}"
    "\n\ndef main(n_nodes=1, n_devices_per_node=8, per_device_batch_size=8, accumulate_grad_batches=1, run_wandb=False):\n"
    "    fabric = L.Fabric(num_nodes=n_nodes, devices=n_devices_per_node, precision='bf16-mixed')\n"
    "    fabric.launch()\n    model, optimizer = fabric.setup(None, None)\n"
    "    train_chunk(fabric=fabric, model=model, optimizer=optimizer, examples=[], per_device_batch_size=per_device_batch_size,\n"
    "                accumulate_grad_batches=accumulate_grad_batches, run_wandb=run_wandb)\n\n\n"
    "if __name__ == '__main__':\n    fire.Fire(main)\n"
)
_MOBI_SH = "#!/bin/sh\n#SBATCH --nodes=20\n#SBATCH --gres=gpu:8\n\nsrun python main_mobillama.py --n_nodes 20 --run_wandb{extra}\n"


def test_a_fire_commands_keyword_defaults_are_its_options() -> None:
    files = {"main_mobillama.py": _MOBI_MAIN.replace("{tracker}", ""), "pretrain.sh": _MOBI_SH.format(extra="")}
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "unused" and "main_mobillama.py:" in " ".join(f"{e.path}:{e.line}" for e in c5.evidence), c5
    # control: the launch passes the count, a Fire option like any other
    files["pretrain.sh"] = _MOBI_SH.format(extra=" --accumulate_grad_batches 4")
    assert _check(_audit(files), "C5").status.value == "used"


def test_fire_options_only_where_the_file_trains() -> None:
    # llama-recipes' tokenizer script: ``spm.SentencePieceTrainer.train(...)`` under ``fire.Fire(main)``, no training step
    tok = ("import fire\nimport sentencepiece as spm\n\n\ndef main(data_file, save_path, vocab_size: int = 16_000, num_threads: int = 8):\n"
           "    spm.SentencePieceTrainer.train(input=data_file, model_prefix=save_path, vocab_size=vocab_size)\n\n\n"
           "if __name__ == '__main__':\n    fire.Fire(main)\n")
    result = _audit({"recipes/train_tokenizer.py": tok, "finetuning.py": _LLAVA_TRAIN})
    assert not result.facts.arg_options("vocab_size")
    result = _audit({"main_mobillama.py": _MOBI_MAIN.replace("{tracker}", ""), "pretrain.sh": _MOBI_SH.format(extra="")})
    assert [a.default for a in result.facts.arg_options("accumulate_grad_batches")] == [1]


def test_a_progress_bar_fed_the_loss_dict_logs_every_step() -> None:
    files = {"main_mobillama.py": _MOBI_MAIN.replace("{tracker}", ""), "pretrain.sh": _MOBI_SH.format(extra="")}
    i4 = _check(_audit(files), "I4")
    assert i4.status.value == "unused" and any("set_postfix(log)" in e.snippet for e in i4.evidence), i4
    # control: the same bar fed a dict without the loss reads nothing from the GPU to show
    files["main_mobillama.py"] = _MOBI_MAIN.replace("{tracker}", "").replace("'loss': loss.item()", "'lr': 0.1")
    assert _check(_audit(files), "I4").status.value != "unused"


# --- VisualGLM-6B: a SwissArmyTransformer VLM whose image token count is an option; a chat demo's model-parallel size ---------

_VGLM_MODEL = (
    "import json\nfrom sat.model.official import ChatGLMModel\n\n\nclass VisualGLMModel(ChatGLMModel):\n"
    "    @classmethod\n    def add_model_specific_args(cls, parser):\n"
    "        group = parser.add_argument_group('VisualGLM', 'VisualGLM Configurations')\n"
    "        group.add_argument('--image_length', type=int, default=32)\n"
    "        group.add_argument('--eva_args', type=json.loads, default={})\n        return super().add_model_specific_args(parser)\n"
)
_VGLM_FT = (
    "import torch\nfrom sat.training.deepspeed_training import training_main\nfrom model import VisualGLMModel\n\n\n"
    "def forward_step(data_iterator, model, args, timers):\n    loss = model(**next(data_iterator))\n    return loss, {}\n\n\n"
    "if __name__ == '__main__':\n    model, args = VisualGLMModel.from_pretrained('visualglm-6b', None)\n"
    "    training_main(args, model_cls=model, forward_step_function=forward_step)\n"
)
_VGLM_SH = ("#! /bin/bash\nMP_SIZE=1\ngpt_options=\" --model-parallel-size ${MP_SIZE} --train-iters 300 --fp16 \"\n"
            "deepspeed --master_port 16666 finetune_visualglm.py ${gpt_options}\n")
_VGLM_DEMO = ("from sat.model import AutoModel\n\nmodel, model_args = AutoModel.from_pretrained('visualglm-6b',\n"
              "    overwrite_args={'model_parallel_size': 2})\n")


def test_an_image_token_count_option_makes_a_vlm() -> None:
    files = {"model/visualglm.py": _VGLM_MODEL, "finetune_visualglm.py": _VGLM_FT, "finetune/finetune_visualglm.sh": _VGLM_SH}
    assert _audit(files).project.model_type == "MLLM"
    files["model/visualglm.py"] = _VGLM_MODEL.replace("--image_length", "--prefix_length")
    assert _audit(files).project.model_type != "MLLM"


def test_a_chat_demos_model_parallel_size_is_not_trainings() -> None:
    files = {"model/visualglm.py": _VGLM_MODEL, "finetune_visualglm.py": _VGLM_FT, "finetune/finetune_visualglm.sh": _VGLM_SH,
             "cli_demo_mp.py": _VGLM_DEMO}
    a4 = _check(_audit(files), "A4")
    assert a4.status.value == "unused" and not any(e.path == "cli_demo_mp.py" for e in a4.evidence), a4
    # control: the same call in a module of the project that is not named for a demo is read
    files["model_parallel.py"] = files.pop("cli_demo_mp.py")
    assert _check(_audit(files), "A4").status.value == "used"


_SAT_SH = ("#! /bin/bash\ngpt_options=\" --model-parallel-size 1 --mode finetune --train-iters 300 --train-data ./data.json --split 1 \\\n"
           "    --valid-data ./data.json --lr-decay-style cosine --zero-stage 1 --lr 0.0001 --batch-size 4 --fp16 \"\n"
           "deepspeed --master_port 16666 finetune_visualglm.py ${gpt_options}\n")


def test_swissarmytransformer_loader_defaults_are_its_own() -> None:
    files = {"model/visualglm.py": _VGLM_MODEL, "finetune_visualglm.py": _VGLM_FT, "finetune/finetune_visualglm.sh": _SAT_SH}
    result = _audit(files)
    f1, f2 = _check(result, "F1"), _check(result, "F2")
    assert f1.status.value == "partial" and "only 1 loader worker" in f1.detail, f1.detail
    assert "prefetch_factor=4" in f2.detail, f2.detail
    # control: the same Megatron-style flags for a script that does not run on SwissArmyTransformer keep Megatron's 2 workers
    files["finetune_visualglm.py"] = _VGLM_FT.replace("from sat.training.deepspeed_training import training_main\n",
                                                      "from megatron.training import pretrain as training_main\n")
    result = _audit(files)
    assert "only 2 loader worker" in _check(result, "F1").detail and "prefetch_factor=2" in _check(result, "F2").detail


# --- LongVU: the Alpaca template's ``facebook/opt-125m`` beside launches that load ``--input_model_filename`` -----------------

_LONGVU_TRAIN = (
    "from dataclasses import dataclass, field\nfrom typing import Optional\nimport transformers\n\n\n@dataclass\nclass ModelArguments:\n"
    "    model_name_or_path: Optional[str] = field(default=\"facebook/opt-125m\")\n"
    "    input_model_filename: Optional[str] = field(default=None)\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
    "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.input_model_filename)\n"
    "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n"
)
_LONGVU_SH = ("BASE_CHECKPOINT=\"Qwen/Qwen2-7B-Instruct\"\n\n{env}torchrun --nproc_per_node=8 --nnodes=1 \\\n"
              "longvu/train.py \\\n--output_dir \"/tmp/longvu/\" \\\n--input_model_filename $BASE_CHECKPOINT \\\n--bf16 True\n")


def test_the_template_placeholder_model_is_not_the_runs() -> None:
    files = {"longvu/train.py": _LONGVU_TRAIN, "scripts/train_image_qwen.sh": _LONGVU_SH.format(env="")}
    p = _audit(files).project
    assert "facebook/opt-125m" not in p.model_names and "Qwen/Qwen2-7B-Instruct" in p.model_names, p.model_names
    assert p.params_billions is not None and p.params_billions > 5
    # control: with no launch naming a model the placeholder is all there is
    files["scripts/train_image_qwen.sh"] = _LONGVU_SH.format(env="").replace("--input_model_filename $BASE_CHECKPOINT \\\n", "")
    assert "facebook/opt-125m" in _audit(files).project.model_names


def test_cuda_launch_blocking_in_every_training_launch_is_a_launch_bound_reason() -> None:
    files = {"longvu/train.py": _LONGVU_TRAIN,
             "scripts/train_image_qwen.sh": _LONGVU_SH.format(env="CUDA_LAUNCH_BLOCKING=1 TORCH_DISTRIBUTED_DEBUG=DETAIL ")}
    reasons = " ".join(_audit(files).project.bottleneck_reasons)
    assert "CUDA_LAUNCH_BLOCKING=1 in the training launch (`scripts/train_image_qwen.sh:3`)" in reasons, reasons
    # control: one recipe of three sets it: that recipe's problem, said with its share, not the verdict
    files["scripts/train_video_qwen.sh"] = files["scripts/train_image_qwen.sh"]
    files["scripts/train_image_qwen.sh"] = files["scripts/train_video_llama.sh"] = _LONGVU_SH.format(env="")
    p = _audit(files).project
    assert p.bottleneck.value != "launch-bound" and "(1 of 3 launch files)" in " ".join(p.bottleneck_reasons), p.bottleneck_reasons


# --- MPP-LLaVA: ``deepspeed_tutorials/`` (a RoBERTa MLM showing ZeRO stages) beside the project's pipeline trainer ------------

_TUTORIAL_BERT = (
    "import deepspeed\nimport torch\nfrom transformers.models.roberta import RobertaConfig, RobertaModel\n"
    "from transformers.models.roberta.modeling_roberta import RobertaLMHead\n\n\n"
    "class RobertaMLM(torch.nn.Module):\n    def __init__(self, config):\n        super().__init__()\n"
    "        self.roberta = RobertaModel(config)\n        self.lm_head = RobertaLMHead(config)\n\n\n"
    "def train(ds_config):\n    model = RobertaMLM(RobertaConfig(vocab_size=50265))\n"
    "    engine, _, _, _ = deepspeed.initialize(model=model, config=ds_config)\n"
    "    for batch in []:\n        loss = engine(batch)\n        engine.backward(loss)\n        engine.step()\n"
)
_ZERO3 = '{"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}, "train_micro_batch_size_per_gpu": 8}\n'


def test_a_tutorial_folder_is_docs() -> None:
    files = {"train_pipeline.py": _LLAVA_TRAIN, "deepspeed_tutorials/train_bert_official.py": _TUTORIAL_BERT,
             "deepspeed_tutorials/ds_configs/ds_config_zero3.json": _ZERO3,
             "deepspeed_tutorials/run_scripts/run_zero3.sh": "deepspeed train_bert_official.py --ds_config ../ds_configs/ds_config_zero3.json\n"}
    result = _audit(files)
    assert result.roles.by_path["deepspeed_tutorials/train_bert_official.py"] == "docs"
    assert _check(result, "A3").status.value != "used"
    # control: the same folder named for the project's training is its training
    moved = {k.replace("deepspeed_tutorials/", "ds_training/"): v.replace("../ds_configs", "ds_configs") for k, v in files.items()}
    assert _audit(moved).roles.by_path["ds_training/train_bert_official.py"] != "docs"


def test_a_roberta_masked_lm_trainer_is_not_llm_training() -> None:
    files = {"train.py": _LLAVA_TRAIN, "bert/train_bert.py": _TUTORIAL_BERT}
    assert _audit(files).roles.by_path["bert/train_bert.py"] == "side"
    # control: the same script fine-tuning a causal LM is training
    causal = _TUTORIAL_BERT.replace("RobertaLMHead", "LlamaForCausalLM").replace("transformers.models.roberta.modeling_roberta", "transformers")
    assert _audit({"train.py": _LLAVA_TRAIN, "bert/train_bert.py": causal}).roles.by_path["bert/train_bert.py"] != "side"


_PIPE_TRAIN = (
    "import deepspeed\nimport wandb\nfrom omegaconf import OmegaConf\n\n\ndef main(cfg):\n"
    "    engine, optimizer, _, _ = deepspeed.initialize(model=None, config=OmegaConf.to_container(cfg.run_cfg.deepspeed_config))\n"
    "    for epoch in range(cfg.run_cfg.max_epoch):\n        train_iter = iter([])\n"
    "        for cur_step in range(100):\n            loss = engine.train_batch(data_iter=train_iter)\n"
    "            wandb.log({'loss': loss.item()}, step=cur_step)\n"
)
_PIPE_CFG = ("model:\n  arch: minigpt4qwen\nrun_cfg:\n  max_epoch: 1\n  deepspeed_config:\n    train_micro_batch_size_per_gpu: 1\n"
             "    zero_optimization:\n      stage: 1\n      offload_optimizer:\n        device: \"cpu\"\n        pin_memory: true\n")


def test_a_model_readme_documents_the_recipe_and_a_pipeline_engine_steps() -> None:
    files = {"train_pipeline.py": _PIPE_TRAIN, "lavis/projects/pp_qwen14b/sft_pp.yaml": _PIPE_CFG,
             "lavis/projects/pp_qwen14b/other_pp.yaml": _PIPE_CFG.replace("offload_optimizer:\n        device: \"cpu\"", "offload_x:\n        device: \"cpu\""),
             "README.md": ("## Train\n\n```bash\npython -m torch.distributed.run --nproc_per_node=8 train_pipeline.py "
                           "--cfg-path lavis/projects/pp_qwen14b/other_pp.yaml --num-stages 8\n```\n"),
             "MPPQwen14B_README.md": ("## Train\n\n```bash\npython -m torch.distributed.run --nproc_per_node=6 train_pipeline.py "
                                      "--cfg-path lavis/projects/pp_qwen14b/sft_pp.yaml --num-stages 6\n```\n")}
    result = _audit(files)
    # the recipe a model's README runs is named: its optimizer offload is a run's
    assert _check(result, "C4").status.value == "used"
    # ``engine.train_batch(data_iter=...)`` runs a whole step: the tracker call beside it reports every step
    i5 = _check(result, "I5")
    assert i5.status.value == "unused" and any(e.path == "train_pipeline.py" for e in i5.evidence), i5
    # control: with the model README gone, the offloading recipe is one nothing names
    del files["MPPQwen14B_README.md"]
    assert _check(_audit(files), "C4").status.value == "partial"


# --- VL-RLHF: accelerate configs zero2.yaml (every launch) and zero3.yaml (none) ---------------------------------------------

_ACC = ("compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  offload_optimizer_device: none\n  offload_param_device: none\n"
        "  zero_stage: {stage}\ndistributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n")
_DPO_SH = ("accelerate launch --config_file accelerate_config/{cfg}.yaml --num_processes $gpu_number \\\n"
           "    src/vlrlhf/dpo.py --per_device_train_batch_size 4 --learning_rate 1e-5 --bf16 True\n")


def test_an_accelerate_config_no_launch_names_is_not_the_runs() -> None:
    files = {"src/vlrlhf/dpo.py": _LLAVA_TRAIN, "accelerate_config/zero2.yaml": _ACC.format(stage=2),
             "accelerate_config/zero3.yaml": _ACC.format(stage=3), "scripts/dpo_qwenvl.sh": _DPO_SH.format(cfg="zero2"),
             "scripts/dpo_llava.sh": _DPO_SH.format(cfg="zero2")}
    a3 = _check(_audit(files), "A3")
    assert a3.status.value == "used" and a3.values["zero_stage"] == 2, a3
    # control: a launch that names zero3.yaml makes it a run's
    files["scripts/dpo_llava.sh"] = _DPO_SH.format(cfg="zero3")
    assert _check(_audit(files), "A3").values["zero_stage"] == 3


# --- MM-EUREKA: OpenRLHF's Ray launcher on two actor nodes -------------------------------------------------------------------

_RAY_SH = ("ray job submit --address=\"http://127.0.0.1:8265\" \\\n   -- python3 -m openrlhf.cli.train_ppo_ray \\\n"
           "   --actor_num_nodes {nodes} \\\n   --actor_num_gpus_per_node 8 \\\n   --vllm_num_engines 8 \\\n"
           "   --pretrain Qwen/Qwen2.5-VL-7B-Instruct \\\n   --micro_train_batch_size 2 \\\n   --train_batch_size 128 \\\n"
           "   --zero_stage 1 \\\n   --bf16\n")
_RAY_STRATEGY = (
    "class DeepspeedStrategy:\n    def setup_distributed(self):\n"
    "        self.accumulated_gradient = self.train_batch_size * self.ring_attn_size // self.micro_train_batch_size // self.world_size\n"
)
_RAY_CLI = ("import argparse\nfrom openrlhf.utils.deepspeed import DeepspeedStrategy\n\n\nif __name__ == '__main__':\n"
            "    parser = argparse.ArgumentParser()\n    parser.add_argument('--actor_num_nodes', type=int, default=1)\n"
            "    parser.add_argument('--train_batch_size', type=int, default=128)\n"
            "    parser.add_argument('--micro_train_batch_size', type=int, default=4)\n    args = parser.parse_args()\n"
            "    for batch in []:\n        loss = batch\n        loss.backward()\n")


def test_ray_actor_nodes_are_the_runs_nodes() -> None:
    files = {"openrlhf/cli/train_ppo_ray.py": _RAY_CLI, "openrlhf/utils/deepspeed/deepspeed.py": _RAY_STRATEGY,
             "openrlhf/utils/deepspeed/__init__.py": "from .deepspeed import DeepspeedStrategy\n",
             "examples/scripts/train_multi_node.sh": _RAY_SH.format(nodes=2)}
    result = _audit(files)
    assert result.project.multi_node
    c5 = _check(result, "C5")
    assert "4 micro-batches per step on 16 GPUs" in c5.detail, c5.detail
    # control: one actor node is one node, judged on its 8 GPUs
    files["examples/scripts/train_multi_node.sh"] = _RAY_SH.format(nodes=1)
    result = _audit(files)
    assert not result.project.multi_node and "8 micro-batches per step on 8 GPUs" in _check(result, "C5").detail


# --- Osprey: the dataset list a launch passes as JSON names where the data live -----------------------------------------------

_OSPREY_CFG = ('[\n    {\n        "type": "RefCOCO",\n        "ann_file": "./data/refcocos/finetune_refcoco_train_with_mask.json",\n'
               '        "img_prefix": "./data/coco/imgs"\n    }\n]\n')
_OSPREY_SH = ("deepspeed --include localhost:0,1,2,3 osprey/train/train_mem.py \\\n    --deepspeed ./scripts/zero2.json \\\n"
              "    --dataset_config ./osprey/configs/stage2.json \\\n    --bf16 True \\\n    --per_device_train_batch_size 1\n")


def test_a_launched_dataset_list_names_the_data_location() -> None:
    files = {"osprey/train/train_mem.py": _LLAVA_TRAIN, "osprey/configs/stage2.json": _OSPREY_CFG, "scripts/stage2.sh": _OSPREY_SH}
    result = _audit(files)
    i2 = _check(result, "I2")
    assert "./data/refcocos/finetune_refcoco_train_with_mask.json" in i2.values.get("data_paths", []), i2
    # (the note names the paths in the order of their evidence, so the line cited holds the first path named)
    storage = next(r for r in result.project.bottleneck_reasons if r.startswith("storage"))
    assert "(./data/refcocos/finetune_refcoco_train_with_mask.json, ./data/coco/imgs; osprey/configs/stage2.json:4)" in storage, storage
    # control: the same list passed by no launch is data, not a run's setting
    files["scripts/stage2.sh"] = _OSPREY_SH.replace("    --dataset_config ./osprey/configs/stage2.json \\\n", "")
    assert not _check(_audit(files), "I2").values.get("data_paths")
