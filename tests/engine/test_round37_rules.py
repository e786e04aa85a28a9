"""Round 37 (issue #9): leftovers of rounds 35-36 (GaLore, StarCoder, Video-LLaMA) and OLMo-core, VILA and Mantis at HEAD, read
as a new user would. Each test is one false claim of those reports, made from the shape of the real code, with a control that
keeps the rule honest."""

from __future__ import annotations

from checks.engine import audit_files
from reports.markdown import render_markdown


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


# --- GaLore: ``torchrun --standalone --nnodes 8`` cannot join other nodes ------------------------------------------------------

_GALORE_MAIN = (
    "import torch\nimport torch.distributed as dist\nfrom transformers import LlamaForCausalLM, LlamaConfig\n\n\n"
    "def main(args):\n    dist.init_process_group(backend='nccl')\n"
    "    model = LlamaForCausalLM(LlamaConfig.from_pretrained(args.model_config))\n"
    "    model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[dist.get_rank() % 8])\n"
    "    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)\n"
    "    for batch in loader:\n        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n"
    "        optimizer.zero_grad()\n"
)


def _galore(launch: str):
    return _audit({"torchrun_main.py": _GALORE_MAIN, "scripts/benchmark_c4/llama_7b.sh": (
        "# LLaMA-7B, GaLore-Adam, 8 A100, 8 Node\n" + launch + " torchrun_main.py \\\n    --model_config configs/llama_7b.json \\\n"
        "    --lr 0.005 \\\n    --batch_size 8\n")})


def test_a_standalone_torchrun_asking_for_nodes_is_one_node_as_written():
    a = _galore("torchrun --standalone --nnodes 8 --nproc_per_node 8")
    assert not a.project.multi_node and a.project.num_nodes is None
    assert a.project.notes["standalone_nodes"] == "scripts/benchmark_c4/llama_7b.sh:2"
    assert "--standalone" in _check(a, "E1").detail and _check(a, "E1").status.value == "n/a"
    md = render_markdown(a)
    assert "whose rendezvous is local" in md and "8 nodes" not in md
    assert "按所写只有单机" in render_markdown(a, lang="zh")
    # control: the same launch with a rendezvous other nodes can reach is 8 nodes
    b = _galore("torchrun --nnodes 8 --nproc_per_node 8 --rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:29500")
    assert b.project.multi_node and b.project.num_nodes == 8 and "standalone_nodes" not in b.project.notes
    # and a standalone launch on one node says nothing about it
    c = _galore("torchrun --standalone --nproc_per_node 8")
    assert "standalone_nodes" not in c.project.notes


# --- StarCoder: ``Accelerator().process_index`` for a device map is a helper, not Accelerate in place -----------------------

_SC_FINETUNE = (
    "import torch\nfrom accelerate import Accelerator\nfrom peft import LoraConfig, get_peft_model\n"
    "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\n\n"
    "def run_training(args, train_data, val_data):\n"
    "    model = AutoModelForCausalLM.from_pretrained(\n        args.model_path,\n        use_cache=not args.no_gradient_checkpointing,\n"
    "        load_in_8bit=True,\n        device_map={\"\": Accelerator().process_index},\n    )\n"
    "    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, task_type='CAUSAL_LM'))\n"
    "    training_args = TrainingArguments(output_dir=args.output_dir, max_steps=args.max_steps, bf16=True,\n"
    "                                      logging_steps=10, save_steps=1000)\n"
    "    trainer = Trainer(model=model, args=training_args, train_dataset=train_data, eval_dataset=val_data)\n"
    "    trainer.train()\n"
)


