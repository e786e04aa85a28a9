"""Round 42 (issue #9): claims of round 41's leftovers and of more public repositories, read claim by claim. Each test is
one false claim of those reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


# --- THUDM/ChatGLM-6B: the option branches of its transformers.Trainer copy (ptuning/trainer.py) ---------------------------

_METHODS = ("_inner_training_loop", "_maybe_log_save_evaluate", "_save_checkpoint", "_load_from_checkpoint",
            "_load_optimizer_and_scheduler", "_load_rng_state", "_rotate_checkpoints", "_sorted_checkpoints",
            "_get_train_sampler", "_get_eval_sampler", "_remove_unused_columns", "_set_signature_columns_if_needed",
            "create_optimizer_and_scheduler", "evaluation_loop", "prediction_step", "floating_point_ops", "store_flos")


def _chatglm(flags: str = "") -> dict[str, str]:
    trainer = (
        "import torch\nfrom transformers import TrainingArguments\nfrom transformers.trainer_utils import FSDPOption, speed_metrics\n"
        "from transformers.training_args import OptimizerNames\n\n\n"
        "class Trainer:\n    def __init__(self, model=None, args=None):\n        self.model = model\n        self.args = args\n"
        "        self.fsdp = None\n        if len(args.fsdp) > 0:\n            self.fsdp = args.fsdp\n\n"
        "    @staticmethod\n    def get_optimizer_cls_and_kwargs(args):\n        optimizer_kwargs = {'lr': args.learning_rate}\n"
        "        if args.optim == OptimizerNames.ADAFACTOR:\n            from transformers.optimization import Adafactor\n\n"
        "            optimizer_cls = Adafactor\n"
        "        elif args.optim == OptimizerNames.ADAMW_APEX_FUSED:\n            try:\n"
        "                from apex.optimizers import FusedAdam\n\n                optimizer_cls = FusedAdam\n"
        "            except ImportError:\n                raise ValueError('Trainer tried to instantiate apex FusedAdam but apex is not installed!')\n"
        "        else:\n            optimizer_cls = torch.optim.AdamW\n        return optimizer_cls, optimizer_kwargs\n\n"
        "    def _wrap_model(self, model, training=True):\n        if not training:\n            return model\n"
        "        if self.fsdp is not None:\n"
        "            from torch.distributed.fsdp.fully_sharded_data_parallel import CPUOffload\n"
        "            from torch.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel as FSDP\n\n"
        "            if FSDPOption.OFFLOAD in self.args.fsdp:\n                cpu_offload = CPUOffload(offload_params=True)\n"
        "            else:\n                cpu_offload = CPUOffload(offload_params=False)\n"
        "            self.model = model = FSDP(model, sharding_strategy=self.fsdp, cpu_offload=cpu_offload)\n"
        "        return model\n\n"
        + "".join(f"    def {m}(self, *args, **kwargs):\n        return speed_metrics('{m}', 0.0)\n\n" for m in _METHODS))
    main = ("from transformers import HfArgumentParser, Seq2SeqTrainingArguments\n\nfrom trainer import Trainer\n\n\n"
            "def main():\n    (training_args,) = HfArgumentParser((Seq2SeqTrainingArguments,)).parse_args_into_dataclasses()\n"
            "    trainer = Trainer(model=model, args=training_args)\n    trainer.train()\n\n\nif __name__ == '__main__':\n    main()\n")
    run = ("deepspeed --num_gpus=4 main.py \\\n    --deepspeed deepspeed.json \\\n    --do_train \\\n    --per_device_train_batch_size 4 \\\n"
           f"    --learning_rate 1e-4 \\\n    --fp16{flags}\n")
    ds = ('{\n  "train_micro_batch_size_per_gpu": "auto",\n  "fp16": {"enabled": "auto"},\n  "zero_optimization": {\n'
          '    "stage": 2,\n    "overlap_comm": false,\n    "contiguous_gradients": true\n  }\n}\n')
    return {"ptuning/trainer.py": trainer, "ptuning/main.py": main, "ptuning/ds_train_finetune.sh": run,
            "ptuning/deepspeed.json": ds}


def test_a_trainer_copys_apex_optimizer_option_is_not_the_runs_optimizer() -> None:
    d6 = _check(_audit(_chatglm()), "D6")
    assert d6.status != Status.USED and not any(e.path == "ptuning/trainer.py" for e in d6.evidence), d6.detail


def test_a_launch_choosing_the_fused_optimizer_is_fused() -> None:
    d6 = _check(_audit(_chatglm(" \\\n    --optim adamw_apex_fused")), "D6")
    assert d6.status == Status.USED, d6.detail


def test_a_trainer_copys_fsdp_branch_is_not_the_runs_overlap() -> None:
    e2 = _check(_audit(_chatglm()), "E2")
    assert e2.status != Status.USED, e2.detail
    assert any(e.path == "ptuning/deepspeed.json" for e in e2.evidence) and not any(e.path == "ptuning/trainer.py" for e in e2.evidence)


def test_a_trainer_copys_fsdp_branch_runs_when_the_launch_picks_fsdp() -> None:
    files = _chatglm(" \\\n    --fsdp 'full_shard auto_wrap'")
    files["ptuning/ds_train_finetune.sh"] = files["ptuning/ds_train_finetune.sh"].replace("--deepspeed deepspeed.json \\\n    ", "")
    e2 = _check(_audit(files), "E2")
    assert any(e.path == "ptuning/trainer.py" for e in e2.evidence), e2.detail


def test_a_trainer_copys_unpicked_fsdp_offload_option_is_not_an_offload_setting() -> None:
    c4 = _check(_audit(_chatglm()), "C4")
    assert not any(e.path == "ptuning/trainer.py" for e in c4.evidence) and "explicitly" not in c4.detail, c4.detail


# --- FlagAlpha/Llama2-Chinese: one script per method, the LoRA one wraps the model itself --------------------------------

def _llama2_chinese(full: bool = True) -> dict[str, str]:
    def launch(script: str, extra: str = "", save: int = 20) -> str:
        return ("output_model=save_folder\nmkdir -p ${output_model}\n"
                f"deepspeed --include localhost:1,0 --num_gpus 2 {script} \\\n    --model_name_or_path meta-llama/Llama-2-7b-chat-hf \\\n"
                "    --per_device_train_batch_size 1 \\\n    --do_train \\\n    --num_train_epochs 10 \\\n"
                f"{extra}    --logging_steps 10 \\\n    --save_strategy steps \\\n    --save_steps {save} \\\n    --bf16 \\\n"
                "    --deepspeed ds_config_zero2.json \\\n    --output_dir ${output_model}\n")
    common = ("from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments\n\n\n"
              "def main():\n    (training_args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()\n"
              "    model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-chat-hf')\n")
    tail = "    trainer = Trainer(model=model, args=training_args)\n    trainer.train()\n\n\nif __name__ == '__main__':\n    main()\n"
    lora = ("from peft import LoraConfig, get_peft_model\n" + common
            + "    config = LoraConfig(r=8, lora_alpha=32, target_modules=['q_proj', 'v_proj'], task_type='CAUSAL_LM')\n"
            + "    if training_args.do_train:\n        model = get_peft_model(model, config)\n" + tail)
    files = {"train/sft/finetune_clm_lora.py": lora, "train/sft/finetune_lora.sh": launch("finetune_clm_lora.py", "    --lora_r 8 \\\n", save=10),
             "train/sft/ds_config_zero2.json": '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": "auto"}}\n'}
    if full:
        files |= {"train/sft/finetune_clm.py": common + tail, "train/sft/finetune.sh": launch("finetune_clm.py"),
                  "train/pretrain/pretrain_clm.py": common + tail, "train/pretrain/pretrain.sh": launch("pretrain_clm.py", save=500)}
    return files


def test_a_full_finetune_recipe_beside_a_lora_one_is_judged_as_full() -> None:
    i3 = _check(_audit(_llama2_chinese()), "I3")
    assert i3.status == Status.UNUSED, i3.detail
    assert [e.path for e in i3.evidence] == ["train/sft/finetune.sh"]
    assert "judged per recipe" in i3.detail and "majority" not in i3.detail, i3.detail


def test_the_lora_recipe_alone_keeps_the_adapter_leniency() -> None:
    i3 = _check(_audit(_llama2_chinese(full=False)), "I3")
    assert i3.status == Status.USED, i3.detail


# --- Lightning-AI/litgpt: a library of recipes for many sizes, one of which spells out its dimensions ------------------------

def _litgpt(named: int = 4) -> dict[str, str]:
    pretrain = ("import torch\nimport lightning as L\n\n\ndef setup(model_name=None, model_config=None):\n"
                "    fabric = L.Fabric(devices='auto', precision='bf16-mixed')\n    fabric.launch(main)\n\n\n"
                "def main(fabric):\n    model = torch.compile(model)\n    for batch in loader:\n        loss = model(batch)\n"
                "        fabric.backward(loss)\n        optimizer.step()\n")
    finetune = ("from pathlib import Path\n\nimport lightning as L\n\nfrom litgpt.utils import auto_download_checkpoint\n\n\n"
                "def setup(checkpoint_dir: Path, precision=None, devices=1):\n"
                "    checkpoint_dir = auto_download_checkpoint(model_name=checkpoint_dir)\n"
                "    fabric = L.Fabric(devices=devices, precision=precision)\n    fabric.launch(main, checkpoint_dir)\n\n\n"
                "def main(fabric, checkpoint_dir):\n    for batch in loader:\n        loss = model(batch)\n"
                "        fabric.backward(loss)\n        optimizer.step()\n")
    files = {"litgpt/pretrain.py": pretrain, "litgpt/finetune/lora.py": finetune,
             "config_hub/pretrain/tinystories.yaml": (
                 "model_name: stories15M\nmodel_config:\n  name: stories15M\n  hf_config: {}\n  block_size: 256\n"
                 "  vocab_size: 32000\n  n_layer: 6\n  n_head: 6\n  n_embd: 288\n  intermediate_size: 768\n"
                 "train:\n  global_batch_size: 512\n  micro_batch_size: 128\n")}
    models = ["tiiuae/falcon-7b", "google/gemma-2-9b", "meta-llama/Meta-Llama-3-8B", "meta-llama/Llama-2-7b-hf",
              "mistralai/Mistral-7B-v0.1"][:named]
    for m in models:
        files[f"config_hub/finetune/{m.split('/')[1].lower()}/lora.yaml"] = (
            f"checkpoint_dir: checkpoints/{m}\nout_dir: out/finetune/lora\nprecision: bf16-true\nlora_r: 8\n"
            "train:\n  save_interval: 200\n  global_batch_size: 16\n  micro_batch_size: 1\n")
    return files


def test_a_recipe_library_reports_the_range_of_its_sizes() -> None:
    p = _audit(_litgpt()).project
    assert p.params_billions is None and p.notes.get("params_range") == "24M-9B", p.notes
    assert p.notes["params_range_sources"][0] == "config_hub/pretrain/tinystories.yaml:9"


def test_one_spelled_out_recipe_beside_two_named_ones_keeps_its_size() -> None:
    p = _audit(_litgpt(named=2)).project
    assert p.estimated_params == "24M", p.notes


# --- tatsu-lab/alpaca_eval: an evaluation harness that lists peft and vllm for its local decoders ---------------------------

def _alpaca_eval(train: bool = False) -> dict[str, str]:
    files = {
        "setup.py": ("from setuptools import find_packages, setup\n\nsetup(\n    name='alpaca_eval',\n    packages=find_packages('src'),\n"
                     "    install_requires=['python-dotenv', 'datasets', 'openai', 'pandas', 'tiktoken>=0.3.2', 'fire', 'scipy'],\n"
                     "    extras_require={'all': ['accelerate', 'transformers', 'bitsandbytes', 'xformers', 'peft', 'optimum', 'vllm']},\n"
                     "    entry_points={'console_scripts': ['alpaca_eval=alpaca_eval.main:main']},\n)\n"),
        "src/alpaca_eval/main.py": ("import fire\n\nfrom . import annotators, decoders, utils\n\n\n"
                                    "def evaluate(model_outputs=None, annotators_config='weighted_alpaca_eval_gpt4_turbo'):\n"
                                    "    annotator = annotators.PairwiseAnnotator(annotators_config=annotators_config)\n"
                                    "    return annotator.annotate_head2head(outputs_1=utils.load(model_outputs))\n\n\n"
                                    "def main():\n    fire.Fire(evaluate)\n"),
        "src/alpaca_eval/decoders/vllm_local.py": ("from vllm import LLM, SamplingParams\n\n\n"
                                                   "def vllm_local_completions(prompts, model_name, max_new_tokens=1024):\n"
                                                   "    llm = LLM(model=model_name, tensor_parallel_size=1)\n"
                                                   "    return llm.generate(prompts, SamplingParams(max_tokens=max_new_tokens))\n"),
        "src/alpaca_eval/decoders/huggingface_local.py": ("from peft import PeftModel\nfrom transformers import AutoModelForCausalLM\n\n\n"
                                                          "def huggingface_local_completions(prompts, model_name, adapters_name=None):\n"
                                                          "    model = AutoModelForCausalLM.from_pretrained(model_name)\n"
                                                          "    if adapters_name:\n        model = PeftModel.from_pretrained(model, adapters_name)\n"
                                                          "    return [model.generate(p) for p in prompts]\n"),
    }
    if train:
        files["train.py"] = ("from peft import LoraConfig, get_peft_model\nfrom transformers import AutoModelForCausalLM, Trainer\n\n"
                             "model = get_peft_model(AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf'), LoraConfig(r=8))\n"
                             "Trainer(model=model, args=args, train_dataset=ds).train()\n")
    return files


def test_an_evaluation_harness_declaring_peft_and_vllm_has_no_training_code() -> None:
    a = _audit(_alpaca_eval())
    assert not a.training_code_found, (a.project.does_training, a.project.does_inference, a.project.frameworks)


def test_a_training_script_beside_it_is_audited() -> None:
    assert _audit(_alpaca_eval(train=True)).project.does_training


# --- mlfoundations/open_lm: its own argparse flags, an optional MoE layer, and a benchmark launcher ------------------------

def _open_lm(ffn: str = "swiglu", bench: bool = True) -> dict[str, str]:
    params = ("import argparse\n\n\ndef parse_args(args):\n    parser = argparse.ArgumentParser()\n"
              "    parser.add_argument('--ffn-type', choices=['swiglu', 'gelu', 'moe'], default='swiglu')\n"
              "    parser.add_argument('--moe-freq', type=int, default=0)\n"
              "    parser.add_argument('--moe-num-experts', type=int, default=None)\n"
              "    parser.add_argument('--fsdp', default=False, action='store_true')\n"
              "    parser.add_argument('--fsdp-cpu-offload', default=False, action='store_true')\n"
              "    parser.add_argument('--fsdp-backward-prefetch', default=False, action='store_true')\n"
              "    parser.add_argument('--log-every-n-steps', type=int, default=100)\n"
              "    parser.add_argument('--report-to', default='', type=str)\n"
              "    parser.add_argument('--wandb', default=False, action='store_true')\n"
              "    parser.add_argument('--workers', type=int, default=1)\n    return parser.parse_args(args)\n")
    model = ("from dataclasses import dataclass\n\nimport torch.nn as nn\nfrom megablocks.layers.moe import MoE\n"
             "from megablocks.layers.arguments import Arguments as MoEArgs\n\n\n@dataclass\nclass Params:\n    dim: int = 512\n"
             "    n_layers: int = 8\n    vocab_size: int = 50432\n    moe_num_experts: int = 8\n\n\n"
             "class Block(nn.Module):\n    def __init__(self, layer_id, args):\n        super().__init__()\n"
             "        if args.ffn_type == 'swiglu':\n            self.feed_forward = nn.Linear(args.dim, args.dim)\n"
             "        elif args.ffn_type == 'moe':\n            moe_args = MoEArgs(hidden_size=args.dim, moe_num_experts=args.moe_num_experts)\n"
             "            self.feed_forward = MoE(moe_args)\n")
    main = ("import torch\nfrom torch.distributed.fsdp import BackwardPrefetch, CPUOffload, FullyShardedDataParallel as FSDP\n\n"
            "from open_lm.params import parse_args\n\n\ndef main(args):\n    args = parse_args(args)\n    fsdp_kwargs = {}\n"
            "    if args.fsdp_backward_prefetch:\n        fsdp_kwargs['backward_prefetch'] = BackwardPrefetch.BACKWARD_PRE\n"
            "    if args.fsdp:\n        model = FSDP(model, cpu_offload=CPUOffload(offload_params=args.fsdp_cpu_offload), **fsdp_kwargs)\n"
            "    for i, batch in enumerate(loader):\n        loss = model(batch)\n        loss.backward()\n        optimizer.step()\n"
            "        if args.moe_freq > 0:\n            losses_m.update(loss.item() - lb_loss.item())\n"
            "        if i % args.log_every_n_steps == 0:\n            if args.wandb:\n"
            "                wandb.log({'loss': 1.0, 'step': i})\n")
    files = {"open_lm/params.py": params, "open_lm/model.py": model, "open_lm/main.py": main,
             "scripts/train_example.sh": ("torchrun --nproc-per-node 8 -m open_lm.main \\\n    --workers 4 \\\n    --fsdp \\\n"
                                          f"    --ffn-type {ffn} \\\n    --log-every-n-steps 20 \\\n    --report-to wandb\n"),
             "sagemaker_train/cfg_sample.yaml": "log-every-n-steps: 20\nfsdp-backward-prefetch: True\nreport-to: \"wandb\"\n"}
    if bench:
        files["open_lm/run_bench.sh"] = ("torchrun --nproc-per-node 1 -m benchmark.main \\\n    --workers 6 \\\n"
                                         "    --log-every-n-steps 1 \\\n    --fsdp \\\n    --profile\n")
    return files


def test_an_moe_layer_behind_an_unpicked_ffn_type_is_not_a_mixture_of_experts() -> None:
    assert not _audit(_open_lm()).project.moe


def test_a_launch_picking_the_moe_ffn_makes_it_one() -> None:
    assert _audit(_open_lm(ffn="moe")).project.moe


def test_offload_read_from_a_default_off_flag_is_off_by_default() -> None:
    c4 = _check(_audit(_open_lm()), "C4")
    assert "off by default" in c4.detail and "--fsdp-cpu-offload" in c4.detail, c4.detail


def test_a_boolean_backward_prefetch_switch_on_is_prefetch() -> None:
    e2 = _check(_audit(_open_lm()), "E2")
    assert e2.status == Status.USED and "without" not in e2.detail, e2.detail


def test_a_sync_under_an_off_comparison_is_not_a_step_sync() -> None:
    reasons = " ".join(_audit(_open_lm()).project.bottleneck_reasons)
    assert "synchronisation point" not in reasons, reasons
    # control: a launch that sets the MoE frequency takes the branch
    files = _open_lm()
    files["scripts/train_example.sh"] = files["scripts/train_example.sh"].replace("--fsdp \\\n", "--fsdp \\\n    --moe-freq 2 \\\n")
    assert "synchronisation point" in " ".join(_audit(files).project.bottleneck_reasons)


def test_a_benchmark_launcher_is_a_benchmark() -> None:
    a = _audit(_open_lm())
    assert a.roles.by_path["open_lm/run_bench.sh"] == "benchmark"
    i4 = _check(a, "I4")
    assert i4.status == Status.USED and "open_lm/run_bench.sh" not in [e.path for e in i4.evidence], i4.detail


def test_a_projects_own_report_to_option_is_not_the_hf_trainers() -> None:
    i5 = _check(_audit(_open_lm()), "I5")
    assert "500" not in i5.detail and "20 steps" in i5.detail, i5.detail


# --- OptimalScale/LMFlow: a chat demo's one GPU beside training launches that leave the count to the launcher ------------

def _lmflow() -> dict[str, str]:
    args = ("from dataclasses import dataclass, field\nfrom typing import Optional\n\n\n@dataclass\nclass DPOAlignerArguments:\n"
            "    output_dir: Optional[str] = field(default='./results', metadata={'help': 'the output directory'})\n"
            "    log_freq: Optional[int] = field(\n        default=1,\n        metadata={'help': 'the logging frequency'},\n    )\n")
    finetune = ("import transformers\nfrom transformers import HfArgumentParser, Trainer, TrainingArguments\n\n"
                "from lmflow.args import DPOAlignerArguments\n\n\ndef main():\n"
                "    (training_args, dpo_args) = HfArgumentParser((TrainingArguments, DPOAlignerArguments)).parse_args_into_dataclasses()\n"
                "    model = transformers.AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.2-3B-Instruct')\n"
                "    trainer = Trainer(model=model, args=training_args)\n    trainer.train()\n")
    chatbot = ("from transformers import AutoModelForCausalLM\n\n\ndef main():\n"
               "    model = AutoModelForCausalLM.from_pretrained('lmsys/vicuna-7b-v1.3')\n"
               "    while True:\n        print(model.generate(input()))\n")
    return {
        "src/lmflow/args.py": args, "examples/finetune.py": finetune, "examples/vis_chatbot.py": chatbot,
        "configs/accelerate_fsdp_config.yaml": ("compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nmixed_precision: bf16\n"
                                                "num_machines: 1\nnum_processes: 8\n"),
        "scripts/run_finetune.sh": ("accelerate launch --config_file configs/accelerate_fsdp_config.yaml \\\n    examples/finetune.py \\\n"
                                    "    --model_name_or_path meta-llama/Llama-3.2-3B-Instruct \\\n    --bf16 \\\n    --logging_steps 20 \\\n"
                                    "    --report_to wandb\n"),
        "scripts/multimodal/run_vis_chatbot_minigpt4.sh": ('deepspeed_args="--master_port=12000 --num_gpus=1"\n\n'
                                                           "deepspeed ${deepspeed_args} examples/vis_chatbot.py --low_resource True\n"),
    }


def test_a_chat_demo_alone_does_not_make_the_training_single_gpu() -> None:
    assert _audit(_lmflow()).project.num_gpus != 1


# --- InternLM/InternLM: a model release whose fine-tuning guide points at other projects ------------------------------------

def _internlm(train: bool = False) -> dict[str, str]:
    files = {
        "finetune/README.md": ("# Fine-tuning\n\nWe recommend [XTuner](https://github.com/InternLM/xtuner) to fine-tune InternLM.\n\n"
                               "```bash\nxtuner train internlm2_chat_7b_qlora_oasst1_e3 --deepspeed deepspeed_zero2\n```\n"),
        "chat/web_demo.py": ("import torch\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\n\n"
                             "def load_model():\n    model = AutoModelForCausalLM.from_pretrained('internlm/internlm2-chat-7b',\n"
                             "        trust_remote_code=True).to(torch.bfloat16).cuda()\n"
                             "    tokenizer = AutoTokenizer.from_pretrained('internlm/internlm2-chat-7b', trust_remote_code=True)\n"
                             "    return model, tokenizer\n\n\ndef main():\n    model, tokenizer = load_model()\n"
                             "    for response in model.stream_chat(tokenizer, 'hello'):\n        print(response)\n"),
        "requirements.txt": "transformers>=4.38\nsentencepiece\nstreamlit\n",
    }
    if train:
        files["finetune/finetune.py"] = ("from peft import LoraConfig, get_peft_model\nfrom transformers import AutoModelForCausalLM\n\n"
                                         "model = get_peft_model(AutoModelForCausalLM.from_pretrained('internlm/internlm2-chat-7b'), LoraConfig(r=8))\n")
    return files


def test_a_fine_tuning_guide_is_not_fine_tuning_code() -> None:
    assert not _audit(_internlm()).project.does_training


def test_a_fine_tuning_script_beside_it_is() -> None:
    assert _audit(_internlm(train=True)).project.does_training


# --- OpenLMLab/MOSS: empty_cache once after the first batch and before each validation pass ------------------------------

def _moss(every_step: bool = False) -> dict[str, str]:
    loop = ("import torch\nfrom accelerate import Accelerator\nfrom torch.utils.data import DataLoader\n\n\ndef train(args):\n"
            "    accelerator = Accelerator(mixed_precision='fp16')\n"
            "    train_dataloader = DataLoader(train_dataset, batch_size=args.train_bsz_per_gpu, shuffle=True)\n"
            "    global_step = 0\n    for epoch in range(args.n_epochs):\n"
            "        for batch_cnt, (input_ids, attention_mask, labels) in enumerate(train_dataloader):\n"
            "            if batch_cnt == 1 and epoch == 0:\n                torch.cuda.empty_cache()\n"
            "            loss = model(input_ids=input_ids, labels=labels).loss\n            accelerator.backward(loss)\n"
            "            optimizer.step()\n            global_step += 1\n"
            "            if global_step % args.eval_step == 0 or global_step == 1:\n                torch.cuda.empty_cache()\n"
            "                model.eval()\n")
    if every_step:
        loop += "            torch.cuda.empty_cache()\n"
    return {"finetune_moss.py": loop}


def test_empty_cache_once_and_before_validation_is_not_every_step() -> None:
    c6 = _check(_audit(_moss()), "C6")
    assert not c6.findings and "every step" not in c6.detail, c6.detail


def test_empty_cache_in_the_step_body_is() -> None:
    c6 = _check(_audit(_moss(every_step=True)), "C6")
    assert c6.findings and "every step" in c6.detail, c6.detail


# --- salesforce/LAVIS: an epoch runner whose recipes set save_freq -1, and one LoRA recipe among many -----------------------

def _lavis(recipes: int = 4) -> dict[str, str]:
    runner = ("import os\n\nimport torch\n\n\nclass RunnerBase:\n    @property\n    def save_freq(self):\n"
              "        return int(self.config.run_cfg.get('save_freq', 5))\n\n    def train(self):\n"
              "        for cur_epoch in range(self.start_epoch, self.max_epoch):\n"
              "            train_stats = self.train_epoch(cur_epoch)\n            self._save_checkpoint(cur_epoch, is_best=False)\n"
              "            if self.save_freq > 0 and cur_epoch % self.save_freq == 0:\n"
              "                self._save_checkpoint(cur_epoch, is_best=False)\n\n"
              "    def train_epoch(self, epoch):\n"
              "        return self.task.train_epoch(epoch=epoch, model=self.model, data_loader=self.train_loader)\n\n"
              "    def _save_checkpoint(self, cur_epoch, is_best=False):\n"
              "        save_obj = {'model': self.model.state_dict(), 'epoch': cur_epoch}\n"
              "        torch.save(save_obj, os.path.join(self.output_dir, f'checkpoint_{cur_epoch}.pth'))\n")
    task = ("class BaseTask:\n    def train_epoch(self, epoch, model, data_loader, optimizer):\n"
            "        for i in range(len(data_loader)):\n            loss = model(next(data_loader))['loss']\n"
            "            loss.backward()\n            optimizer.step()\n            optimizer.zero_grad()\n")
    model = ("import torch.nn as nn\nfrom transformers import OPTForCausalLM\n\n\nclass Blip2OPT(nn.Module):\n"
             "    def __init__(self, opt_model='facebook/opt-2.7b'):\n        super().__init__()\n"
             "        self.opt_model = OPTForCausalLM.from_pretrained(opt_model)\n"
             "        for name, param in self.opt_model.named_parameters():\n            param.requires_grad = False\n")
    train = ("from lavis.runners.runner_base import RunnerBase\nfrom lavis.models.blip2_opt import Blip2OPT\n\n\n"
             "def main():\n    runner = RunnerBase(model=Blip2OPT())\n    runner.train()\n\n\nif __name__ == '__main__':\n    main()\n")
    files = {"lavis/runners/runner_base.py": runner, "lavis/tasks/base_task.py": task, "lavis/models/blip2_opt.py": model,
             "train.py": train}
    for i in range(recipes):
        files[f"lavis/projects/blip2/train/caption_coco_{i}.yaml"] = (
            "model:\n  arch: blip2_opt\n  freeze_vit: True\ndatasets:\n  coco_caption:\n    vis_processor: blip_image_train\nrun:\n  task: captioning\n  lr_sched: linear_warmup_cosine_lr\n"
            "  batch_size_train: 16\n  num_workers: 4\n  save_freq: -1 # save epoch every xxx epochs -1 only save last and best.\n")
    files["lavis/projects/xinstruct_blip/train/vicuna7b/lora_training.yaml"] = (
        "model:\n  arch: blip2_vicuna_xinstruct\n  lora: True\ndatasets:\n  llava150k_instruct:\n    vis_processor: clip_image_train\nrun:\n  task: captioning\n  lr_sched: linear_warmup_cosine_lr\n"
        "  batch_size_train: 16\n  num_workers: 4\n  save_freq: -1\n")
    return files


def test_save_freq_off_leaves_the_runners_save_after_each_epoch() -> None:
    i3 = _check(_audit(_lavis()), "I3")
    assert "once per epoch" in i3.detail and "no periodic checkpoint" not in i3.detail, i3.detail


def test_one_lora_recipe_beside_a_frozen_llm_is_not_lora_training() -> None:
    g4 = _check(_audit(_lavis()), "G4")
    assert g4.status == Status.UNUSED and g4.values.get("finetuning") == "frozen-llm" and "1 of 5" in g4.detail, g4.detail


# --- evidence: a keyword on a later line of a multi-line call is shown as that line holds it ---------------------------------

def test_a_keyword_below_a_calls_first_line_is_its_own_snippet() -> None:
    files = {"train.py": ("import torch\nfrom accelerate import Accelerator\n\naccelerator = Accelerator(\n"
                          "    gradient_accumulation_steps=4,\n    mixed_precision=\"bf16\",\n)\n"
                          "for batch in loader:\n    loss = model(batch)\n    accelerator.backward(loss)\n    optimizer.step()\n")}
    c1 = _check(_audit(files), "C1")
    ev = next(e for e in c1.evidence if e.line == 6)
    assert ev.snippet == 'mixed_precision="bf16"', ev
    # one line: the call's own text
    one = {"train.py": files["train.py"].replace("Accelerator(\n    gradient_accumulation_steps=4,\n    mixed_precision=\"bf16\",\n)",
                                                 "Accelerator(mixed_precision=\"bf16\")")}
    assert any(e.snippet == 'accelerator = Accelerator(mixed_precision="bf16")' for e in _check(_audit(one), "C1").evidence)


# --- allenai/open-instruct: a mini recipe for smoke runs beside the real ones ------------------------------------------------

def test_a_mini_smoke_recipe_does_not_size_the_project() -> None:
    files = _litgpt()
    files["config_hub/finetune/mini.yaml"] = ("checkpoint_dir: checkpoints/EleutherAI/pythia-14m\nout_dir: out/mini\nprecision: bf16-true\n"
                                              "train:\n  save_interval: 200\n  global_batch_size: 16\n  micro_batch_size: 1\n")
    p = _audit(files).project
    assert p.notes.get("params_range") == "24M-9B", p.notes
