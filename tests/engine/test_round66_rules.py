"""Round 66 (issue #9): claims of more public repositories (ChatDoctor, OpenCoder-llm, Magicoder, Platypus, medAlpaca,
PMC-LLaMA, ToolBench, FinGPT), read claim by claim. Each test is one false claim of those reports, made from the shape of the
real code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- ChatDoctor: the README's training commands sit in a block labelled Python -------------------------------------------------

_ALPACA_TRAIN = ("import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
                 "    (training_args,) = parser.parse_args_into_dataclasses()\n"
                 "    model = transformers.AutoModelForCausalLM.from_pretrained('facebook/opt-125m')\n"
                 "    trainer = transformers.Trainer(model=model, args=training_args)\n    trainer.train()\n\n\n"
                 "if __name__ == '__main__':\n    train()\n")
_CHATDOCTOR_README = (" ## How to fine-tuning\n\n ```{lang}\ntorchrun --nproc_per_node=4 --master_port=<your_random_port> train.py \\\n"
                      "    --model_name_or_path <your_path_to_hf_converted_llama_ckpt_and_tokenizer> \\\n"
                      "    --data_path ./HealthCareMagic-100k.json \\\n    --bf16 True \\\n    --output_dir pretrained \\\n"
                      "    --per_device_train_batch_size 4 \\\n    --gradient_accumulation_steps 8 \\\n"
                      "    --fsdp \"full_shard auto_wrap\" \\\n    --fsdp_transformer_layer_cls_to_wrap 'LLaMADecoderLayer' \\\n"
                      "    --tf32 True\n ```\n")


def test_a_launch_in_a_block_labelled_python_is_a_launch() -> None:
    files = {"train.py": _ALPACA_TRAIN, "README.md": _CHATDOCTOR_README.format(lang="python")}
    result = _audit(files)
    for cid in ("A1", "A2", "C5"):
        c = _check(result, cid)
        assert c.status.value == "used" and any(e.path == "README.md" for e in c.evidence), (cid, c)
    # control: a block labelled Python that is Python (a quickstart calling the trainer) is no launch
    files["README.md"] = (" ## How to fine-tuning\n\n ```python\nimport train\ntrain.train()\n ```\n\n"
                          "```python\npython_version = 3\nprint(python_version)\n```\n")
    result = _audit(files)
    assert _check(result, "A1").status.value != "used" and _check(result, "A2").status.value != "used"


# --- OpenCoder-llm: placeholders written as `|model path|`, and an accumulation divided by two literals ---------------------------

_OPENCODER_FT = ("import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
                 "    (training_args,) = parser.parse_args_into_dataclasses()\n"
                 "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n"
                 "    trainer = transformers.Trainer(model=model, args=training_args)\n    trainer.train()\n\n\n"
                 "if __name__ == '__main__':\n    train()\n")
_OPENCODER_SH = ("set -ex\n\nDISTRIBUTED_ARGS=\"\n    --nproc_per_node 8 \\\n    --nnodes $WORLD_SIZE \\\n    --node_rank $RANK \\\n"
                 "    --master_addr $MASTER_ADDR \\\n    --master_port $MASTER_PORT\n\"\n\nBATCH_SIZE=4096\nMICRO_BATCH_SIZE=8\n"
                 "GRAD_ACCU=$(($BATCH_SIZE / $WORLD_SIZE / $MICRO_BATCH_SIZE / 8))\n\n"
                 "DATA_PATH=\"{data}\"\nMODEL_PATH=\"{model}\"\n\n"
                 "torchrun ${{DISTRIBUTED_ARGS}} finetune.py \\\n    --model_name_or_path $MODEL_PATH \\\n    --data_path $DATA_PATH \\\n"
                 "    --per_device_train_batch_size $MICRO_BATCH_SIZE \\\n    --gradient_accumulation_steps $GRAD_ACCU \\\n"
                 "    --bf16 True\n")


def test_a_placeholder_in_bars_names_no_model_and_no_data() -> None:
    files = {"sft/finetune.py": _OPENCODER_FT,
             "sft/scripts/stage1_example.sh": _OPENCODER_SH.format(data=" |your data path| ", model=" |model path| ")}
    result = _audit(files)
    assert not any("|" in n or n in ("path|", "data") for n in result.project.model_names), result.project.model_names
    i1 = _check(result, "I1")
    assert "data" not in i1.values.get("data_paths", []), i1
    # control: real values in the same places are read
    files["sft/scripts/stage1_example.sh"] = _OPENCODER_SH.format(data="/mnt/nvme/sft/train.json", model="deepseek-ai/deepseek-coder-6.7b-base")
    result = _audit(files)
    assert "deepseek-ai/deepseek-coder-6.7b-base" in result.project.model_names, result.project.model_names
    assert "/mnt/nvme/sft/train.json" in _check(result, "I1").values.get("data_paths", []), _check(result, "I1")


def test_an_accumulation_divided_by_two_literals_is_computed_and_an_unset_one_is_unknown() -> None:
    files = {"sft/finetune.py": _OPENCODER_FT,
             "sft/scripts/stage1_example.sh": _OPENCODER_SH.format(data="/data/sft.json", model="deepseek-ai/deepseek-coder-6.7b-base")}
    result = _audit(files)
    c5 = _check(result, "C5")
    assert c5.status.value == "used" and "4096" in c5.detail and "$WORLD_SIZE" in c5.detail, c5
    g2 = _check(result, "G2")
    assert g2.values.get("global_batch") == 4096, g2.values
    # a value the script never sets is passed, not HF's default of 1: not judged
    files["sft/scripts/stage1_example.sh"] = files["sft/scripts/stage1_example.sh"].replace(
        "GRAD_ACCU=$(($BATCH_SIZE / $WORLD_SIZE / $MICRO_BATCH_SIZE / 8))\n", "")
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "n/a" and "$GRAD_ACCU" in c5.detail, c5
    # control: a launch that passes nothing keeps HF's default
    files["sft/scripts/stage1_example.sh"] = files["sft/scripts/stage1_example.sh"].replace(
        "    --gradient_accumulation_steps $GRAD_ACCU \\\n", "")
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "unused" and "default" in c5.detail, c5


# --- PMC-LLaMA and ToolBench: the transformers release the project runs, from its README or its requirements ----------------------

_PMC_TRAIN = ("import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
              "    (training_args,) = parser.parse_args_into_dataclasses()\n"
              "    model = transformers.LlamaForCausalLM.from_pretrained('decapoda-research/llama-7b-hf')\n"
              "    trainer = transformers.Trainer(model=model, args=training_args)\n    trainer.train()\n\n\n"
              "if __name__ == '__main__':\n    train()\n")
_PMC_SH = ("torchrun --nproc_per_node=8 --master_port 18904 training.py \\\n    --bf16 True \\\n    --output_dir ./out \\\n"
           "    --per_device_train_batch_size 2 \\\n    --gradient_accumulation_steps 8 \\\n"
           "    --fsdp \"full_shard auto_wrap\" \\\n    --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer'\n")
_PMC_README = ("# PMC-LLaMA\n\n## Environment\nSimply set up the required environment as following:\n```bash\n"
               "conda install pytorch==1.13.0 torchvision==0.14.0 torchaudio==0.13.0 pytorch-cuda=11.6 -c pytorch -c nvidia\n"
               "pip install transformers={hf}, sentencepiece, datasets\n```\n")


def test_the_readme_install_line_is_the_release_the_project_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from .claims import scan_cold_and_cached

    files = {"Pretrain/training.py": _PMC_TRAIN, "Pretrain/training.sh": _PMC_SH, "README.md": _PMC_README.format(hf="4.28.1")}
    report = scan_cold_and_cached(tmp_path, files)
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["B3"]["status"] == "unused", checks["B3"]  # 4.28's Trainer predates its Accelerate backend
    assert checks["D1"]["status"] == "unused" and checks["D1"]["evidence"][0]["path"] == "README.md", checks["D1"]
    d5 = next(r for r in report["recommendations"] if r["check"] == "D5")
    assert d5["text"].startswith("Needs PyTorch 2.1.2+ (README.md:6 pins `torch==1.13.0`"), d5["text"]
    assert "`use_liger_kernel` needs transformers 4.45+ (README.md:7 pins `transformers==4.28.1`" in d5["text"], d5["text"]
    # control: a README that installs a current release leaves the advice as it is
    files["README.md"] = _PMC_README.format(hf="4.46.0").replace("pytorch==1.13.0", "pytorch==2.4.0")
    result = _audit(files)
    assert _check(result, "B3").status.value == "used" and _check(result, "D1").status.value == "partial"
    from reports.advice import build_plan

    d5t = next(r for r in build_plan(result).recommendations if r.check == "D5").text
    assert "needs transformers" not in d5t and "Needs PyTorch" not in d5t, d5t


def test_advice_on_a_requirements_pin_says_what_to_raise_first() -> None:
    from reports.advice import build_plan

    files = {"toolbench/train/train.py": _PMC_TRAIN, "scripts/train.sh": _PMC_SH.replace("training.py", "toolbench/train/train.py"),
             "requirements.txt": "accelerate==0.20.3\ntransformers==4.28.1\ntorch>=2.0\n"}
    recs = {r.check: r.text for r in build_plan(_audit(files)).recommendations}
    assert recs["D5"].startswith("`use_liger_kernel` needs transformers 4.45+ (requirements.txt:2 pins `transformers==4.28.1`"), recs["D5"]
    assert recs["F7"].startswith("`DataCollatorWithFlattening` needs transformers 4.44+"), recs["F7"]
    files["requirements.txt"] = "accelerate==1.1.0\ntransformers==4.46.0\ntorch>=2.0\n"
    recs = {r.check: r.text for r in build_plan(_audit(files)).recommendations}
    assert "needs transformers" not in recs["D5"] and "needs transformers" not in recs.get("F7", ""), recs


# --- Platypus: LoRA on a 13B base loaded in 8-bit -----------------------------------------------------------------------------------

_PLATYPUS_FT = ("import torch\nimport transformers\nfrom peft import LoraConfig, get_peft_model, prepare_model_for_int8_training\n\n\n"
                "def train(base_model: str = '', micro_batch_size: int = 4):\n"
                "    model = transformers.LlamaForCausalLM.from_pretrained(\n        base_model,\n        load_in_8bit={bits},\n"
                "        torch_dtype=torch.float16,\n    )\n    model = {prepare}(model)\n"
                "    model = get_peft_model(model, LoraConfig(r=16, target_modules=['gate_proj', 'down_proj', 'up_proj']))\n"
                "    trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(\n"
                "        per_device_train_batch_size=micro_batch_size, fp16=True, output_dir='out'))\n    trainer.train()\n\n\n"
                "if __name__ == '__main__':\n    train()\n")
_PLATYPUS_SH = ("torchrun --nproc_per_node=2 --master_port=1234 finetune.py \\\n    --base_model meta-llama/Llama-2-13b-hf \\\n"
                "    --micro_batch_size 1\n")


def test_a_lora_base_loaded_in_8_bit_is_said_so() -> None:
    from reports.advice import build_plan

    files = {"finetune.py": _PLATYPUS_FT.format(bits="True", prepare="prepare_model_for_int8_training"), "fine-tuning.sh": _PLATYPUS_SH,
             "medalpaca/configs/supported_models.json": '{\n  "alpaca-lora": {\n    "load_in_8bit": "True"\n  }\n}\n'}
    result = _audit(files)
    g4 = _check(result, "G4")
    assert g4.values.get("base_bits") == 8 and "8-bit base" in g4.detail and "finetune.py:" in g4.detail, g4
    why = {w.check: w.reason for w in build_plan(result).withheld}
    assert "~13 GB in int8" in why["A2"], why
    assert any("bitsandbytes 8-bit" in r and "finetune.py:" in r for r in result.project.bottleneck_reasons), result.project.bottleneck_reasons
    # control: the same LoRA run on a 16-bit base; a served-model list's per-entry setting is no training base
    files["finetune.py"] = _PLATYPUS_FT.format(bits="False", prepare="prepare_model_for_kbit_training")
    result = _audit(files)
    g4 = _check(result, "G4")
    assert "base_bits" not in g4.values and "8-bit" not in g4.detail, g4
    assert "~26 GB in BF16" in {w.check: w.reason for w in build_plan(result).withheld}["A2"]
    assert not any("bitsandbytes" in r for r in result.project.bottleneck_reasons), result.project.bottleneck_reasons
    # control (LLM-Adapters): PEFT's int8 preparation beside a load whose 8-bit switch is an option off by default
    files["finetune.py"] = _PLATYPUS_FT.format(bits="load_8bit", prepare="prepare_model_for_int8_training").replace(
        "micro_batch_size: int = 4):", "micro_batch_size: int = 4, load_8bit: bool = False):")
    g4 = _check(_audit(files), "G4")
    assert "base_bits" not in g4.values and "8-bit" not in g4.detail, g4


def test_an_evaluation_harness_named_in_camel_case_is_evaluation() -> None:
    backend = ("from vllm import LLM, SamplingParams\n\n\nclass VllmGenerator:\n    def __init__(self, model_name):\n"
               "        self.model = LLM(model=model_name, tensor_parallel_size=1, max_model_len=2048)\n\n"
               "    def generate(self, prompts):\n        return self.model.generate(prompts, SamplingParams(temperature=0))\n")
    main = ("from backend.vllm import VllmGenerator\n\n\ndef main():\n    gen = VllmGenerator('model')\n    print(gen.generate(['x']))\n\n\n"
            "if __name__ == '__main__':\n    main()\n")
    files = {"sft/finetune.py": _OPENCODER_FT, "OpenCodeEval/src/backend/vllm.py": backend, "OpenCodeEval/src/main.py": main,
             "sft/scripts/stage1_example.sh": _OPENCODER_SH.format(data="/data/sft.json", model="deepseek-ai/deepseek-coder-6.7b-base")}
    result = _audit(files)
    assert result.roles.by_path["OpenCodeEval/src/backend/vllm.py"] == "eval", result.roles.by_path
    assert _check(result, "J5").status.value == "n/a", _check(result, "J5")
    # control: the same serving code under a folder of the project's own is its inference path
    files = {k.replace("OpenCodeEval/", "opencoder_serve/"): v for k, v in files.items()}
    result = _audit(files)
    assert _check(result, "J5").status.value == "used", _check(result, "J5")


# --- Magicoder: a deduplication script saves raw text with save_to_disk --------------------------------------------------------------

_MAGI_DEDUP = ("import re\nfrom datasets import load_dataset\n\nNON_ALPHA = re.compile('[^A-Za-z_0-9]')\n\n\n"
               "def get_tokens(code):\n    return {{t for t in NON_ALPHA.split(code) if len(t.strip()) > 0}}\n\n\n"
               "def main(data_files, output):\n    ds = load_dataset('json', data_files=data_files, split='train')\n"
               "    ds = ds.map(lambda x: {{'tokens': list(get_tokens(x['response']))}}, num_proc=16)\n{extra}"
               "    ds.save_to_disk(output)\n")
_MAGI_TRAIN = ("import transformers\nfrom datasets import load_dataset\n\n\ndef train():\n"
               "    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
               "    (training_args,) = parser.parse_args_into_dataclasses()\n"
               "    dataset = load_dataset('json', data_files='data.jsonl', split='train')\n"
               "    model = transformers.AutoModelForCausalLM.from_pretrained('deepseek-ai/deepseek-coder-6.7b-base')\n"
               "    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=dataset)\n    trainer.train()\n\n\n"
               "if __name__ == '__main__':\n    train()\n")


def test_a_save_of_raw_records_is_no_offline_tokenization() -> None:
    files = {"src/magicoder/minhash_deduplication.py": _MAGI_DEDUP.format(extra=""), "src/magicoder/train.py": _MAGI_TRAIN}
    f6 = _check(_audit(files), "F6")
    assert f6.status.value != "used" and not any(e.path.endswith("minhash_deduplication.py") for e in f6.evidence), f6
    # control: a script that tokenizes before it saves prepares the data ahead
    files["src/magicoder/minhash_deduplication.py"] = _MAGI_DEDUP.format(
        extra="    tokenizer = transformers.AutoTokenizer.from_pretrained('deepseek-ai/deepseek-coder-6.7b-base')\n"
              "    ds = ds.map(lambda x: tokenizer(x['response']), batched=True)\n").replace("import re\n", "import re\nimport transformers\n")
    f6 = _check(_audit(files), "F6")
    assert f6.status.value == "used" and any(e.path.endswith("minhash_deduplication.py") for e in f6.evidence), f6
    # control: the training path's own save stores what its pipeline prepared (axolotl's ``utils/data/shared.py``)
    files = {"src/magicoder/minhash_deduplication.py": _MAGI_DEDUP.format(extra=""),
             "src/magicoder/shared.py": "def save_prepared(dataset, path):\n    dataset.save_to_disk(path)\n",
             "src/magicoder/train.py": _MAGI_TRAIN.replace("from datasets import load_dataset\n",
                                                           "from datasets import load_dataset\nfrom magicoder.shared import save_prepared\n")
             .replace("    model = ", "    save_prepared(dataset, 'prepared')\n    model = ")}
    f6 = _check(_audit(files), "F6")
    assert any(e.path == "src/magicoder/shared.py" for e in f6.evidence), f6


def test_of_two_trainer_scripts_the_documented_one_is_cited(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from .claims import scan_cold_and_cached

    readme = "# Magicoder\n\n```bash\naccelerate launch -m magicoder.train \\\n  --bf16 True \\\n  --logging_steps 1\n```\n"
    files = {"src/magicoder/train.py": _MAGI_TRAIN, "experiments/train_comment_code_pairs.py": _MAGI_TRAIN, "README-DEV.md": readme}
    report = scan_cold_and_cached(tmp_path, files)
    checks = {c["id"]: c for c in report["checks"]}
    for cid in ("F1", "F3"):
        assert [e["path"] for e in checks[cid]["evidence"]] == ["src/magicoder/train.py"], checks[cid]
    python = [r["snippet_where"] for r in report["recommendations"] if r.get("snippet_target") == "python"]
    assert python and all(w.startswith("src/magicoder/train.py") for w in python), python
    # control: a README that documents the other script makes that one the run cited
    files["README-DEV.md"] = readme.replace("-m magicoder.train", "experiments/train_comment_code_pairs.py")
    assert [e.path for e in _check(_audit(files), "F1").evidence] == ["experiments/train_comment_code_pairs.py"]


def test_a_4_bit_base_is_a_step_zero_reason_only_for_the_projects_own_run() -> None:
    recipe = ("base_model: NousResearch/Llama-2-{size}b-hf\nload_in_4bit: true\nadapter: qlora\nlora_r: 32\nsequence_len: 4096\n"
              "micro_batch_size: 2\n")
    files = {"qlora.yml": recipe.format(size=7), "train.sh": "accelerate launch -m axolotl.cli.train qlora.yml\n",
             "requirements.txt": "axolotl==0.6.0\n"}
    result = _audit(files)
    assert _check(result, "G4").values.get("base_bits") == 4
    assert any("bitsandbytes 4-bit" in r for r in result.project.bottleneck_reasons), result.project.bottleneck_reasons
    # control: one of a framework's many example recipes is no run of the project's
    files = {**{f"examples/llama-{s}/qlora.yml": recipe.format(size=s) for s in (7, 13, 70)},
             "train.sh": "accelerate launch -m axolotl.cli.train \"$CONFIG\"\n", "requirements.txt": "axolotl==0.6.0\n"}
    result = _audit(files)
    assert _check(result, "G4").values.get("base_bits") == 4
    assert not any("bitsandbytes" in r for r in result.project.bottleneck_reasons), result.project.bottleneck_reasons


def test_a_trainer_module_a_launched_script_imports_is_launched() -> None:
    from reports.advice import build_plan

    files = {"toolbench/train/train.py": _MAGI_TRAIN,
             "toolbench/train/train_mem.py": "from toolbench.train.train import train\n\nif __name__ == '__main__':\n    train()\n",
             "toolbench/train/train_lora.py": _MAGI_TRAIN,
             "scripts/train_toolllama.sh": "torchrun --nproc_per_node=2 toolbench/train/train_mem.py --bf16 True\n",
             "scripts/train_toolllama_lora.sh": "deepspeed toolbench/train/train_lora.py --bf16 True\n"}
    plan = build_plan(_audit(files))
    where = [r.snippet.where for r in plan.recommendations if r.snippet is not None and r.snippet.target == "python"]
    assert where and all(w.startswith("toolbench/train/train.py") for w in where), where


# --- round 67 -----------------------------------------------------------------------------------------------------------------------


def test_pytorch_below_2_1_1_means_eager_attention_by_default() -> None:
    # FireAct: requirements.txt pins torch==2.0.1; transformers picks SDPA by default only from PyTorch 2.1.1
    files = {"finetune/llama_lora/finetune.py": _PLATYPUS_FT.format(bits="False", prepare="prepare_model_for_kbit_training"),
             "finetune/llama_lora/run.sh": _PLATYPUS_SH, "requirements.txt": "torch==2.0.1\ntransformers\npeft\n"}
    d1 = _check(_audit(files), "D1")
    assert d1.status.value == "unused" and "PyTorch 2.0.1" in d1.detail and d1.evidence[0].path == "requirements.txt", d1
    # control: PyTorch 2.1.2 runs transformers' SDPA default (partial: nothing asks for FlashAttention-2)
    files["requirements.txt"] = "torch==2.1.2\ntransformers\npeft\n"
    assert _check(_audit(files), "D1").status.value == "partial"
    # control (EAGLE): exact pins of one folder that disagree (setup.py 2.0.1, requirements.txt 2.6.0) cap nothing
    files["requirements.txt"] = "torch==2.6.0\ntransformers>=4.47.0\n"
    files["setup.py"] = "from setuptools import setup\n\nsetup(name='eagle-llm', install_requires=['torch==2.0.1'])\n"
    assert _check(_audit(files), "D1").status.value == "partial"


def test_a_training_folders_readme_runs_its_commands_from_the_folder_it_enters() -> None:
    # FireAct: finetune/README.md runs ``cd finetune/llama_full`` then ``torchrun ... finetune.py --fsdp ...``; the repository
    # ships three finetune.py and no launch of its own
    readme = ("# Fine-tune\n\n#### Llama Full Model\n\n```\ncd finetune/llama_full\ntorchrun --nnodes 1 --nproc_per_node 4 finetune.py \\\n"
              "    --model_name_or_path meta-llama/Llama-2-7b-chat-hf \\\n    --bf16 True \\\n    --per_device_train_batch_size 4 \\\n"
              "    --gradient_accumulation_steps 8 \\\n    --fsdp \"full_shard auto_wrap\" \\\n"
              "    --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer'\n```\n")
    files = {"finetune/llama_full/finetune.py": _ALPACA_TRAIN, "finetune/llama_lora/finetune.py": _ALPACA_TRAIN,
             "finetune/gpt/finetune.py": "import openai\n\nopenai.FineTuningJob.create(training_file='x', model='gpt-3.5-turbo')\n",
             "finetune/README.md": readme, "README.md": "# FireAct\n\nSee finetune/README.md.\n"}
    result = _audit(files)
    for cid in ("A2", "B5", "C5"):
        c = _check(result, cid)
        assert c.status.value == "used" and c.evidence[0].path == "finetune/README.md", (cid, c)
    # control: an example folder's README documents that example, not the project's run
    files["examples/fsdp/README.md"] = files.pop("finetune/README.md").replace("cd finetune/llama_full", "cd examples/fsdp")
    files["examples/fsdp/finetune.py"] = _ALPACA_TRAIN
    assert _check(_audit(files), "A2").status.value != "used"


_OWN_SFT = ("from dataclasses import dataclass\nimport torch\nfrom accelerate import Accelerator\n\n\n@dataclass\nclass SFTConfig:\n"
            "    learning_rate: float = 3e-4\n    grad_accum_steps: int = 2\n\n\nclass SFTTrainer:\n"
            "    def __init__(self, model, dataset, config: SFTConfig):\n        self.accelerator = Accelerator()\n"
            "        self.model, self.config = model, config\n        self.loader = torch.utils.data.DataLoader(dataset, batch_size=8)\n"
            "        self.optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)\n\n"
            "    def __call__(self):\n        for batch in self.loader:\n            loss = self.model(batch)\n"
            "            self.accelerator.backward(loss)\n            self.optimizer.step()\n            self.optimizer.zero_grad()\n\n\n"
            "def self_reward(model, dataset):\n    config = SFTConfig(learning_rate=1e-4)\n    trainer = SFTTrainer(model, dataset, config)\n"
            "    trainer()\n")


def test_a_projects_own_classes_named_like_trls_are_not_trls() -> None:
    from reports.advice import build_plan

    files = {"self_rewarding_lm_pytorch/self_rewarding_lm_pytorch.py": _OWN_SFT}
    result = _audit(files)
    f6 = _check(result, "F6")
    assert "training framework tokenizes" not in f6.detail, f6
    targets = {r.snippet.target for r in build_plan(result).recommendations if r.snippet is not None}
    assert "hf-args" not in targets, targets
    # control: TRL's classes, imported, are the trainer and its arguments
    files["train.py"] = ("from trl import SFTConfig, SFTTrainer\n\n\ndef main(model, ds):\n"
                         "    trainer = SFTTrainer(model=model, args=SFTConfig(output_dir='out'), train_dataset=ds)\n"
                         "    trainer.train()\n\n\nif __name__ == '__main__':\n    main(None, None)\n")
    result = _audit(files)
    assert "training framework tokenizes" in _check(result, "F6").detail
    assert "hf-args" in {r.snippet.target for r in build_plan(result).recommendations if r.snippet is not None}


_ACCEL_LOOP = ("import torch\nfrom accelerate import Accelerator\n\n\ndef main():\n"
               "    accelerator = Accelerator(gradient_accumulation_steps=4)\n"
               "    model = torch.nn.Linear(8, 8)\n    optimizer = torch.optim.AdamW(model.parameters())\n"
               "    loader = torch.utils.data.DataLoader(range(64), batch_size=8)\n"
               "    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)\n"
               "    for batch in loader:\n        with accelerator.accumulate(model):\n            loss = model(batch).sum()\n"
               "            accelerator.backward(loss)\n            optimizer.step()\n            optimizer.zero_grad()\n\n\n"
               "if __name__ == '__main__':\n    main()\n")


def test_an_accelerator_left_to_its_launch_is_not_judged_for_precision() -> None:
    # Lemur: xchat/train/train.py builds Accelerator() without mixed_precision, and the repository ships no launch
    files = {"xchat/train/train.py": _ACCEL_LOOP}
    c1 = _check(_audit(files), "C1")
    assert c1.status.value == "n/a" and "--mixed_precision" in c1.detail, c1
    # controls: a plain python launch runs it in FP32; accelerate launch --mixed_precision bf16 runs it in BF16
    files["scripts/train.sh"] = "python xchat/train/train.py\n"
    assert _check(_audit(files), "C1").status.value == "unused"
    files["scripts/train.sh"] = "accelerate launch --mixed_precision bf16 --num_processes 8 xchat/train/train.py\n"
    assert _check(_audit(files), "C1").status.value == "used"
    # control (pytorch_accelerated, lm-buddy): a library's trainer class keeps Accelerate's default for its users: FP32
    lib = ("import torch\nfrom accelerate import Accelerator\n\n\nclass Trainer:\n    def __init__(self, model, optimizer):\n"
           "        self._accelerator = Accelerator()\n        self.model, self.optimizer = model, optimizer\n\n"
           "    def train(self, loader):\n        for batch in loader:\n            loss = self.model(batch).sum()\n"
           "            self._accelerator.backward(loss)\n            self.optimizer.step()\n")
    assert _check(_audit({"mylib/trainer.py": lib}), "C1").status.value == "unused"


def test_a_single_process_run_with_device_map_auto_splits_layers_not_data() -> None:
    # baize: ``device_map = "auto"`` (one device per rank only under DDP), ``python finetune.py 7b 32 0.0002 alpaca``
    train = ("import os\nimport transformers\n\ndevice_map = 'auto'\nworld_size = int(os.environ.get('WORLD_SIZE', 1))\n"
             "if world_size != 1:\n    device_map = {'': int(os.environ.get('LOCAL_RANK') or 0)}\n"
             "model = transformers.LlamaForCausalLM.from_pretrained('decapoda-research/llama-7b-hf', load_in_8bit=True,\n"
             "                                                      device_map=device_map)\n"
             "trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(output_dir='out'))\n"
             "trainer.train()\n")
    files = {"finetune.py": train, "scripts/train.sh": "python finetune.py 7b 32 0.0002 alpaca\n"}
    a1 = _check(_audit(files), "A1")
    assert 'device_map="auto" at finetune.py:8' in a1.detail and "DataParallel" not in a1.detail, a1
    # control: a model placed on one device is what the Trainer would wrap in DataParallel
    files["finetune.py"] = train.replace("device_map = 'auto'", "device_map = {'': 0}")
    assert "nn.DataParallel" in _check(_audit(files), "A1").detail


def test_samples_padded_to_max_length_are_said_so_and_advised_against() -> None:
    from reports.advice import build_plan

    # baize (and FastChat's train.py): ``tokenizer(prompt, truncation=True, max_length=CUTOFF_LEN + 1, padding="max_length")``
    train = ("import transformers\nfrom datasets import load_dataset\n\ntokenizer = transformers.LlamaTokenizer.from_pretrained('llama')\n\n\n"
             "def tokenize(prompt):\n    result = tokenizer(\n        prompt,\n        truncation=True,\n        max_length=513,\n"
             "        padding={pad},\n    )\n"
             "    return {{'input_ids': result['input_ids'][:-1]}}\n\n\n"
             "data = load_dataset('json', data_files='data.json')['train'].map(lambda x: tokenize(x['text']))\n"
             "model = transformers.LlamaForCausalLM.from_pretrained('decapoda-research/llama-7b-hf')\n"
             "trainer = transformers.Trainer(model=model, train_dataset=data, args=transformers.TrainingArguments(output_dir='out'))\n"
             "trainer.train()\n")
    files = {"finetune.py": train.format(pad='"max_length"'), "scripts/train.sh": "python finetune.py\n"}
    result = _audit(files)
    f7 = _check(result, "F7")
    # (cited at the keyword's own line of the call written over several lines)
    assert f7.status.value == "unused" and 'padding="max_length" at finetune.py:12' in f7.detail, f7
    assert [(e.path, e.line) for e in f7.evidence] == [("finetune.py", 12)], f7.evidence
    rec = next(r for r in build_plan(result).recommendations if r.check == "F7")
    assert "drop `padding=\"max_length\"`" in rec.text, rec.text
    # control: per-batch padding leaves the usual packing advice
    files["finetune.py"] = train.format(pad="False")
    result = _audit(files)
    assert "max_length" not in _check(result, "F7").detail
    assert "drop `padding" not in next(r for r in build_plan(result).recommendations if r.check == "F7").text


def test_a_4_bit_base_chosen_by_a_bits_option_is_qlora() -> None:
    # Dromedary (artidoro/qlora's shape): ``BitsAndBytesConfig(load_in_4bit=args.bits == 4, ...)``, launched with ``--bits 4``
    model = ("import transformers\nfrom peft import LoraConfig, get_peft_model\n\n\ndef get_model(args):\n"
             "    model = transformers.AutoModelForCausalLM.from_pretrained(\n        args.model_name_or_path,\n"
             "        quantization_config=transformers.BitsAndBytesConfig(\n            load_in_4bit=args.bits == 4,\n"
             "            load_in_8bit=args.bits == 8,\n            bnb_4bit_quant_type='nf4',\n        ),\n    )\n"
             "    return get_peft_model(model, LoraConfig(r=64))\n")
    train = ("import transformers\nfrom qlora_model import get_model\n\n\ndef train():\n"
             "    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
             "    (args,) = parser.parse_args_into_dataclasses()\n    model = get_model(args)\n"
             "    transformers.Trainer(model=model, args=args).train()\n\n\nif __name__ == '__main__':\n    train()\n")
    files = {"training/qlora_model.py": model, "training/finetune_qlora.py": train,
             "training/scripts/finetune_70b.sh": ("torchrun --nproc_per_node=8 training/finetune_qlora.py \\\n"
                                                  "    --model_name_or_path meta-llama/Llama-2-70b-hf \\\n    --bits {bits} \\\n    --bf16 True\n")}
    files["training/scripts/finetune_70b.sh"] = files["training/scripts/finetune_70b.sh"].format(bits=4)
    g4 = _check(_audit(files), "G4")
    assert g4.values.get("finetuning") == "qlora" and g4.values.get("base_bits") == 4, g4
    # control: the same code launched with --bits 16 loads a 16-bit base
    files["training/scripts/finetune_70b.sh"] = files["training/scripts/finetune_70b.sh"].replace("--bits 4", "--bits 16")
    g4 = _check(_audit(files), "G4")
    assert g4.values.get("finetuning") == "lora" and "base_bits" not in g4.values, g4