def test_an_accelerator_dropped_after_reading_its_process_index_is_no_framework_in_place():
    files = {"finetune/finetune.py": _SC_FINETUNE, "requirements.txt": "transformers==4.28.1\naccelerate==0.18.0\n",
             "finetune/ds_config.json": '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": "auto"}}\n'}
    a = _audit(files)
    b3 = _check(a, "B3")
    assert b3.status.value == "unused" and "Accelerator().process_index" in b3.detail and "drives nothing" in b3.detail
    assert "already in place" not in render_markdown(a)
    # control: a kept Accelerator whose loop is hand-written is partial use, as before
    kept = _SC_FINETUNE.replace('device_map={"": Accelerator().process_index}', 'device_map={"": accelerator.process_index}').replace(
        "def run_training(args, train_data, val_data):\n", "def run_training(args, train_data, val_data):\n    accelerator = Accelerator()\n")
    assert _check(_audit({**files, "finetune/finetune.py": kept}), "B3").status.value == "partial"
    # and on transformers >= 4.30 the Trainer runs on Accelerate: used
    assert _check(_audit({**files, "requirements.txt": "transformers==4.41.0\n"}), "B3").status.value == "used"


# --- Video-LLaMA: advice that needs PyTorch 2 under a pytorch=1.12.1 pin ---------------------------------------------------

_VL_TRAIN = (
    "import torch\nfrom torch.utils.data import DataLoader\n\nfrom mylm.model import VideoLLM\n\n\n"
    "def main(cfg):\n    model = VideoLLM(cfg).cuda()\n"
    "    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)\n"
    "    loader = DataLoader(dataset, batch_size=4, num_workers=4, pin_memory=True)\n"
    "    scaler = torch.cuda.amp.GradScaler()\n"
    "    for batch in loader:\n        with torch.cuda.amp.autocast():\n            loss = model(batch)['loss']\n"
    "        scaler.scale(loss).backward()\n        scaler.step(optimizer)\n        scaler.update()\n        optimizer.zero_grad()\n"
)
_ENV = ("name: videollama\nchannels:\n  - pytorch\n  - defaults\ndependencies:\n  - python=3.9\n  - pytorch=1.12.1\n"
        "  - torchvision=0.13.1\n  - pip:\n    - transformers==4.28.0\n")


def _recs(a):
    from reports.advice import build_plan
    return {r.check: r for r in build_plan(a).recommendations}


def test_advice_that_needs_pytorch_2_says_the_pin_must_be_raised_first():
    files = {"train.py": _VL_TRAIN, "environment.yml": _ENV,
             "mylm/models/ImageBind/requirements.txt": "torch==1.13.0\n"}
    recs = _recs(_audit(files))
    assert recs["D2"].text.startswith("Needs PyTorch 2.0+ (environment.yml:7 pins `pytorch==1.12.1`: raise it first). ")
    assert recs["D2"].text_zh.startswith("需要 PyTorch 2.0 及以上（environment.yml:7 固定为 `pytorch==1.12.1`")
    # advice that runs on the pinned release is left as it was
    assert all(not r.text.startswith("Needs PyTorch") for cid, r in recs.items() if cid not in ("D1", "D2", "D4", "D5", "D6", "C2", "C6"))
    # control: the project's own top-level pin allows 2.x; a vendored model's deeper requirements.txt does not decide it
    recs = _recs(_audit({**files, "environment.yml": _ENV.replace("pytorch=1.12.1", "pytorch=2.1.0")}))
    assert not recs["D2"].text.startswith("Needs PyTorch")
    recs = _recs(_audit({"train.py": _VL_TRAIN, "requirements.txt": "torch>=1.12\n"}))
    assert not recs["D2"].text.startswith("Needs PyTorch")


# --- Video-LLaMA / MiniGPT-4: C5's advice names the runner's own accumulation key ------------------------------------------

def test_accumulation_advice_names_the_count_the_step_guard_reads():
    from checks.rules.c_memory import _lavis_runner
    recs = _recs(_audit(_lavis_runner("")))
    assert "raise `accum_grad_iters`" in recs["C5"].text and "gradient_accumulation_steps" not in recs["C5"].text
    assert "`accum_grad_iters`" in recs["C5"].text_zh
    assert recs["C5"].snippet.lang == "yaml" and recs["C5"].snippet.code.startswith("accum_grad_iters: 4")
    # control: a loop guarded by the HF name keeps the generic advice
    files = _lavis_runner("")
    files["minigpt4/tasks/base_task.py"] = files["minigpt4/tasks/base_task.py"].replace("accum_grad_iters", "gradient_accumulation_steps")
    files["minigpt4/runners/runner_base.py"] = files["minigpt4/runners/runner_base.py"].replace(
        "accum_grad_iters", "gradient_accumulation_steps")
    rec = _recs(_audit(files))["C5"]
    assert "raise `" not in rec.text and "set `gradient_accumulation_steps`" in rec.text


