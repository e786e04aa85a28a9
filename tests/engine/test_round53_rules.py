"""Round 53 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check

_ZERO = '{{\n  "bf16": {{"enabled": "auto"}},\n  "zero_optimization": {{\n    "stage": {stage},\n    "overlap_comm": {overlap}\n  }}\n}}\n'


# --- ShareGPT4V / Open-LLaVA-NeXT: the run's flags inside ``srun ... bash -c '...'`` ----------------------------------------

def _srun(inner_flags: str, nodes: int = 2, config: str = "./scripts/zero3.json") -> str:
    return (f"#!/bin/bash\nexport GPUS_PER_NODE=8\nexport NNODES={nodes}\nSRUN_ARGS=${{SRUN_ARGS:-\"\"}}\n"
            "srun -p Your Partion \\\n    --nodes=$NNODES \\\n    --ntasks-per-node=1 \\\n    ${SRUN_ARGS} \\\n"
            "    bash -c 'torchrun --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE --node_rank $SLURM_NODEID "
            "--master_addr $(scontrol show hostname $SLURM_NODELIST | head -n1) train.py \\\n"
            f"    --deepspeed {config} \\\n{inner_flags}    --output_dir out'\n")


def test_the_flags_of_a_bash_c_string_are_the_runs() -> None:
    files = {"train.py": _LLAVA_TRAIN, "scripts/zero3.json": _ZERO.format(stage=3, overlap="true"),
             "scripts/slurm_finetune.sh": _srun("    --bf16 True \\\n    --gradient_checkpointing True \\\n"
                                                "    --model_max_length 2048 \\\n")}
    audit = _audit(files)
    c1 = _check(audit, "C1")
    assert c1.status.value == "used", c1.detail
    # each flag is cited at its own line inside the quoted string
    assert any(e.path == "scripts/slurm_finetune.sh" and e.line == 11 for e in c1.evidence), c1.evidence
    assert _check(audit, "C3").status.value == "used"
    assert audit.project.max_seq_len == 2048
    assert audit.project.num_nodes == 2
    # control: the same string given to something that is not a shell's -c
    files["scripts/slurm_finetune.sh"] = files["scripts/slurm_finetune.sh"].replace("bash -c '", "echo '")
    audit = _audit(files)
    assert _check(audit, "C1").status.value != "used"


# --- Open-LLaVA-NeXT: the README's linked training script sets the length ------------------------------------------------

def _deepspeed_launch(length: int) -> str:
    return (f"#!/bin/bash\ndeepspeed train.py \\\n    --deepspeed ./scripts/zero3.json \\\n    --bf16 True \\\n"
            f"    --model_max_length {length} \\\n    --output_dir out\n")


def test_the_readme_linked_script_sets_the_sequence_length() -> None:
    files = {"train.py": _LLAVA_TRAIN, "scripts/zero3.json": _ZERO.format(stage=3, overlap="true"),
             **{f"scripts/v1_5/{n}.sh": _deepspeed_launch(2048) for n in ("pretrain", "finetune", "finetune_lora")},
             "scripts/v1_6/train/7b/finetune.sh": _deepspeed_launch(4096),
             "README.md": "# Open-LLaVA-NeXT\n\n## Training\n\nTraining script with DeepSpeed ZeRO-2: "
                          "[`finetune.sh`](scripts/v1_6/train/7b/finetune.sh).\n"}
    assert _audit(files).project.max_seq_len == 4096
    # control: without the link the upstream scripts' majority decides
    files["README.md"] = "# Open-LLaVA-NeXT\n\n## Training\n\nSee the scripts folder.\n"
    assert _audit(files).project.max_seq_len == 2048
    # control: a release-news item that links the script announces it; it does not document the run
    files["README.md"] = ("# Open-LLaVA-NeXT\n\n## News\n\n- `2024/05/01`: we release the [training script]"
                          "(scripts/v1_6/train/7b/finetune.sh).\n")
    assert _audit(files).project.max_seq_len == 2048


# --- Open-LLaVA-NeXT: ZeRO-3 shipped, but the multi-node runs pass ZeRO-2 --------------------------------------------------

def test_full_sharding_is_no_network_cost_when_the_multi_node_runs_pass_zero2() -> None:
    files = {"train.py": _LLAVA_TRAIN, "scripts/zero3.json": _ZERO.format(stage=3, overlap="true"),
             "scripts/zero2.json": _ZERO.format(stage=2, overlap="true"),
             "scripts/v1_5/finetune.sh": _deepspeed_launch(2048),
             "scripts/v1_6/finetune.sh": _srun("    --bf16 True \\\n", nodes=4, config="./scripts/zero2.json"),
             "scripts/v1_6/pretrain.sh": _srun("    --bf16 True \\\n", nodes=4, config="./scripts/zero2.json")}
    reasons = " ".join(_audit(files).project.bottleneck_reasons)
    assert "fully sharded" not in reasons, reasons
    # control: the multi-node runs pass the ZeRO-3 config
    for k in ("scripts/v1_6/finetune.sh", "scripts/v1_6/pretrain.sh"):
        files[k] = files[k].replace("zero2.json", "zero3.json")
    reasons = " ".join(_audit(files).project.bottleneck_reasons)
    assert "fully sharded" in reasons, reasons


# --- MobileVLM: pretraining passes a ZeRO-2 config with overlap_comm off -----------------------------------------------------

def test_overlap_switched_off_in_a_launched_stage_is_partial() -> None:
    files = {"train.py": _LLAVA_TRAIN, "scripts/deepspeed/zero3.json": _ZERO.format(stage=3, overlap="true"),
             "scripts/deepspeed/zero2.json": _ZERO.format(stage=2, overlap="false"),
             "run.sh": ("#!/bin/bash\ndeepspeed train.py --deepspeed scripts/deepspeed/zero2.json --bf16 True --output_dir pt\n"
                        "deepspeed train.py --deepspeed scripts/deepspeed/zero3.json --bf16 True --output_dir ft\n")}
    e2 = _check(_audit(files), "E2")
    assert e2.status.value == "partial", e2.detail
    assert "overlap_comm is off in scripts/deepspeed/zero2.json:5, which the launch at run.sh:2 passes" in e2.detail
    # control: the ZeRO-2 config is shipped but no launch passes it
    files["run.sh"] = files["run.sh"].splitlines()[0] + "\n" + files["run.sh"].splitlines()[2] + "\n"
    assert _check(_audit(files), "E2").status.value == "used"


# --- R1-V: a trainer copy's PEFT branch fed by TRL's get_peft_config, with --use_peft set nowhere -------------------------

_R1V_ENTRY = (
    "from trl import GRPOConfig, ModelConfig, TrlParser, get_peft_config\n"
    "from open_r1.trainer import Qwen2VLGRPOTrainer\n\n\n"
    "def main(script_args, training_args, model_args):\n"
    "    trainer = Qwen2VLGRPOTrainer(model=model_args.model_name_or_path, args=training_args,\n"
    "                                 peft_config=get_peft_config(model_args))\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    parser = TrlParser((GRPOConfig, ModelConfig))\n"
    "    training_args, model_args = parser.parse_args_and_config()\n    main(None, training_args, model_args)\n")
_R1V_TRAINER = (
    "from peft import get_peft_model\nfrom transformers import Trainer, Qwen2VLForConditionalGeneration\n\n\n"
    "class Qwen2VLGRPOTrainer(Trainer):\n    def __init__(self, model, args=None, peft_config=None):\n"
    "        model = Qwen2VLForConditionalGeneration.from_pretrained(model)\n"
    "        if peft_config is not None:\n            model = get_peft_model(model, peft_config)\n"
    "        super().__init__(model=model, args=args)\n")


def test_peft_waiting_for_trls_get_peft_config_is_off_without_use_peft() -> None:
    launch = ("#!/bin/bash\ntorchrun --nproc_per_node=8 src/open_r1/grpo.py \\\n    --model_name_or_path Qwen/Qwen2-VL-2B-Instruct \\\n"
              "    --bf16 true \\\n    --output_dir out\n")
    files = {"src/open_r1/grpo.py": _R1V_ENTRY, "src/open_r1/trainer/__init__.py": "from .grpo_trainer import Qwen2VLGRPOTrainer\n",
             "src/open_r1/trainer/grpo_trainer.py": _R1V_TRAINER, "run_grpo.sh": launch}
    g4 = _check(_audit(files), "G4")
    assert g4.status.value == "unused", g4.detail
    assert "TRL's get_peft_config" in g4.detail and "--use_peft" in g4.detail
    # control: a launch that passes --use_peft
    files["run_grpo.sh"] = launch.replace("--bf16 true", "--use_peft true \\\n    --bf16 true")
    assert _check(_audit(files), "G4").status.value == "used"


# --- R1-V: packing: true beside dataset_kwargs skip_prepare_dataset --------------------------------------------------------

def test_trl_packing_does_not_run_when_dataset_preparation_is_skipped() -> None:
    sft = ("from trl import SFTConfig, SFTTrainer, TrlParser\n\n\ndef collate_fn(examples):\n    return processor(examples, padding=True)\n\n\n"
           "def main(training_args, dataset):\n"
           "    training_args.dataset_kwargs = {\n        \"skip_prepare_dataset\": True,\n    }\n"
           "    trainer = SFTTrainer(model='m', args=training_args, train_dataset=dataset, data_collator=collate_fn)\n"
           "    trainer.train()\n\n\nif __name__ == '__main__':\n    (training_args,) = TrlParser((SFTConfig,)).parse_args_and_config()\n"
           "    main(training_args, None)\n")
    files = {"src/open_r1/sft.py": sft,
             "configs/sft_config.yaml": "model_name_or_path: Qwen/Qwen2-VL-2B-Instruct\nbf16: true\npacking: true\nmax_seq_length: 4096\n",
             "run_sft.sh": "#!/bin/bash\naccelerate launch src/open_r1/sft.py --config configs/sft_config.yaml\n"}
    f7 = _check(_audit(files), "F7")
    assert f7.status.value == "unused", f7.detail
    assert "skip_prepare_dataset (src/open_r1/sft.py:9)" in f7.detail, f7.detail
    # control: without the skip, TRL packs
    files["src/open_r1/sft.py"] = sft.replace('"skip_prepare_dataset": True', '"add_special_tokens": False')
    assert _check(_audit(files), "F7").status.value == "used"


# --- R1-V: --use_vllm picks an engine the trainer builds with enforce_eager=True ---------------------------------------------

def test_a_launch_flag_that_picks_an_eager_engine_is_eager() -> None:
    trainer = ("from vllm import LLM, SamplingParams\nfrom transformers import Trainer\n\n\nclass VLLMTrainer(Trainer):\n"
               "    def __init__(self, model, args):\n        super().__init__(model=model, args=args)\n"
               "        if args.use_vllm:\n            self.llm = LLM(model=model, dtype='bfloat16', enable_prefix_caching=True,\n"
               "                           enforce_eager=True)\n")
    files = {"src/open_r1/trainer/vllm_trainer.py": trainer,
             "src/open_r1/grpo.py": ("from open_r1.trainer.vllm_trainer import VLLMTrainer\n\n\ndef main(args):\n"
                                     "    VLLMTrainer('m', args).train()\n"),
             "run_grpo_vllm.sh": ("#!/bin/bash\ntorchrun --nproc_per_node=7 src/open_r1/grpo.py \\\n    --use_vllm true \\\n"
                                  "    --output_dir out\n"),
             "requirements.txt": "vllm==0.7.2\n"}
    assert _check(_audit(files), "J6").status.value == "unused"
    # control: the engine built with graphs on
    files["src/open_r1/trainer/vllm_trainer.py"] = trainer.replace("enforce_eager=True", "enforce_eager=False")
    assert _check(_audit(files), "J6").status.value == "used"


# --- ROLL: a pipeline's loop calls a base method that saves only every save_steps -------------------------------------------

_ROLL_BASE = (
    "class BasePipeline:\n    def __init__(self, config):\n        self.pipeline_config = config\n\n"
    "    def do_checkpoint(self, global_step):\n"
    "        if global_step > 0 and (global_step % self.pipeline_config.save_steps == 0):\n"
    "            for cluster in self.checkpoint_clusters:\n                cluster.do_checkpoint(global_step=global_step)\n")
_ROLL_WORKER = (
    "class ActorWorker:\n    def do_checkpoint(self, global_step):\n"
    "        self.strategy.save_checkpoint(self.output_dir, global_step)\n")
_ROLL_PIPELINE = (
    "from roll.pipeline.base_pipeline import BasePipeline\n\n\nclass RLVRPipeline(BasePipeline):\n"
    "    def run(self):\n        for global_step in range(self.pipeline_config.max_steps):\n"
    "            metrics = self.actor_train.train_step(global_step)\n            self.do_checkpoint(global_step=global_step)\n")


def test_a_loops_call_of_a_base_method_that_paces_its_saves_is_no_save_every_step() -> None:
    files = {"roll/pipeline/base_pipeline.py": _ROLL_BASE, "roll/distributed/actor_worker.py": _ROLL_WORKER,
             "roll/pipeline/rlvr_pipeline.py": _ROLL_PIPELINE,
             "examples/rlvr.yaml": "pretrain: Qwen/Qwen2.5-7B\nsave_steps: 100\nmax_steps: 500\n"}
    i3 = _check(_audit(files), "I3")
    assert i3.status.value == "used", i3.detail
    assert "every step" not in i3.detail
    # control: the base method saves on every call
    files["roll/pipeline/base_pipeline.py"] = _ROLL_BASE.replace(
        "        if global_step > 0 and (global_step % self.pipeline_config.save_steps == 0):\n            for cluster",
        "        if True:\n            for cluster")
    i3 = _check(_audit(files), "I3")
    assert i3.status.value == "unused" and "every step" in i3.detail, i3.detail


# --- ROLL: the vision tower frozen by a module-prefix list ------------------------------------------------------------------

def test_a_freeze_prefix_list_that_names_the_vision_model_freezes_it() -> None:
    provider = ("from transformers import Qwen2_5_VLForConditionalGeneration\n\n\ndef freeze_model(model, model_args):\n"
                "    prefixes = model_args.freeze_module_prefix.split(',') if model_args.freeze_module_prefix else []\n"
                "    for name, param in model.named_parameters():\n        if any(name.startswith(p) for p in prefixes):\n"
                "            param.requires_grad_(False)\n\n\ndef load_model(model_args):\n"
                "    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(model_args.model_name_or_path)\n"
                "    freeze_model(model, model_args)\n    return model\n")
    recipe = "pretrain: Qwen/Qwen2.5-VL-7B-Instruct\nactor_train:\n  model_args:\n    freeze_module_prefix: {v}\n"
    files = {"roll/models/model_providers.py": provider, "examples/vl_rlvr.yaml": recipe.format(v="vision_model")}
    assert _check(_audit(files), "H1").status.value == "used"
    # control: the prefix names the language model's embeddings
    files["examples/vl_rlvr.yaml"] = recipe.format(v="model.embed_tokens")
    assert _check(_audit(files), "H1").status.value != "used"


# --- ROLL: use_sequence_packing is a packing switch ---------------------------------------------------------------------------

def test_use_sequence_packing_is_read_as_packing() -> None:
    files = {"roll/pipeline/sft_pipeline.py": _LLAVA_TRAIN,
             "examples/sft_config.yaml": "pretrain: Qwen/Qwen2.5-7B\nsequence_length: 4096\nuse_sequence_packing: true\n"}
    assert _check(_audit(files), "F7").status.value == "used"
    files["examples/sft_config.yaml"] = files["examples/sft_config.yaml"].replace("true", "false")
    assert _check(_audit(files), "F7").status.value == "unused"


# --- MobileVLM: the Alpaca template's facebook/opt-125m default beside launches that pass the model from the caller ----------

def test_the_alpaca_placeholder_default_is_no_model_when_the_launch_passes_one() -> None:
    train = ("from dataclasses import dataclass, field\nfrom typing import Optional\nimport transformers\n\n\n@dataclass\n"
             "class ModelArguments:\n    model_name_or_path: Optional[str] = field(default=\"facebook/opt-125m\")\n\n\n"
             "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
             "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
             "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
             "    transformers.Trainer(model=model, args=training_args).train()\n")
    files = {"mobilevlm/train/train.py": train,
             "scripts/inference.py": ("import argparse\nparser = argparse.ArgumentParser()\n"
                                      "parser.add_argument('--model-path', type=str, default='mtgv/MobileVLM-1.7B')\n"),
             "run.sh": ("#!/bin/bash\nLANGUAGE_MODEL=$3\ndeepspeed mobilevlm/train/train.py \\\n"
                        "    --model_name_or_path ${LANGUAGE_MODEL} \\\n    --bf16 True \\\n    --output_dir out\n")}
    project = _audit(files).project
    assert "facebook/opt-125m" not in project.model_names and "mtgv/MobileVLM-1.7B" not in project.model_names, project.model_names
    assert "opt" not in project.model_families
    # control: a launch that passes no model: the default is what runs
    files["run.sh"] = "#!/bin/bash\ndeepspeed mobilevlm/train/train.py --bf16 True --output_dir out\n"
    assert "facebook/opt-125m" in _audit(files).project.model_names
