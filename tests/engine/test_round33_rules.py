"""Round 33 (issue #9): DeepSpeedExamples, Chinese-LLaMA-Alpaca-2, Firefly, Video-LLaVA and ChatGLM3 at HEAD, and the
lingua/MiniGPT-4/InternVL leftovers of round 32, read as a new user would. Each test is one false claim of those reports,
made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- a pytest test at the end of a library file ---------------------------------------------------------------------------

_TRAIN = ("import torch\nfrom lingua.probe import AutoProbeD\n\n\ndef train(model, data, opt):\n"
          "    for x in data:\n        loss = model(x).sum()\n        loss.backward()\n        opt.step()\n")
_PROBE = ("import torch\nfrom torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointImpl, checkpoint_wrapper\n\n\n"
          "class AutoProbeD:\n    def __init__(self, module, path):\n        self.module = module\n\n\n"
          "def {name}() -> None:\n    m = Model()\n"
          "    m.head = checkpoint_wrapper(m.head, checkpoint_impl=CheckpointImpl.NO_REENTRANT, preserve_rng_state=False)\n"
          "    y = m(torch.randn(2, 3))\n    y.sum().backward()\n")


def test_a_pytest_test_in_a_library_file_is_not_the_runs_checkpointing():
    # lingua: lingua/probe.py (imported by every app's train.py) ends with `def test_toy_model()`, which wraps a toy model's
    # head in checkpoint_wrapper; C3 cited it as "activation checkpointing is enabled".
    a = _audit({"apps/main/train.py": _TRAIN, "lingua/probe.py": _PROBE.format(name="test_toy_model")})
    c3 = _check(a, "C3")
    assert not any(e.path == "lingua/probe.py" for e in c3.evidence), c3.evidence
    assert c3.status.value != "used"


def test_control_the_same_wrapper_in_a_function_the_run_calls_counts():
    a = _audit({"apps/main/train.py": _TRAIN, "lingua/probe.py": _PROBE.format(name="wrap_toy_model")})
    c3 = _check(a, "C3")
    assert any(e.path == "lingua/probe.py" for e in c3.evidence), c3.evidence


# --- C5: a count read with .get(..., 1) that no recipe sets ---------------------------------------------------------------
# (the check's own examples: C5 "MiniGPT-4: the loop steps every accum_grad_iters ...")


# --- scope: an examples collection's non-LLM trainers are side projects ------------------------------------------------------

def _roles(files: dict[str, str]):
    from checks.facts.extract import extract_file
    from checks.roles import classify_roles

    return classify_roles({p: extract_file(p, t.encode()) for p, t in files.items()})


_DSC_MAIN = ("import deepspeed\nfrom transformers import AutoModelForCausalLM\n\n\ndef main():\n"
             "    model = AutoModelForCausalLM.from_pretrained('facebook/opt-1.3b')\n"
             "    engine, *_ = deepspeed.initialize(model=model, config=ds_config)\n"
             "    for batch in loader:\n        loss = engine(**batch).loss\n        engine.backward(loss)\n        engine.step()\n")
_CIFAR = ("import deepspeed\nimport torch\nimport torch.nn as nn\nimport torchvision\nfrom torchvision import transforms\n\n\n"
          "class Net(nn.Module):\n    def forward(self, x):\n        return self.fc(x)\n\n\n"
          "def main():\n    trainset = torchvision.datasets.CIFAR10(root='./data', train=True, download=True)\n"
          "    engine, _, loader, _ = deepspeed.initialize(model=Net(), training_data=trainset, config='ds_config.json')\n"
          "    for x, y in loader:\n        loss = nn.functional.cross_entropy(engine(x), y)\n        engine.backward(loss)\n"
          "        engine.step()\n")
_SQUAD = ("import deepspeed\nfrom turing.nvidia_modeling import BertForQuestionAnswering\n\n\ndef main():\n"
          "    model = BertForQuestionAnswering.from_pretrained('bert-large-uncased')\n"
          "    engine, *_ = deepspeed.initialize(model=model, config=args.deepspeed_config)\n"
          "    for batch in loader:\n        loss = engine(*batch)\n        engine.backward(loss)\n        engine.step()\n")
_EXAMPLES = {
    "applications/DeepSpeed-Chat/training/step1_supervised_finetuning/main.py": _DSC_MAIN,
    "applications/DeepSpeed-Chat/training/step1_supervised_finetuning/training_scripts/opt/run_1.3b.sh":
        "deepspeed main.py --model_name_or_path facebook/opt-1.3b --zero_stage 2\n",
    "training/cifar/cifar10_deepspeed.py": _CIFAR,
    "training/cifar/run_ds_moe.sh": "deepspeed --num_nodes=1 --num_gpus=2 cifar10_deepspeed.py --moe --ep-world-size 2\n",
    "training/cifar/ds_config.json": '{"train_batch_size": 16, "fp16": {"enabled": true}}\n',
    "training/BingBertSquad/nvidia_run_squad_deepspeed.py": _SQUAD,
    "training/BingBertSquad/1-bit_adam/nccl/run_squad_deepspeed_onebitadam.sh": (
        "base_dir=`pwd`\nNCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=eth0 deepspeed ${base_dir}/../../nvidia_run_squad_deepspeed.py "
        "--deepspeed_config deepspeed_onebitadam_bsz96_config.json\n"),
    "training/BingBertSquad/1-bit_adam/nccl/deepspeed_onebitadam_bsz96_config.json":
        '{"optimizer": {"type": "OneBitAdam", "params": {"lr": 3e-5, "freeze_step": 400}}}\n',
}


def test_non_llm_trainers_their_launches_and_configs_are_side_projects():
    # DeepSpeedExamples: a CIFAR-10 CNN and BERT SQuAD fine-tuning beside DeepSpeed-Chat decided E1/E3/E4 (1-bit Adam demo
    # scripts that switch InfiniBand off), A7 (the CIFAR MoE launch) and the model size (BERT-large).
    r = _roles(_EXAMPLES)
    for p in ("training/cifar/cifar10_deepspeed.py", "training/cifar/run_ds_moe.sh", "training/cifar/ds_config.json",
              "training/BingBertSquad/nvidia_run_squad_deepspeed.py",
              "training/BingBertSquad/1-bit_adam/nccl/run_squad_deepspeed_onebitadam.sh",
              "training/BingBertSquad/1-bit_adam/nccl/deepspeed_onebitadam_bsz96_config.json"):
        assert r.by_path[p] == "side", (p, r.by_path[p], r.why.get(p))
    assert r.by_path["applications/DeepSpeed-Chat/training/step1_supervised_finetuning/main.py"] == "training"
    a = _audit(_EXAMPLES)
    assert _check(a, "E3").status.value != "used"
    assert not any("cifar" in e.path for e in _check(a, "A7").evidence)


def test_control_an_llm_trainer_that_uses_torchvision_transforms_stays_training():
    # a vision-language trainer imports torchvision for its image transforms and names its language model
    vlm = ("import torch\nfrom torchvision import transforms\nfrom torchvision.datasets import ImageFolder\n"
           "from transformers import LlavaForConditionalGeneration\n\n\ndef main():\n"
           "    model = LlavaForConditionalGeneration.from_pretrained('llava-hf/llava-1.5-7b-hf')\n"
           "    data = ImageFolder('images', transform=transforms.ToTensor())\n"
           "    for batch in data:\n        loss = model(**batch).loss\n        loss.backward()\n")
    r = _roles({"train.py": vlm, "scripts/finetune.sh": "torchrun --nproc_per_node 8 train.py\n"})
    assert r.by_path["train.py"] == "training"
    assert r.by_path["scripts/finetune.sh"] == "launch"


def test_a_launch_of_a_renamed_package_is_stale():
    # Video-LLaVA keeps LLaVA's scripts/*.sh, which run llava/train/train_mem.py; its own trainer is
    # videollava/train/train_mem.py, run by scripts/v1_5/*.sh. The stale scripts gave 14 checks their first evidence.
    trainer = "from transformers import Trainer\n\n\ndef train():\n    trainer = Trainer(model=model)\n    trainer.train()\n"
    files = {"videollava/train/train_mem.py": trainer,
             "scripts/v1_5/finetune.sh": "deepspeed videollava/train/train_mem.py --deepspeed ./scripts/zero2.json --bf16 True\n",
             "scripts/finetune.sh": "deepspeed llava/train/train_mem.py --deepspeed ./scripts/zero3.json --bf16 True\n"}
    r = _roles(files)
    assert r.by_path["scripts/finetune.sh"] == "other", r.why.get("scripts/finetune.sh")
    assert r.by_path["scripts/v1_5/finetune.sh"] == "launch"


def test_control_a_launch_of_a_script_the_package_does_not_ship_stays_a_launch():
    # a wheel without its examples: the launch's script is nowhere, under any folder
    files = {"pkg/trainer.py": "def train(model):\n    model.backward()\n",
             "scripts/finetune.sh": "deepspeed examples/train_sft.py --deepspeed ./scripts/zero3.json --bf16 True\n"}
    assert _roles(files).by_path["scripts/finetune.sh"] == "launch"


# --- advice that fits the pinned transformers ------------------------------------------------------------------------------

_CLA2_TRAIN = ("from dataclasses import dataclass, field\nfrom typing import Optional\n\nimport torch\n"
               "from transformers import HfArgumentParser, LlamaForCausalLM, Trainer, TrainingArguments\n\n\n@dataclass\n"
               "class MyTrainingArguments(TrainingArguments):\n"
               "    use_flash_attention_2: Optional[bool] = field(default=False)\n\n\n"
               "def main():\n    parser = HfArgumentParser((ModelArguments, MyTrainingArguments))\n"
               "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
               "    model = LlamaForCausalLM.from_pretrained(\n        model_args.model_name_or_path,\n"
               "        torch_dtype=torch.float16,\n        use_flash_attention_2=training_args.use_flash_attention_2,\n    )\n"
               "    trainer = Trainer(model=model, args=training_args)\n    trainer.train()\n")
_CLA2_RUN = ("torchrun --nnodes 1 --nproc_per_node 1 run_clm_pt_with_peft.py \\\n    --model_name_or_path ${{pretrained_model}} \\\n"
             "    --fp16 \\\n    --block_size 512{extra}\n")


def _plan(files: dict[str, str]):
    from reports.advice import build_plan

    return build_plan(_audit(files))


def test_the_projects_own_flash_attention_switch_is_named_and_advised():
    # Chinese-LLaMA-Alpaca-2 pins transformers 4.35.0 and passes its own use_flash_attention_2 (default False) to
    # from_pretrained; the report offered attn_implementation="flash_attention_2", which 4.35 does not have.
    files = {"scripts/training/run_clm_pt_with_peft.py": _CLA2_TRAIN, "scripts/training/run_pt.sh": _CLA2_RUN.format(extra=""),
             "requirements.txt": "torch==2.0.1\ntransformers==4.35.0\n"}
    a = _audit(files)
    d1 = _check(a, "D1")
    assert d1.status.value == "unused" and "`use_flash_attention_2` option (default False at" in d1.detail, d1.detail
    rec = next(r for r in _plan(files).recommendations if r.check == "D1")
    assert "--use_flash_attention_2 True" in rec.snippet.code and "attn_implementation" not in rec.snippet.code
    assert rec.snippet.where and rec.snippet.where.startswith("scripts/training/run_pt.sh")


def test_a_pin_below_4_36_gets_the_keyword_its_release_has():
    files = {"train.py": ("from transformers import AutoModelForCausalLM, Trainer\n\n\ndef main():\n"
                          "    model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
                          "    Trainer(model=model).train()\n"),
             "requirements.txt": "transformers==4.35.0\n"}
    rec = next(r for r in _plan(files).recommendations if r.check == "D1")
    assert "use_flash_attention_2=True" in rec.snippet.code and "attn_implementation=" not in rec.snippet.code
    files["requirements.txt"] = "transformers==4.31.0\n"
    rec = next(r for r in _plan(files).recommendations if r.check == "D1")
    assert rec.snippet.code.strip() == "transformers>=4.36"
    files["requirements.txt"] = "transformers==4.40.0\n"  # control: a release with attn_implementation
    rec = next(r for r in _plan(files).recommendations if r.check == "D1")
    assert "attn_implementation" in rec.snippet.code


def test_a_dataloader_field_the_pinned_transformers_lacks_is_left_out_of_the_flags():
    # 4.35.0 has dataloader_num_workers but not dataloader_persistent_workers (4.36.0): HfArgumentParser rejects it
    files = {"scripts/training/run_clm_pt_with_peft.py": _CLA2_TRAIN, "scripts/training/run_pt.sh": _CLA2_RUN.format(extra=""),
             "requirements.txt": "torch==2.0.1\ntransformers==4.35.0\n"}
    rec = next(r for r in _plan(files).recommendations if r.check == "F1")
    flags = next(ln for ln in rec.snippet.code.splitlines() if ln.startswith("--"))
    assert "--dataloader_num_workers" in flags and "persistent_workers" not in flags, rec.snippet.code
    assert "left out: dataloader_persistent_workers (transformers >= 4.36.0)" in rec.snippet.code
    files["requirements.txt"] = "torch==2.3.0\ntransformers==4.40.0\n"  # control
    rec = next(r for r in _plan(files).recommendations if r.check == "F1")
    assert "--dataloader_persistent_workers" in rec.snippet.code, rec.snippet.code


def test_control_an_rlhf_script_with_a_bert_reward_model_trains_an_llm():
    # trlx examples/llama_nemo/nemo_llama2_ppo_sentiments.py: the reward is a DistilBERT sentiment pipeline, the model
    # trained is Llama-2 through trlx.train
    rlhf = ("from transformers import DistilBertForSequenceClassification, pipeline\n\nimport trlx\n\n\ndef main():\n"
            "    sentiment_fn = pipeline('sentiment-analysis', 'lvwerra/distilbert-imdb')\n"
            "    trlx.train(reward_fn=lambda samples, **kw: sentiment_fn(samples), config=config)\n")
    r = _roles({"examples/llama_nemo/nemo_llama2_ppo_sentiments.py": rlhf,
                "examples/llama_nemo/megatron_llama_cfg.yaml": "trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  tensor_model_parallel_size: 4\n",
                "examples/llama_nemo/dist_train.sh": "srun python examples/llama_nemo/nemo_llama2_ppo_sentiments.py\n",
                "trlx/trainer.py": "def train(model):\n    loss.backward()\n"})
    assert r.by_path["examples/llama_nemo/nemo_llama2_ppo_sentiments.py"] != "side"
    assert r.by_path["examples/llama_nemo/megatron_llama_cfg.yaml"] != "side"


# --- alignment training recognised by the folder its script lives in --------------------------------------------------------

_DSC_DPO = ("import deepspeed\nimport torch.nn.functional as F\n\n\ndef main():\n"
            "    model, *_ = deepspeed.initialize(model=model, config=ds_config)\n"
            "    for batch in train_dataloader:\n        logits = model(**batch).logits\n"
            "        loss = -F.logsigmoid(beta * (chosen_logratios - rejected_logratios)).mean()\n"
            "        model.backward(loss)\n        model.step()\n")


def test_a_training_script_in_a_folder_named_for_dpo_is_alignment_training():
    # DeepSpeed-Chat training/step2_dpo_finetuning/main.py: a hand-written DPO loss on a DeepSpeed engine; G6 said
    # "no alignment training" once BERT distillation was no longer (wrongly) in scope
    a = _audit({"training/step2_dpo_finetuning/main.py": _DSC_DPO,
                "training/step2_dpo_finetuning/training_scripts/run_1.3b.sh": "deepspeed main.py --model_name_or_path facebook/opt-1.3b\n"})
    assert a.project.alignment and _check(a, "G6").status.value != "n/a"


def test_control_the_same_loop_in_a_supervised_folder_is_not_alignment():
    a = _audit({"training/step1_supervised_finetuning/main.py": _DSC_DPO.replace("logsigmoid", "cross_entropy"),
                "training/step1_supervised_finetuning/run.sh": "deepspeed main.py --model_name_or_path facebook/opt-1.3b\n"})
    assert not a.project.alignment


def test_f10_is_not_advised_where_token_ids_are_already_saved_as_arrow():
    # Chinese-LLaMA-Alpaca-2: tokenized with datasets.map, save_to_disk, load_from_disk on later runs; F10's advice asked
    # for exactly that ("or Arrow via save_to_disk")
    prep = ("import datasets\nfrom transformers import Trainer\n\n\ndef main(files, tokenizer, cache_path):\n"
            "    try:\n        processed_dataset = datasets.load_from_disk(cache_path, keep_in_memory=False)\n"
            "    except Exception:\n        raw = datasets.load_dataset('text', data_files=files)\n"
            "        tokenized = raw.map(lambda x: tokenizer(x['text']), batched=True, num_proc=8, remove_columns=['text'])\n"
            "        processed_dataset = tokenized\n        processed_dataset.save_to_disk(cache_path)\n"
            "    Trainer(model=model, train_dataset=processed_dataset['train']).train()\n")
    plan = _plan({"scripts/training/run_clm_pt_with_peft.py": prep})
    assert any(w.check == "F10" and "already saved ahead of training" in w.reason for w in plan.withheld), plan.withheld
    online = ("from torch.utils.data import DataLoader\nfrom transformers import Trainer\n\n\ndef collate(batch):\n"
              "    return tokenizer([b['text'] for b in batch], padding=True, return_tensors='pt')\n\n\n"
              "def main():\n    Trainer(model=model, train_dataset=ds, data_collator=collate).train()\n")
    plan = _plan({"train.py": online})
    assert not any(w.check == "F10" and "already saved ahead of training" in w.reason for w in plan.withheld)


def test_a_placeholder_model_path_is_no_model_name():
    # Chinese-LLaMA-Alpaca-2 scripts/inference/speculative_sample.py: the __main__ demo's "Target/Model/Path"
    demo = ("from transformers import AutoModelForCausalLM\n\n\nif __name__ == '__main__':\n"
            "    target_model = AutoModelForCausalLM.from_pretrained('Target/Model/Path')\n"
            "    draft_model = AutoModelForCausalLM.from_pretrained('Draft/Model/Path')\n"
            "    out = target_model.generate(input_ids)\n")
    train = ("from transformers import AutoModelForCausalLM, Trainer\n\n\ndef main():\n"
             "    model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n    Trainer(model=model).train()\n")
    names = _audit({"scripts/inference/speculative_sample.py": demo, "train.py": train}).project.model_names
    assert not any(n.endswith("/Path") for n in names), names
    assert "meta-llama/Llama-2-7b-hf" in names


_XF = ("from videollava.train.llama_xformers_attn_monkey_patch import replace_llama_attn_with_xformers_attn\n"
       "replace_llama_attn_with_xformers_attn()\nfrom videollava.train.train import train\n\nif __name__ == '__main__':\n    train()\n")
_MEM = ("from videollava.train.llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn\n"
        "replace_llama_attn_with_flash_attn()\nfrom videollava.train.train import train\n\nif __name__ == '__main__':\n    train()\n")


def test_an_unlaunched_train_script_beside_the_launched_one_is_an_alternative():
    # Video-LLaVA: every launch runs videollava/train/train_mem.py; train_xformers.py beside it (xformers attention,
    # which gave D6 'fused kernels are in use') is run by nothing
    files = {"videollava/train/train_mem.py": _MEM, "videollava/train/train_xformers.py": _XF,
             "videollava/train/train.py": "from transformers import Trainer\n\n\ndef train():\n    Trainer(model=model).train()\n",
             "videollava/train/llama_flash_attn_monkey_patch.py": "def replace_llama_attn_with_flash_attn():\n    pass\n",
             "videollava/train/llama_xformers_attn_monkey_patch.py": "def replace_llama_attn_with_xformers_attn():\n    pass\n",
             "scripts/v1_5/finetune.sh": "deepspeed videollava/train/train_mem.py --deepspeed ./scripts/zero2.json --bf16 True\n"}
    r = _roles(files)
    assert r.by_path["videollava/train/train_xformers.py"] == "other"
    assert r.by_path["videollava/train/train.py"] == "training"
    # control: a launch whose script is not resolved could be running it
    files["scripts/v1_5/other.sh"] = "deepspeed $TRAIN_SCRIPT --deepspeed ./scripts/zero2.json\n"
    assert _roles(files).by_path["videollava/train/train_xformers.py"] == "training"


def test_a_deepspeed_config_no_launch_passes_is_not_the_runs_stage():
    # Video-LLaVA: every launch passes scripts/zero2.json or zero2_offload.json; zero3.json is passed by nothing, yet A3
    # said "ZeRO stage 3"
    files = {"videollava/train/train_mem.py": "from transformers import Trainer\n\n\ndef train():\n    Trainer(model=model).train()\n",
             "scripts/zero2.json": '{"zero_optimization": {"stage": 2, "overlap_comm": true}}\n',
             "scripts/zero3.json": '{"zero_optimization": {"stage": 3, "overlap_comm": true}}\n',
             "scripts/v1_5/finetune.sh": "deepspeed videollava/train/train_mem.py --deepspeed ./scripts/zero2.json --bf16 True\n"}
    a3 = _check(_audit(files), "A3")
    assert "stage 2" in a3.detail and not any(e.path == "scripts/zero3.json" for e in a3.evidence), a3.detail
    # control: a launch whose config is a variable could pass either
    files["scripts/v1_5/other.sh"] = "deepspeed videollava/train/train_mem.py --deepspeed $DS_CONFIG --bf16 True\n"
    assert "stage 3" in _check(_audit(files), "A3").detail


def test_an_inference_scripts_zero_config_is_no_training_run():
    # DeepSpeedExamples inference/huggingface/zero_inference/run_model.py: a ZeRO-3 dict for ZeRO-Inference offload of a
    # model that only generates was A3's first evidence and step zero's "fully sharded" reason
    files = {"training/step1_supervised_finetuning/main.py": _DSC_MAIN,
             "training/step1_supervised_finetuning/run.sh": "deepspeed main.py --model_name_or_path facebook/opt-1.3b\n",
             "training/ds_config.json": '{"zero_optimization": {"stage": 2}}\n',
             "inference/huggingface/zero_inference/run_model.py": (
                 "import deepspeed\n\n\ndef get_ds_model(model):\n"
                 "    ds_config = {'zero_optimization': {'stage': 3, 'offload_param': {'device': 'cpu'}}}\n"
                 "    return deepspeed.initialize(model=model, config=ds_config)[0]\n")}
    a3 = _check(_audit(files), "A3")
    assert not any(e.path.startswith("inference/") for e in a3.evidence), a3.evidence