# --- CogVLM: ``offload_optimizer`` beside ``zero_optimization`` is not read by DeepSpeed -------------------------------------

_DS = ('{\n    "train_micro_batch_size_per_gpu": 4,\n    "zero_optimization": {\n      "stage": 2,\n      "overlap_comm": true\n'
       '    },%s\n    "bf16": {\n      "enabled": true\n    }\n}\n')
_OFF = '\n    "offload_optimizer": {\n      "device": "cpu",\n      "pin_memory": true\n    },'


def test_offload_outside_the_zero_section_offloads_nothing():
    train = ("import deepspeed\n\n\ndef main(args, model):\n"
             "    engine, opt, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=args.ds)\n"
             "    for batch in loader:\n        loss = engine(batch)\n        engine.backward(loss)\n        engine.step()\n")
    launch = "deepspeed train.py --ds configs/ds.json\n"
    a = _audit({"train.py": train, "run.sh": launch, "configs/ds.json": _DS % _OFF})
    c4 = _check(a, "C4")
    assert c4.status.value == "unused" and "outside `zero_optimization`" in c4.detail and "configs/ds.json:8" in c4.detail
    assert [(e.path, e.line) for e in c4.findings] == [("configs/ds.json", 8)]
    # control: the same block inside the ZeRO section is CPU offload
    inside = _DS.replace('"overlap_comm": true\n', '"overlap_comm": true,' + _OFF.rstrip(",").replace("\n    ", "\n      ") + "\n") % ""
    assert _check(_audit({"train.py": train, "run.sh": launch, "configs/ds.json": inside}), "C4").status.value == "used"


def test_a_side_project_guard_does_not_rename_the_recipes_accumulation_key():
    # InternVL: the recipes pass --gradient_accumulation_steps 1 to the HF chat trainer; a classification side project's loop
    # steps every config.TRAIN.ACCUMULATION_STEPS. The advice keeps the recipes' name.
    from checks.rules.c_memory import _lavis_runner
    files = _lavis_runner("")
    files["finetune.sh"] = "torchrun --nproc_per_node 8 train.py --gradient_accumulation_steps 1 --bf16 True\n"
    rec = _recs(_audit(files))["C5"]
    assert "accum_grad_iters" not in rec.text


# --- mPLUG-Owl2: a LoRA recipe's leniency does not carry over to the full fine-tune beside it ---------------------------------

_OWL_TRAIN = (
    "from dataclasses import dataclass, field\n\nimport transformers\nfrom peft import LoraConfig, get_peft_model\n\n\n"
    "@dataclass\nclass TrainingArguments(transformers.TrainingArguments):\n    lora_enable: bool = False\n    lora_r: int = 64\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained('MAGAer13/mplug-owl2-llama2-7b')\n"
    "    if training_args.lora_enable:\n"
    "        model = get_peft_model(model, LoraConfig(r=training_args.lora_r, task_type='CAUSAL_LM'))\n"
    "    trainer = transformers.Trainer(model=model, args=training_args)\n    trainer.train()\n"
)


def _owl_launch(extra: str) -> str:
    return ("deepspeed mplug_owl2/train/train_mem.py \\\n    --deepspeed ./scripts/zero3.json \\\n" + extra
            + "    --bf16 True \\\n    --save_strategy \"steps\" \\\n    --save_steps 10 \\\n    --save_total_limit 1\n")


def test_a_full_fine_tune_saving_every_10_steps_is_too_frequent_beside_a_lora_recipe():
    files = {"mplug_owl2/train/train_mem.py": _OWL_TRAIN, "scripts/finetune.sh": _owl_launch(""),
             "scripts/finetune_lora.sh": _owl_launch("    --lora_enable True --lora_r 128 \\\n")}
    i3 = _check(_audit(files), "I3")
    assert i3.status.value == "unused" and "threshold: every 50 steps" in i3.detail
    assert [(e.path, e.line) for e in i3.findings] == [("scripts/finetune.sh", 5)]
    # control: the LoRA recipe alone saves a small adapter every 10 steps: sane
    del files["scripts/finetune.sh"]
    assert _check(_audit(files), "I3").status.value == "used"


