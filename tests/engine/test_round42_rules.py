"""Round 42 (issue #9): claims of round 41's leftovers and of more public repositories, read claim by claim. Each test is
one false claim of those reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.model import Status

from .claims import audit as _audit
from .claims import check as _check
from .test_round41_rules import TRAINER_COPY_METHODS
from .test_round41_rules import _chatglm as chatglm_round41

# --- THUDM/ChatGLM-6B: the option branches of its transformers.Trainer copy (ptuning/trainer.py) ---------------------------

_METHODS = TRAINER_COPY_METHODS


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
    ds = ('{\n  "train_micro_batch_size_per_gpu": "auto",\n  "fp16": {"enabled": "auto"},\n  "zero_optimization": {\n'
          '    "stage": 2,\n    "overlap_comm": false,\n    "contiguous_gradients": true\n  }\n}\n')
    # (round 41's ChatGLM-6B entry point and DeepSpeed launch, with this copy's option branches)
    return {**chatglm_round41(flags), "ptuning/trainer.py": trainer, "ptuning/deepspeed.json": ds}


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


# --- THUDM/CogVLM2: a vision-language model fine-tuned with LoRA on the language model's visual expert ------------------------

def _cogvlm2(target: str = '["vision_expert_query_key_value"]') -> dict[str, str]:
    lora = ("import argparse\n\nimport torch\nfrom peft import LoraConfig, TaskType, get_peft_model\n"
            "from transformers import AutoModelForCausalLM, get_linear_schedule_with_warmup\n\n\ndef main():\n"
            "    parser = argparse.ArgumentParser()\n"
            f"    parser.add_argument('--lora_target', type=str, default={target}, nargs='+')\n"
            "    parser.add_argument('--lora_rank', type=int, default=8)\n    args = parser.parse_args()\n"
            "    model = AutoModelForCausalLM.from_pretrained('THUDM/cogvlm2-llama3-chat-19B', torch_dtype=torch.bfloat16,\n"
            "                                                 trust_remote_code=True)\n"
            "    peft_config = LoraConfig(task_type=TaskType.CAUSAL_LM, r=args.lora_rank, target_modules=args.lora_target)\n"
            "    model = get_peft_model(model, peft_config)\n"
            "    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)\n"
            "    for batch in loader:\n        loss = model(input_ids=batch['input_ids'], images=batch['images']).loss\n"
            "        loss.backward()\n        optimizer.step()\n\n\nif __name__ == '__main__':\n    main()\n")
    return {"finetune_demo/peft_lora.py": lora}


def test_cogvlm_is_a_multimodal_model() -> None:
    assert _audit(_cogvlm2()).project.model_type == "MLLM"


def test_lora_on_the_language_model_leaves_the_vision_encoder_frozen() -> None:
    h1 = _check(_audit(_cogvlm2()), "H1")
    assert h1.status == Status.USED and "vision_expert_query_key_value" in h1.detail, h1.detail


def test_lora_targets_in_the_vision_tower_do_not_count_as_frozen() -> None:
    h1 = _check(_audit(_cogvlm2('["vision_expert_query_key_value", "vision.transformer.layers.0.attention.query_key_value", '
                                '"vision_model.encoder"]')), "H1")
    assert h1.status != Status.USED, h1.detail


# --- RLHFlow/Online-RLHF: save_strategy "epoch" beside an unused save_steps ----------------------------------------------------

def test_save_steps_under_an_epoch_strategy_is_not_a_number_of_epochs() -> None:
    sft = ("from transformers import Trainer, TrainingArguments\n\n"
           "training_args = TrainingArguments(output_dir='out', save_strategy='epoch', save_steps=1000000000, logging_steps=10)\n"
           "trainer = Trainer(model=model, args=training_args, train_dataset=ds)\ntrainer.train()\n")
    i3 = _check(_audit({"sft/sft.py": sft}), "I3")
    assert "1000000000" not in i3.detail and i3.status == Status.USED, i3.detail


# --- OpenMOSS/AnyGPT: one sample's token file loaded in __getitem__ is not a packed stream --------------------------------------

def test_a_samples_npy_file_loaded_in_getitem_is_not_packing() -> None:
    ds = ("import numpy as np\nimport torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\n"
          "class SoundStormDataset(Dataset):\n    def __init__(self, file_list):\n        self.file_list = file_list\n\n"
          "    def __len__(self):\n        return len(self.file_list)\n\n    def __getitem__(self, idx):\n"
          "        file = self.file_list[idx]\n        tokens = torch.from_numpy(np.load(file))\n        return tokens\n\n\n"
          "loader = DataLoader(SoundStormDataset(files), batch_size=8, num_workers=4)\n"
          "for tokens in loader:\n    loss = model(tokens)\n    loss.backward()\n    optimizer.step()\n")
    f7 = _check(_audit({"soundstorm/train.py": ds}), "F7")
    assert f7.status != Status.USED, f7.detail
    # control: a shard of ids loaded whole and sliced into windows (build-nanogpt ``load_tokens``) is packed
    shard = ("import numpy as np\nimport torch\n\n\ndef load_tokens(filename):\n    npt = np.load(filename)\n"
             "    return torch.tensor(npt.astype(np.int32), dtype=torch.long)\n\n\n"
             "tokens = load_tokens('edu_fineweb_train_000001.npy')\nfor step in range(max_steps):\n"
             "    x = tokens[pos:pos + B * T].view(B, T)\n    loss = model(x)\n    loss.backward()\n    optimizer.step()\n")
    assert _check(_audit({"train_gpt2.py": shard}), "F7").status == Status.USED


# --- nlpxucan/WizardLM: copies of the Stanford Alpaca template, whose placeholder default the READMEs replace ------------------

def _wizardlm(documented: bool = True) -> dict[str, str]:
    template = ("from dataclasses import dataclass, field\nfrom typing import Optional\n\nimport transformers\n\n\n@dataclass\n"
                "class ModelArguments:\n    model_name_or_path: Optional[str] = field(default=\"facebook/opt-125m\")\n\n\n"
                "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
                "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
                "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
                "    trainer = transformers.Trainer(model=model, args=training_args)\n    trainer.train()\n")
    files = {"WizardLM/src/train_freeform.py": template, "training/src/train.py": template}
    if documented:
        files["WizardLM/README.md"] = ("# WizardLM\n\n## Fine-tuning\n\n```bash\ndeepspeed train_freeform.py \\\n"
                                       "    --model_name_or_path /path/to/llama-7B/hf \\\n    --data_path /path/to/alpaca_evol_instruct_70k.json \\\n"
                                       "    --output_dir /path/to/wizardlm-7b \\\n    --num_train_epochs 3 \\\n    --model_max_length 2048 \\\n"
                                       "    --per_device_train_batch_size 8 \\\n    --deepspeed configs/deepspeed_config.json \\\n    --fp16 True\n```\n")
    return files


def test_a_template_placeholder_a_readme_replaces_names_no_model() -> None:
    p = _audit(_wizardlm()).project
    assert p.estimated_params != "125M" and "opt" not in p.model_families and "facebook/opt-125m" not in p.model_names, p


def test_the_same_default_without_a_documented_command_still_names_it() -> None:
    assert _audit(_wizardlm(documented=False)).project.estimated_params == "125M"


# --- ymcui/Chinese-LLaMA-Alpaca: the detail cites the training script's resize, not the LoRA merge script's -------------------

def test_the_resize_cited_is_the_training_scripts() -> None:
    merge = ("import peft\nfrom transformers import LlamaForCausalLM, LlamaTokenizer\n\n\ndef merge(base, lora):\n"
             "    tokenizer = LlamaTokenizer.from_pretrained(lora)\n    base_model = LlamaForCausalLM.from_pretrained(base)\n"
             "    base_model.resize_token_embeddings(len(tokenizer))\n    return base_model\n")
    train = ("from transformers import LlamaForCausalLM, LlamaTokenizer, Trainer, TrainingArguments\n\n\ndef main():\n"
             "    tokenizer = LlamaTokenizer.from_pretrained('ziqingyang/chinese-llama-lora-7b')\n"
             "    model = LlamaForCausalLM.from_pretrained('decapoda-research/llama-7b-hf')\n"
             "    tokenizer.add_special_tokens({'pad_token': '[PAD]'})\n    model.resize_token_embeddings(len(tokenizer))\n"
             "    trainer = Trainer(model=model, args=TrainingArguments(output_dir='out'))\n    trainer.train()\n")
    run = "torchrun --nnodes 1 --nproc_per_node 1 run_clm_pt_with_peft.py --fp16 --do_train\n"
    files = {"scripts/merge_llama_with_chinese_lora.py": merge, "scripts/training/run_clm_pt_with_peft.py": train,
             "scripts/training/run_pt.sh": run}
    d7 = _check(_audit(files), "D7")
    assert "scripts/training/run_clm_pt_with_peft.py:" in d7.detail, d7.detail


# --- THUDM/AgentTuning: held-out evaluation suites and an old copy of a benchmark --------------------------------------------

def test_held_out_suites_and_old_copies_are_not_the_training_path() -> None:
    train = ("from transformers import Trainer, TrainingArguments\n\n"
             "trainer = Trainer(model=model, args=TrainingArguments(output_dir='out', logging_steps=1))\ntrainer.train()\n")
    files = {"eval_heldout/science-world/fast_agent/ds_train.py": train,
             "AgentBench.old/src/tasks/webshop/baseline_models/train_search_il.py": train,
             "models_old/train.py": train, "threshold/train.py": train}
    roles = _audit(files).roles.by_path
    assert roles["eval_heldout/science-world/fast_agent/ds_train.py"] == "eval"
    assert roles["AgentBench.old/src/tasks/webshop/baseline_models/train_search_il.py"] == "archive"
    assert roles["models_old/train.py"] == "archive"
    assert roles["threshold/train.py"] == "training"


# --- Dao-AILab/flash-attention training/: Hydra recipes, a computed accumulation and a logger-paced callback ----------------

def _flash_attn_training(interp: bool = True) -> dict[str, str]:
    acc = ("${div_up:${train.global_batch_size}, ${eval:${trainer.devices} * ${datamodule.batch_size} * ${trainer.num_nodes}}}"
           if interp else "1")
    base = ("# @package _global_\ndefaults:\n  - override /trainer: default\n  - override /optimizer: adamw-apex\n"
            "  - override /scheduler: cosine-warmup-timm\n  - override /logger: wandb\n\ntrainer:\n  devices: 8\n  precision: bf16\n"
            f"  accumulate_grad_batches: {acc}\n  max_steps: 800000\n\ntrain:\n  global_batch_size: 512\n\n"
            "datamodule:\n  batch_size: 8\n  num_workers: 32\n")
    callback = ("import pytorch_lightning as pl\n\n\nclass SpeedMonitor(pl.Callback):\n"
                "    def on_train_batch_end(self, trainer, pl_module, *args):\n"
                "        if not trainer._logger_connector.should_update_logs:\n            return\n        logs = {'time': 1.0}\n"
                "        if trainer.logger is not None:\n            trainer.logger.log_metrics(logs, step=trainer.global_step)\n")
    train = ("import hydra\nimport pytorch_lightning as pl\n\n\n@hydra.main(config_path='configs/', config_name='config.yaml')\n"
             "def main(config):\n    trainer = pl.Trainer(**config.trainer, callbacks=[SpeedMonitor()])\n"
             "    trainer.fit(model=model, datamodule=datamodule)\n")
    return {"training/configs/experiment/pile/base.yaml": base,
            "training/configs/trainer/all_params.yaml": "accelerator: gpu\naccumulate_grad_batches: 1\nlog_every_n_steps: 50\n",
            "training/configs/scheduler/cosine-warmup-timm.yaml": ("# @package train.scheduler\n"
                                                                   "_target_: src.optim.timm_lr_scheduler.TimmCosineLRScheduler\n"),
            "training/src/callbacks/speed_monitor.py": callback, "training/run.py": train}


def test_an_accumulation_computed_from_the_global_batch_is_accumulation() -> None:
    c5 = _check(_audit(_flash_attn_training()), "C5")
    assert c5.status == Status.USED and "global batch" in c5.detail, c5.detail
    assert _check(_audit(_flash_attn_training(interp=False)), "C5").status != Status.USED


def test_a_hydra_defaults_scheduler_choice_is_the_schedule() -> None:
    g1 = _check(_audit(_flash_attn_training()), "G1")
    assert g1.status == Status.USED, g1.detail


def test_a_callback_returning_unless_the_logger_is_due_is_paced() -> None:
    i5 = _check(_audit(_flash_attn_training()), "I5")
    assert i5.status != Status.UNUSED, i5.detail
    # control: returning when there is no writer (Ludwig ``if not train_summary_writer: return``) paces nothing
    files = _flash_attn_training()
    files["training/src/callbacks/speed_monitor.py"] = files["training/src/callbacks/speed_monitor.py"].replace(
        "trainer._logger_connector.should_update_logs", "trainer.logger")
    assert _check(_audit(files), "I5").status == Status.UNUSED


# --- meta-math/MetaMath: the Alpaca template's resize helper, and a collator class that tokenizes each batch ------------------

def test_a_collator_class_tokenizing_each_batch_is_online_and_the_resize_helper_tokenizes_nothing() -> None:
    train = ("import torch\nimport transformers\nfrom torch.utils.data import Dataset\n\n\n"
             "def smart_tokenizer_and_embedding_resize(special_tokens_dict, tokenizer, model):\n"
             "    num_new_tokens = tokenizer.add_special_tokens(special_tokens_dict)\n"
             "    model.resize_token_embeddings(len(tokenizer))\n\n\n"
             "def _tokenize_fn(strings, tokenizer):\n"
             "    return [tokenizer(text, return_tensors='pt', padding='longest', max_length=512, truncation=True) for text in strings]\n\n\n"
             "def preprocess(sources, targets, tokenizer):\n    return _tokenize_fn([s + t for s, t in zip(sources, targets)], tokenizer)\n\n\n"
             "class SupervisedDataset(Dataset):\n    def __init__(self, rows):\n        self.rows = rows\n\n"
             "    def __getitem__(self, i):\n        return self.rows[i]\n\n\n"
             "class DataCollatorForSupervisedDataset(object):\n    def __init__(self, tokenizer):\n        self.tokenizer = tokenizer\n\n"
             "    def __call__(self, instances):\n        sources = [x['query'] for x in instances]\n"
             "        targets = [x['response'] for x in instances]\n        return preprocess(sources, targets, self.tokenizer)\n\n\n"
             "def train():\n    model = transformers.AutoModelForCausalLM.from_pretrained('mistralai/Mistral-7B-v0.1')\n"
             "    tokenizer = transformers.AutoTokenizer.from_pretrained('mistralai/Mistral-7B-v0.1')\n"
             "    smart_tokenizer_and_embedding_resize(special_tokens_dict=dict(pad_token='[PAD]'), tokenizer=tokenizer, model=model)\n"
             "    trainer = transformers.Trainer(model=model, train_dataset=SupervisedDataset(rows),\n"
             "                                   data_collator=DataCollatorForSupervisedDataset(tokenizer))\n    trainer.train()\n\n\n"
             "if __name__ == '__main__':\n    train()\n")
    f6 = _check(_audit({"train_math.py": train}), "F6")
    assert "start-up" not in f6.detail and not any("smart_tokenizer" in e.snippet for e in f6.evidence), f6.detail
    assert any(e.line == 12 for e in f6.evidence), [(e.line, e.snippet) for e in f6.evidence]
    # without the collator nothing tokenizes the data: the resize helper is no tokenization at start-up
    bare = train.replace(",\n                                   data_collator=DataCollatorForSupervisedDataset(tokenizer))", ")")
    bare = bare[:bare.index("class DataCollatorForSupervisedDataset")] + bare[bare.index("def train():"):]
    f6 = _check(_audit({"train_math.py": bare}), "F6")
    assert "start-up" not in f6.detail, f6.detail


# --- GAIR-NLP/LIMO: a copy of LLaMA-Factory in train/, upstream's examples beside the one recipe the README links ------------

def _limo(link: bool = True) -> dict[str, str]:
    setup = "from setuptools import find_packages, setup\n\nsetup(name='llamafactory', version='0.9.2', packages=find_packages('src'))\n"
    tuner = ("from peft import LoraConfig, get_peft_model\nfrom transformers import Seq2SeqTrainer\n\n\n"
             "def run_exp(args):\n    if args.finetuning_type == 'lora':\n        model = get_peft_model(model, LoraConfig(r=8))\n"
             "    trainer = Seq2SeqTrainer(model=model, args=args)\n    trainer.train()\n")
    loftq = ("from peft import LoraConfig, get_peft_model\nfrom transformers import AutoModelForCausalLM\n\n\n"
             "def quantize_loftq(model_name_or_path):\n    model = AutoModelForCausalLM.from_pretrained(model_name_or_path)\n"
             "    lora_config = LoraConfig(r=16, init_lora_weights='loftq')\n    peft_model = get_peft_model(model, lora_config)\n"
             "    peft_model.save_pretrained('loftq_init')\n")
    cli = "from llamafactory.train.tuner import run_exp\n\n\ndef main():\n    run_exp()\n"
    files = {"train/setup.py": setup, "train/src/llamafactory/train/tuner.py": tuner, "train/src/llamafactory/cli.py": cli,
             "train/scripts/loftq_init.py": loftq,
             "train/examples/README.md": "```bash\nllamafactory-cli train examples/train_lora/llama3_lora_sft.yaml\n```\n",
             "train/examples/train_limo.yaml": ("model_name_or_path: Qwen/Qwen2.5-32B-Instruct\nstage: sft\ndo_train: true\n"
                                                "finetuning_type: full\ndeepspeed: examples/deepspeed/ds_z3_config.json\n"
                                                "output_dir: saves\nlogging_steps: 1\nsave_strategy: epoch\n"
                                                "per_device_train_batch_size: 1\ngradient_accumulation_steps: 1\nlearning_rate: 5.0e-6\n"
                                                "num_train_epochs: 15\nlr_scheduler_type: cosine\nbf16: true\n"),
             "evaluation/eval.py": "import json\n\n\ndef score(preds):\n    return sum(preds) / len(preds)\n"}
    for i, m in enumerate(["meta-llama/Meta-Llama-3-8B-Instruct"] * 6):
        files[f"train/examples/train_lora/llama3_lora_sft_{i}.yaml"] = (
            f"model_name_or_path: {m}\nstage: sft\ndo_train: true\nfinetuning_type: lora\nlora_target: all\n"
            "output_dir: saves\nlogging_steps: 10\nsave_steps: 500\nper_device_train_batch_size: 1\n"
            "gradient_accumulation_steps: 8\nlearning_rate: 1.0e-4\nnum_train_epochs: 3.0\nlr_scheduler_type: cosine\nbf16: true\n")
    files["train/examples/deepspeed/ds_z3_config.json"] = '{"zero_optimization": {"stage": 3, "overlap_comm": true}, "bf16": {"enabled": "auto"}}\n'
    files["train/examples/deepspeed/ds_z2_offload_config.json"] = ('{"zero_optimization": {"stage": 2, "offload_optimizer": '
                                                                 '{"device": "cpu"}}}\n')
    files["train/examples/extras/fsdp_qlora/train.sh"] = (
        "CUDA_VISIBLE_DEVICES=0,1 accelerate launch --config_file examples/accelerate/fsdp_config.yaml \\\n"
        "    src/train.py examples/extras/fsdp_qlora/llama3_lora_sft.yaml\n")
    files["README.md"] = ("# LIMO\n\n## Training\n\n"
                          + ("- Use our provided [configuration file](https://github.com/GAIR-NLP/LIMO/blob/main/train/examples/train_limo.yaml).\n"
                             if link else "- Use one of the configuration files.\n")
                          + "\n```bash\nFORCE_TORCHRUN=1 NNODES=${PET_NNODES} llamafactory-cli train <path to yaml config file>\n```\n")
    return files


def test_a_framework_copys_examples_are_not_the_projects_recipes_but_its_linked_one_is() -> None:
    a = _audit(_limo())
    assert a.roles.by_path["train/examples/train_lora/llama3_lora_sft_0.yaml"] == "other"
    assert a.roles.by_path["train/examples/train_limo.yaml"] == "config"
    i4 = _check(a, "I4")
    assert i4.status == Status.UNUSED and [e.path for e in i4.findings] == ["train/examples/train_limo.yaml"], i4.detail
    assert a.project.estimated_params == "32B", a.project.estimated_params
    assert a.roles.by_path["train/examples/extras/fsdp_qlora/train.sh"] == "other"
    # the DeepSpeed config the linked recipe points at is the run's; the offload one nothing names is upstream's
    assert a.roles.by_path["train/examples/deepspeed/ds_z3_config.json"] == "config"
    assert a.roles.by_path["train/examples/deepspeed/ds_z2_offload_config.json"] == "other"
    assert _check(a, "A3").status == Status.USED and _check(a, "C4").status != Status.USED
    # without the link the project names no example: upstream's recipes are still not its runs, its launch scripts may be
    b = _audit(_limo(link=False))
    assert b.roles.by_path["train/examples/train_lora/llama3_lora_sft_0.yaml"] == "other"
    assert b.roles.by_path["train/examples/extras/fsdp_qlora/train.sh"] != "other"


def test_the_recipes_full_fine_tune_outweighs_the_frameworks_lora_code() -> None:
    g4 = _check(_audit(_limo()), "G4")
    assert g4.status == Status.UNUSED and "finetuning_type" in g4.detail, g4.detail