# --- MiniCPM: Liger Kernel has no patch for MiniCPM's remote-code model -----------------------------------------------------

def _minicpm(model: str):
    train = (
        "from dataclasses import dataclass, field\n\nimport transformers\nfrom transformers import AutoModelForCausalLM, Trainer\n\n\n"
        f"@dataclass\nclass ModelArguments:\n    model_name_or_path: str = field(default='{model}')\n\n\n"
        "def train():\n    (model_args, training_args) = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))"
        ".parse_args_into_dataclasses()\n"
        "    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)\n"
        "    Trainer(model=model, args=training_args).train()\n"
    )
    return _audit({"finetune/finetune.py": train,
                   "finetune/sft.sh": f"deepspeed finetune.py --model_name_or_path {model} --bf16 --save_steps 500\n"})


def test_liger_advice_is_withheld_for_minicpm():
    from reports.advice import build_plan
    a = _minicpm("openbmb/MiniCPM-2B-sft-bf16")
    assert a.project.model_families == ["minicpm"] and _check(a, "D5").priority is None
    assert "D5" not in {r.check for r in build_plan(a).recommendations}
    # control: a Llama fine-tune keeps the advice
    assert "D5" in {r.check for r in build_plan(_minicpm("meta-llama/Llama-2-7b-hf")).recommendations}


# --- Mantis: a CLIP vision config built with a vocabulary anyway is not the language model's size ------------------------

_LLAVA_CFG = (
    "from transformers import CONFIG_MAPPING, PretrainedConfig\n\n\n"
    "class LlavaConfig(PretrainedConfig):\n    model_type = 'llava'\n\n"
    "    def __init__(self, vision_config=None, text_config=None, vocab_size=32000, **kwargs):\n"
    "        self.vision_config = vision_config\n        if vision_config is None:\n"
    "            self.vision_config = CONFIG_MAPPING[\"clip_vision_model\"](\n                intermediate_size=4096,\n"
    "                hidden_size=1024,\n                patch_size=14,\n                image_size=336,\n"
    "                num_hidden_layers=24,\n                num_attention_heads=16,\n                vocab_size=32000,\n"
    "                projection_dim=768,\n            )\n        super().__init__(**kwargs)\n"
)
_MANTIS_TRAIN = (
    "import transformers\nfrom transformers import Trainer\n\nfrom mantis.models.mllava.configuration_llava import LlavaConfig\n\n\n"
    "def main(training_args, model_args):\n    config = LlavaConfig()\n"
    "    model = transformers.AutoModelForVision2Seq.from_pretrained(model_args.model_name_or_path)\n"
    "    trainer = Trainer(model=model, args=training_args)\n    trainer.train()\n"
)


def test_a_vision_tower_config_call_does_not_size_the_model():
    files = {"mantis/models/mllava/configuration_llava.py": _LLAVA_CFG, "mantis/train/train.py": _MANTIS_TRAIN,
             "mantis/train/scripts/train.sh": ("accelerate launch mantis/train/train.py --model_name_or_path "
                                               "TIGER-Lab/Mantis-8B-siglip-llama3-pretraind --bf16 True\n")}
    p = _audit(files).project
    assert p.estimated_params == "8B" and p.notes.get("params_source") == "model name"
    # control: a language model's config call (no patch or image size in it) still sizes the model
    lm = _LLAVA_CFG.replace("                patch_size=14,\n                image_size=336,\n", "").replace(
        "hidden_size=1024", "hidden_size=4096").replace("num_hidden_layers=24", "num_hidden_layers=32")
    p = _audit({**files, "mantis/models/mllava/configuration_llava.py": lm}).project
    assert p.notes.get("params_source", "").startswith("mantis/models/mllava/configuration_llava.py")


# --- Mantis: worker counts and accumulation computed in shell arithmetic when the launch starts ---------------------------

_MANTIS_SH = (
    "#!/bin/bash\nglobal_batch_size={gb}\nCOUNT_NODE=$WORLD_SIZE\n"
    "NGPU_PER_NODE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)\n"
    "GPU=$((${{COUNT_NODE}} * ${{NGPU_PER_NODE}}))\n"
    "{workers}\n"
    "if [ $WORKERS -gt 112 ]; then\n    WORKERS=112\nfi\n"
    "per_device_train_batch_size=1\n"
    "gradient_accumulation_steps=$(($global_batch_size / ($per_device_train_batch_size * $GPU)))\n\n"
    "accelerate launch --config_file=accelerate_configs/zero3.yaml \\\n    --num_machines=${{COUNT_NODE}} --num_processes=${{GPU}} \\\n"
    "    train_mllava.py \\\n    --bf16 True \\\n    --per_device_train_batch_size $per_device_train_batch_size \\\n"
    "    --gradient_accumulation_steps $gradient_accumulation_steps \\\n    --dataloader_num_workers $WORKERS \\\n"
    "    --save_steps 500\n"
)
_MANTIS_PY = ("import transformers\nfrom transformers import Trainer\n\n\ndef main(training_args):\n"
              "    model = transformers.AutoModelForCausalLM.from_pretrained('meta-llama/Meta-Llama-3-8B')\n"
              "    Trainer(model=model, args=training_args).train()\n")


def _mantis_files(literal_workers: str = "WORKERS=1") -> dict[str, str]:
    computed = "WORKERS=$((${COUNT_NODE} * ${NGPU_PER_NODE} * 4))"
    return {"mantis/train/train_mllava.py": _MANTIS_PY,
            **{f"mantis/train/scripts/train_{n}.sh": _MANTIS_SH.format(gb=gb, workers=computed)
               for n, gb in (("chat", 128), ("video", 128), ("pretrain", 256))},
            "mantis/train/scripts/train_siglip.sh": _MANTIS_SH.format(gb=128, workers=literal_workers)}


def test_a_cap_in_an_if_block_is_not_the_worker_count():
    from checks.facts.shell import extract_shell_text
    from checks.facts.types import FileFacts
    ff = FileFacts("run.sh", "shell")
    extract_shell_text("run.sh", _MANTIS_SH.format(gb=128, workers="WORKERS=$((${COUNT_NODE} * ${NGPU_PER_NODE} * 4))"), ff)
    assert "112" not in str(ff.launches[0].script_args["dataloader_num_workers"])
    for start, want in (("WORKERS=1", 1), ("WORKERS=200", 112)):  # a literal: the cap applies when its test holds
        ff = FileFacts("run.sh", "shell")
        extract_shell_text("run.sh", _MANTIS_SH.format(gb=128, workers=start), ff)
        assert float(ff.launches[0].script_args["dataloader_num_workers"]) == want


def test_workers_computed_at_launch_in_most_recipes_are_loader_workers():
    f1 = _check(_audit(_mantis_files()), "F1")
    assert f1.status.value == "used" and "computed when the launch starts in 3 of 4 launches" in f1.detail
    assert "train_siglip.sh" in f1.detail and "(1)" in f1.detail


def test_accumulation_computed_from_the_global_batch_in_shell_is_accumulation():
    c5 = _check(_audit(_mantis_files()), "C5")
    assert c5.status.value == "used" and "/ (1 x GPUs) at mantis/train/scripts/" in c5.detail
    # control: a global batch of one micro-batch per GPU at most is no accumulation
    files = {k: v.replace("global_batch_size=128", "global_batch_size=1").replace("global_batch_size=256", "global_batch_size=1")
             for k, v in _mantis_files().items()}
    assert _check(_audit(files), "C5").status.value != "used"


def test_the_per_recipe_save_threshold_does_not_reach_the_logging_interval():
    # ChatGLM3's shape: a LoRA recipe beside full ones, all logging every 10 steps: sane for I4 (threshold 10)
    launch = _owl_launch("").replace("--save_steps 10", "--save_steps 500 --logging_steps 10")
    files = {"mplug_owl2/train/train_mem.py": _OWL_TRAIN, "scripts/finetune.sh": launch,
             "scripts/finetune_lora.sh": launch.replace("--bf16 True", "--lora_enable True --bf16 True")}
    assert _check(_audit(files), "I4").status.value == "used"


# --- Mantis: OpenFlamingo's wrap_fsdp kept in the model code, called by nothing ---------------------------------------------

def test_fsdp_wrapping_in_a_method_nothing_calls_wraps_nothing():
    from checks.rules.a_parallelism import manual_fsdp_wrap
    files = manual_fsdp_wrap(True)
    a = _audit(files)
    assert _check(a, "A2").status.value == "used"  # control: the project's train script calls wrap_fsdp
    callers = [p for p, t in files.items() if "wrap_fsdp(" in t and "def wrap_fsdp" not in t]
    assert callers
    for p in callers:  # the same model code with every call of wrap_fsdp gone
        files[p] = files[p].replace(".wrap_fsdp(", ".to_device_only(")
    files["README.md"] = files["README.md"].replace(" --fsdp", "")
    a = _audit(files)
    for cid in ("A2", "B5"):
        r = _check(a, cid)
        assert r.status.value == "unused" and "which nothing in the repository calls" in r.detail, (cid, r.detail)


# --- Mantis: HF's --use_liger_kernel passed by one launch in many --------------------------------------------------------------

def test_liger_through_the_hf_flag_in_a_minority_of_launches_is_partial():
    def files(on: int) -> dict[str, str]:
        out = {"train/train.py": _MANTIS_PY}
        for i in range(4):
            flag = "    --use_liger_kernel True \\\n" if i < on else ""
            out[f"scripts/train_{i}.sh"] = ("accelerate launch train/train.py \\\n    --bf16 True \\\n" + flag
                                            + "    --per_device_train_batch_size 1 \\\n    --learning_rate 1e-5\n")
        return out
    a = _audit(files(1))
    d5 = _check(a, "D5")
    assert d5.status.value == "partial" and "1 of 4 launches" in d5.detail
    assert _recs(a)["D5"].text.startswith("Some launches already turn on Liger's kernels with the HF Trainer's `--use_liger_kernel True`")
    assert _check(_audit(files(3)), "D5").status.value == "used"


# --- Mantis: an evaluation harness folder, and a model's own resize_token_embeddings handing its arguments on ----------------

def test_a_folder_of_model_eval_wrappers_is_an_evaluation_harness():
    from checks.engine import audit_files as _af
    from checks.roles import EVAL
    files = {f"mantis/mllm_tools/{m}_eval.py": "import torch\n\n\nclass Eval:\n    def __call__(self, inputs):\n        return inputs\n"
             for m in ("idefics2", "fuyu", "cogvlm", "emu2")}
    files["mantis/mllm_tools/model_utils/otter/config.json"] = '{"hidden_size": 4544, "num_hidden_layers": 32}\n'
    files["mantis/mllm_tools/utils.py"] = "def load(x):\n    return x\n"
    files["mantis/train/train.py"] = _MANTIS_PY
    a = _af((k, v.encode()) for k, v in files.items())
    assert a.roles.role("mantis/mllm_tools/fuyu_eval.py") == EVAL
    assert a.roles.role("mantis/mllm_tools/model_utils/otter/config.json") == EVAL
    assert a.roles.role("mantis/train/train.py") != EVAL
    # control: one *_eval.py among a package's modules does not make the package an evaluation harness
    few = {k: v for k, v in files.items() if "fuyu" not in k and "cogvlm" not in k}
    few.update({f"mantis/mllm_tools/{n}.py": "def f():\n    return 1\n" for n in ("a", "b", "c")})
    assert _af((k, v.encode()) for k, v in few.items()).roles.role("mantis/mllm_tools/a.py") != EVAL


def test_a_model_class_forwarding_resize_to_its_language_model_is_not_the_resize_site():
    model = ("from torch import nn\n\n\nclass LlavaForConditionalGeneration(nn.Module):\n"
             "    def resize_token_embeddings(self, new_num_tokens=None, pad_to_multiple_of=None):\n"
             "        model_embeds = self.language_model.resize_token_embeddings(new_num_tokens, pad_to_multiple_of)\n"
             "        return model_embeds\n")
    train = ("from transformers import AutoTokenizer, Trainer\n\nfrom mm.modeling_llava import LlavaForConditionalGeneration\n\n\n"
             "def main(args):\n    tokenizer = AutoTokenizer.from_pretrained(args.model)\n"
             "    tokenizer.add_special_tokens({'additional_special_tokens': ['<image>']})\n"
             "    model = LlavaForConditionalGeneration.from_pretrained(args.model)\n"
             "    model.language_model.resize_token_embeddings(len(tokenizer))\n"
             "    Trainer(model=model, args=args).train()\n")
    d7 = _check(_audit({"mm/modeling_llava.py": model, "train.py": train}), "D7")
    assert d7.status.value == "unused" and [(e.path, e.line) for e in d7.evidence] == [("train.py", 10)]


def test_a_model_modules_chat_helper_is_no_inference_workload():
    chat_model = ("import torch\nfrom transformers import PreTrainedModel\n\n\nclass InternVLChatModel(PreTrainedModel):\n"
                  "    def chat(self, tokenizer, pixel_values, question, generation_config):\n"
                  "        model_inputs = tokenizer(question, return_tensors='pt')\n"
                  "        return self.generate(pixel_values=pixel_values, input_ids=model_inputs['input_ids'], **generation_config)\n")
    train = _MANTIS_PY.replace("import transformers\n", "import transformers\n\nfrom mm.modeling_internvl_chat import InternVLChatModel\n")
    a = _audit({"mm/modeling_internvl_chat.py": chat_model, "train.py": train})
    assert not a.project.does_inference and _check(a, "J5").status.value == "n/a"
    # control: the same helper called from a chat demo is an inference workload
    demo = "from mm.modeling_internvl_chat import InternVLChatModel\n\nmodel = InternVLChatModel.from_pretrained('x')\nprint(model.generate(x))\n"
    assert _audit({"mm/modeling_internvl_chat.py": chat_model, "train.py": train, "chat_demo.py": demo}).project.does_inference


def test_a_server_generating_through_the_models_own_api_is_an_inference_workload():
    server = ("from fastapi import FastAPI\n\nimport llava\n\napp = FastAPI()\nmodel = llava.load('Efficient-Large-Model/NVILA-8B')\n\n\n"
              "@app.post('/chat/completions')\nasync def chat(request):\n    return model.generate_content(request.prompt)\n")
    files = {"train.py": _MANTIS_PY, "serving/server.py": server}
    assert _audit(files).project.does_inference
    files["serving/server.py"] = server.replace("model.generate_content(request.prompt)", "model.tokenize(request.prompt)")
    assert not _audit(files).project.does_inference


# --- VILA: FP8 training picked by the project's own --quantize_model in one recipe ----------------------------------------

def test_fp8_through_the_projects_quantize_option_in_one_recipe_is_partial():
    def launch(extra: str) -> str:
        return ("torchrun --nproc_per_node 8 llava/train/train_mem.py \\\n    --deepspeed scripts/zero3.json \\\n"
                "    --learning_rate 2e-5 \\\n" + extra + "    --bf16 True\n")
    files = {"llava/train/train_mem.py": _MANTIS_PY, "scripts/sft.sh": launch(""), "scripts/pretrain.sh": launch(""),
             "scripts/fp8training/sft_qwen_fp8.sh": launch('    --quantize_model "fp8Linear_qwen2" \\\n')}
    c2 = _check(_audit(files), "C2")
    assert c2.status.value == "partial" and "1 of 3 training launches" in c2.detail and "sft_qwen_fp8.sh:4" in c2.detail
    # control: an int4 quantization option is no FP8 training
    files["scripts/fp8training/sft_qwen_fp8.sh"] = launch('    --quantize_model "int4_awq" \\\n')
    assert _check(_audit(files), "C2").status.value == "unused"
