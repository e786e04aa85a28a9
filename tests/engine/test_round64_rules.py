"""Round 64 (issue #9): claims of more public repositories (aguvis, octopack, VisionLLM, llama3-Chinese-chat, CPM-Bee,
Fengshenbang-LM, MMR1), read claim by claim. Each test is one false claim of those reports, made from the shape of the real
code, with a control that keeps the rule honest."""

from __future__ import annotations

import json
from pathlib import Path

from accel_audit.cli import main
from checks.project import documented_multi_node
from reports.json_report import recommendations

from .claims import LLAVA_TRAIN as _LLAVA_TRAIN
from .claims import audit as _audit
from .claims import check as _check
from .claims import scan_cold_and_cached

# --- aguvis: a placeholder sentence passed as ``--model_path "$MODEL_PATH"`` ----------------------------------------------------

_AGUVIS_TRAIN_SH = ("torchrun --nproc_per_node 8 train.py \\\n    --model_name_or_path Qwen/Qwen2-VL-7B-Instruct \\\n"
                    "    --bf16 True \\\n    --deepspeed ./scripts/zero3.json \\\n    --per_device_train_batch_size 2\n")
_AGUVIS_INFER_SH = ('MODEL_PATH="{model}"\nIMAGE_PATH="src/aguvis/serve/examples/AndroidControl.png"\n\n'
                    'python src/aguvis/serve/cli.py \\\n    --model_path "$MODEL_PATH" \\\n    --image_path "$IMAGE_PATH" \\\n'
                    '    --temperature 0\n')


def test_a_quoted_variable_is_one_word_and_a_placeholder_sentence_names_no_model() -> None:
    files = {"train.py": _LLAVA_TRAIN, "scripts/train.sh": _AGUVIS_TRAIN_SH,
             "scripts/inference.sh": _AGUVIS_INFER_SH.format(model="Please provide the path to the model"),
             "src/aguvis/serve/cli.py": "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--model_path')\n"}
    result = _audit(files)
    assert result.project.model_names == ["Qwen/Qwen2-VL-7B-Instruct"], result.project.model_names
    setting = next(s for s in [*result.facts.settings("model_path"), *result.context.settings("model_path")] if s.source == "launcher")
    assert setting.value == "Please provide the path to the model", setting
    # control: a quoted variable holding a model id is still that model's name
    files["scripts/inference.sh"] = _AGUVIS_INFER_SH.format(model="OpenGVLab/InternVL2-8B")
    control = _audit(files)
    setting = next(s for s in [*control.facts.settings("model_path"), *control.context.settings("model_path")] if s.source == "launcher")
    assert setting.value == "OpenGVLab/InternVL2-8B", setting


def test_a_quoted_flag_list_is_still_read_as_its_flags() -> None:
    files = {"train.py": _LLAVA_TRAIN,
             "run.sh": 'ARGS="--bf16 True --gradient_accumulation_steps 4"\ntorchrun --nproc_per_node 8 train.py "$ARGS"\n'}
    c5 = _check(_audit(files), "C5")
    assert c5.status.value == "used" and "4" in c5.detail, c5.detail


# --- octopack: QuixBugs test cases, JSON Lines of arrays in small ``.json`` files ----------------------------------------------


def test_small_json_lines_files_are_skipped_as_data_not_listed_as_unparseable(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    cases = repo / "evaluation" / "QuixBugs" / "json_testcases"
    cases.mkdir(parents=True)
    (cases / "bitcount.json").write_text("[[127], 7]\n[[128], 1]\n[[3005], 9]\n")
    (cases / "config.json").write_text('{\n  "train_batch_size": 8,\n  "bf16": {"enabled": true}\n}\n')
    (repo / "train.py").write_text(_LLAVA_TRAIN)
    out = tmp_path / "report.json"
    assert main(["scan", str(repo), "--format", "json", "-o", str(out)]) == 0
    report = json.loads(out.read_text())
    skipped = {s["path"]: s["reason"] for s in report["scan"]["skipped"]}
    assert skipped.get("evaluation/QuixBugs/json_testcases/bitcount.json", "").startswith("data: JSON Lines"), skipped
    assert "evaluation/QuixBugs/json_testcases/config.json" not in skipped  # control: one JSON value is a config
    assert not report["scan"].get("parse_errors"), report["scan"].get("parse_errors")


# --- VisionLLM: a whole mmcv checkout whose setup.py picks its name by a build switch -------------------------------------------

_MMCV_SETUP = ("import os\nfrom setuptools import setup\n\nsetup(\n"
               "    name='mmcv' if os.getenv('MMCV_WITH_OPS', '0') == '0' else 'mmcv-full',\n    version='1.7.0',\n)\n")
_IPU_LOADER = ("from torch.utils.data import DataLoader\n\n\nclass IPUDataLoader(DataLoader):\n"
               "    def __init__(self, dataset, batch_size=1, num_workers=0):\n"
               "        super().__init__(dataset, batch_size=batch_size, num_workers=num_workers)\n")
_VLLM_TRAIN = ("import mmcv\nimport transformers\n\n\ndef train():\n"
               "    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
               "    (training_args,) = parser.parse_args_into_dataclasses()\n"
               "    model = transformers.AutoModelForCausalLM.from_pretrained(training_args.output_dir)\n"
               "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n")


def test_a_library_checkout_named_by_a_build_switch_is_a_library_copy() -> None:
    files = {"VisionLLMv2/visionllmv2/train/train.py": _VLLM_TRAIN,
             "VisionLLMv2/scripts/train.sh": "torchrun --nproc_per_node 8 visionllmv2/train/train.py --bf16 True\n",
             "VisionLLMv2/mmcv/setup.py": _MMCV_SETUP, "VisionLLMv2/mmcv/LICENSE": "Apache License\n",
             "VisionLLMv2/mmcv/mmcv/__init__.py": "from .version import __version__\nfrom .device.ipu.dataloader import IPUDataLoader\n",
             "VisionLLMv2/mmcv/mmcv/version.py": "__version__ = '1.7.0'\n",
             "VisionLLMv2/mmcv/mmcv/device/__init__.py": "", "VisionLLMv2/mmcv/mmcv/device/ipu/__init__.py": "",
             "VisionLLMv2/mmcv/mmcv/device/ipu/dataloader.py": _IPU_LOADER}
    result = _audit(files)
    assert result.roles.library_copies == ["VisionLLMv2/mmcv/mmcv"], result.roles.library_copies
    assert result.roles.by_path["VisionLLMv2/mmcv/mmcv/device/ipu/dataloader.py"] == "vendored", result.roles.why
    assert not any(e.path.startswith("VisionLLMv2/mmcv/") for e in _check(result, "F1").evidence)
    # control: a name the packaging computes some other way is not read (no distribution known, no copy claimed)
    files["VisionLLMv2/mmcv/setup.py"] = _MMCV_SETUP.replace(
        "'mmcv' if os.getenv('MMCV_WITH_OPS', '0') == '0' else 'mmcv-full'", "os.environ['PKG_NAME']")
    assert _audit(files).roles.library_copies == []


# --- llama3-Chinese-chat: an inference-only project's chat script loads the model to generate -----------------------------------

_CHAT_DEMO = ("import torch\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\n\ndef load_model(path):\n"
              "    model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float16, device_map='auto'{attn})\n"
              "    return model.eval()\n\n\ndef main():\n    model = load_model('shareAI/llama3-Chinese-chat-8b')\n"
              "    tokenizer = AutoTokenizer.from_pretrained('shareAI/llama3-Chinese-chat-8b')\n    while True:\n"
              "        query = input('# User: ')\n        input_ids = tokenizer(query, return_tensors='pt').input_ids.to('cuda')\n"
              "        outputs = model.generate(input_ids=input_ids, max_new_tokens=512)\n"
              "        print(tokenizer.decode(outputs[0]))\n\n\nif __name__ == '__main__':\n    main()\n")


def test_an_inference_projects_chat_script_load_decides_its_attention() -> None:
    files = {"deploy/python/chat_demo.py": _CHAT_DEMO.format(attn=""), "README.md": "# llama3 Chinese chat\n"}
    result = _audit(files)
    assert not result.project.does_training
    d1 = _check(result, "D1")
    assert d1.status.value == "partial" and "without attn_implementation" in d1.detail, d1
    assert any(e.path == "deploy/python/chat_demo.py" for e in d1.evidence)
    # control: the same load asking for eager attention is what the project chose
    files["deploy/python/chat_demo.py"] = _CHAT_DEMO.format(attn=", attn_implementation='eager'")
    assert _check(_audit(files), "D1").status.value == "unused"


# --- aguvis: a ZeRO-3 config's ``"bf16": {"enabled": "auto"}`` under a launch's ``--bf16 True`` ---------------------------------

_ZERO3_AUTO = ('{\n  "fp16": {\n    "enabled": "auto"\n  },\n  "bf16": {\n    "enabled": "auto"\n  },\n'
               '  "zero_optimization": {\n    "stage": 3,\n    "overlap_comm": false\n  },\n'
               '  "train_micro_batch_size_per_gpu": "auto"\n}\n')
_AGUVIS_MULTI = ("torchrun --nproc_per_node 8 --nnodes 4 --node_rank ${{RANK}} --master_addr ${{MASTER_ADDR}} train.py \\\n"
                 "    --model_name_or_path Qwen/Qwen2-VL-7B-Instruct \\\n    --deepspeed ./scripts/zero3.json \\\n"
                 "    --{prec} True \\\n    --per_device_train_batch_size 2\n")


def test_deepspeed_auto_precision_filled_by_the_launch_reduces_gradients_in_it() -> None:
    files = {"train.py": _LLAVA_TRAIN, "scripts/zero3.json": _ZERO3_AUTO, "scripts/train.sh": _AGUVIS_MULTI.format(prec="bf16")}
    result = _audit(files)
    e3 = _check(result, "E3")
    assert e3.status.value == "partial" and "reduced in bf16" in e3.detail and "scripts/train.sh:4" in e3.detail, e3
    assert any(e.path == "scripts/train.sh" and e.key == "--bf16" for e in e3.evidence), e3.evidence
    # the advice does not offer communication_data_type bf16, which would change nothing
    rec = next(r for r in recommendations(result) if r["check"] == "E3")
    assert "changes nothing" in rec["text"] and '"communication_data_type"' not in rec["snippet"], rec
    assert rec["benefit"].startswith("about 4x less gradient traffic than the bf16 reduction already in place"), rec["benefit"]
    # control: no precision flag, so "auto" leaves the engine in fp32: uncompressed
    files["scripts/train.sh"] = _AGUVIS_MULTI.format(prec="tf32")
    assert _check(_audit(files), "E3").status.value == "unused"


# --- aguvis: one multi-node recipe, its node count given when the job starts, beside an inference CLI ----------------------------

_AGUVIS_RDZV = ('DISTRIBUTED_ARGS="\n    --nproc_per_node 8 \\\n    --nnodes {nodes} \\\n    --node_rank ${{RANK}} \\\n'
                '    --master_addr $MASTER_ADDR \\\n    --master_port $MASTER_PORT\n"\n\n'
                "torchrun $DISTRIBUTED_ARGS train.py \\\n    --deepspeed ./scripts/zero3.json \\\n"
                "    --model_name_or_path Qwen/Qwen2-VL-7B-Instruct \\\n    --bf16 True \\\n"
                "    --per_device_train_batch_size 2 \\\n    --gradient_accumulation_steps 1\n")


def test_a_job_set_node_count_is_cited_at_its_flag_and_the_batch_is_one_nodes() -> None:
    files = {"train.py": _LLAVA_TRAIN, "scripts/zero3.json": _ZERO3_AUTO, "scripts/train.sh": _AGUVIS_RDZV.format(nodes="${WORLD_SIZE}"),
             "scripts/inference.sh": _AGUVIS_INFER_SH.format(model="Qwen/Qwen2-VL-7B-Instruct"),
             "src/aguvis/serve/cli.py": "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--model_path')\n"}
    result = _audit(files)
    # the node count is the flag's line (3), not the command's (9)
    assert result.project.notes.get("nodes_source") == "scripts/train.sh:3", result.project.notes.get("nodes_source")
    # the inference CLI is no single-node training recipe beside the multi-node one
    assert not any("next to single-node ones" in r for r in result.project.bottleneck_reasons), result.project.bottleneck_reasons
    g2 = _check(result, "G2")
    assert "16 sequences per node" in g2.detail, g2.detail
    # control: a node count in the flag gives the global batch
    files["scripts/train.sh"] = _AGUVIS_RDZV.format(nodes="4")
    assert "estimated global batch 64" in _check(_audit(files), "G2").detail


# --- octopack: ``CUDA_LAUNCH_BLOCKING=1`` kept on purpose, the authors' comment above it -----------------------------------------

_OCTO_SH = ("#!/bin/bash\n#SBATCH --nodes=8\n\n{comment}export CUDA_LAUNCH_BLOCKING=1\n\n"
            "torchrun --nproc_per_node 8 --nnodes 8 train.py --bf16 True --per_device_train_batch_size 4\n")


def test_a_launch_blocking_switch_kept_as_a_workaround_is_not_called_a_forgotten_debug_switch() -> None:
    comment = "# do not remove or the training will hang and nodes will be lost w/o this workaround\n"
    files = {"train.py": _LLAVA_TRAIN, "training/finetune.sh": _OCTO_SH.format(comment=comment)}
    reasons = _audit(files).project.bottleneck_reasons
    reason = next(r for r in reasons if "CUDA_LAUNCH_BLOCKING=1" in r)
    assert "kept as a workaround" in reason and "remove it" not in reason, reason
    # control: with no such comment, or one that gives the debugging reason, it is the debugging switch left on
    for comment in ("", "# needed for readable stack traces\n"):
        files["training/finetune.sh"] = _OCTO_SH.format(comment=comment)
        reason = next(r for r in _audit(files).project.bottleneck_reasons if "CUDA_LAUNCH_BLOCKING=1" in r)
        assert "it is a debugging switch, remove it" in reason, reason


# --- octopack: Megatron-DeepSpeed's multitask launches name their indexed data through a weighted-split list ------------------

_MTF_SH = ("WEIGHTS_TRAIN=/data/finetune/train_data_paths.txt\n\n"
           "torchrun --nproc_per_node 8 finetune_mtf.py \\\n    --tensor-model-parallel-size 1 \\\n    --num-layers 24 \\\n"
           "    --hidden-size 2048 \\\n    --micro-batch-size 4 \\\n    --bf16 \\\n{data}    --seq-length 2048\n")


def test_megatron_weighted_split_data_is_the_indexed_format() -> None:
    files = {"training/finetune_santacoder.sh": _MTF_SH.format(data="    --train-weighted-split-paths-path $WEIGHTS_TRAIN \\\n")}
    f4 = _check(_audit(files), "F4")
    assert f4.status.value == "used", f4
    assert f4.evidence[0].line == 9 and f4.evidence[0].key == "--train-weighted-split-paths-path", f4.evidence
    # control: the same launch reading a JSON Lines file names no indexed data
    files["training/finetune_santacoder.sh"] = _MTF_SH.format(data="    --data-path /data/finetune/train.jsonl \\\n")
    assert _check(_audit(files), "F4").status.value == "unused"


# --- aguvis: Liger's fused layers beside HF's default unfused AdamW --------------------------------------------------------------


def test_unfused_optimizer_beside_liger_layers_does_not_claim_no_fused_layers() -> None:
    train = ("from liger_kernel.transformers import apply_liger_kernel_to_qwen2_vl\n" + _LLAVA_TRAIN).replace(
        "def train():\n", "apply_liger_kernel_to_qwen2_vl()\n\n\ndef train():\n", 1)
    files = {"train.py": train, "scripts/train.sh": _AGUVIS_TRAIN_SH}
    d6 = _check(_audit(files), "D6")
    assert d6.status.value == "unused" and "fused layers come from Liger Kernel (D5, train.py:" in d6.detail, d6.detail
    assert "no fused optimizer or fused layers" not in d6.detail
    # control: without Liger nothing is fused
    files["train.py"] = _LLAVA_TRAIN
    assert _check(_audit(files), "D6").detail.startswith("no fused optimizer or fused layers found")


# --- octopack: a Megatron checkout run from outside the repository; a tokenizer's repository is no model -----------------------

_XP3_SH = ("TOKENIZER_NAME_OR_PATH=bigscience/tokenizer\n\n"
           "torchrun --nproc_per_node 8 finetune_t0.py \\\n    --tensor-model-parallel-size 4 \\\n    --num-layers 30 \\\n"
           "    --hidden-size 4096 \\\n    --micro-batch-size 1 \\\n    --tokenizer-name-or-path $TOKENIZER_NAME_OR_PATH \\\n"
           "    --bf16\n")


def test_an_external_megatron_launch_names_the_framework_and_a_tokenizer_repo_names_no_model() -> None:
    files = {"training/sbatch_xp3commits.sh": _XP3_SH}
    result = _audit(files)
    assert "megatron" in result.project.frameworks, result.project.frameworks
    assert _check(result, "B2").status.value == "used"
    assert "bigscience/tokenizer" not in result.project.model_names, result.project.model_names
    # control: without the model-parallel flag two Megatron-like flags are no Megatron launch
    files["training/sbatch_xp3commits.sh"] = _XP3_SH.replace("    --tensor-model-parallel-size 4 \\\n", "")
    assert "megatron" not in _audit(files).project.frameworks


def test_a_megatron_checkpoint_tools_flags_are_not_the_training_runs() -> None:
    conv = ("python Megatron-LM/tools/checkpoint_util.py \\\n    --model-type GPT \\\n    --load-dir /ckpt/in \\\n"
            "    --save-dir /ckpt/out \\\n    --target-tensor-parallel-size 1 \\\n    --use-distributed-optimizer\n")
    files = {"training/finetune.sh": _MTF_SH.format(data="    --data-path /data/code_text_document \\\n"),
             "training/conv_lumi.sh": conv}
    result = _audit(files)
    assert not any(e.path == "training/conv_lumi.sh" for e in _check(result, "A3").evidence), _check(result, "A3")
    assert not any(e.path == "training/conv_lumi.sh" for e in _check(result, "D6").evidence), _check(result, "D6")
    # control: the training launch's own distributed optimizer is ZeRO-1
    files["training/finetune.sh"] = files["training/finetune.sh"].replace("    --bf16 \\\n", "    --bf16 \\\n    --use-distributed-optimizer \\\n")
    a3 = _check(_audit(files), "A3")
    assert a3.status.value == "used" and any(e.path == "training/finetune.sh" for e in a3.evidence), a3


# --- DB-GPT-Hub: a switch followed by a redirection of the command's output ------------------------------------------------------


def test_a_redirection_after_a_switch_is_not_its_value() -> None:
    sh = ("deepspeed --num_gpus 4 train.py \\\n    --deepspeed configs/ds_config.json \\\n"
          "    --per_device_train_batch_size 1 \\\n    --fp16 >> ${train_log}\n")
    files = {"train.py": _LLAVA_TRAIN, "scripts/train_sft.sh": sh,
             "configs/ds_config.json": '{\n  "fp16": {\n    "enabled": "auto"\n  },\n  "zero_optimization": {"stage": 2}\n}\n'}
    result = _audit(files)
    setting = next(s for s in result.facts.settings("fp16") if s.source == "launcher")
    assert setting.value is True, setting
    assert _check(result, "E3").status.value == "partial"
    # control: a flag with a value before the redirection keeps it
    files["scripts/train_sft.sh"] = sh.replace("--fp16 >>", "--fp16 True >>")
    assert next(s for s in _audit(files).facts.settings("fp16") if s.source == "launcher").value is True


# --- CPM-Bee: a README's ``torchrun --nnodes=${NNODES}`` under ``NNODES=1`` in the same code block --------------------------------

_CPM_README = ("# CPM-Bee\n\n## Pre-training\n\n```bash\n#! /bin/bash\n# 节点数\nNNODES={nodes}\nGPUS_PER_NODE=8\n\n"
               'OPTS=""\nOPTS+=" --model-config config/cpm-bee-10b.json"\n\n'
               'CMD="torchrun --nnodes=${{NNODES}} --nproc_per_node=${{GPUS_PER_NODE}} --rdzv_backend=c10d pretrain_cpm_bee.py ${{OPTS}}"\n'
               "$CMD\n```\n")


def test_a_documented_node_count_set_to_one_in_the_same_block_is_not_multi_node() -> None:
    files = {"train.py": _LLAVA_TRAIN, "run.sh": "torchrun --nproc_per_node 8 train.py --bf16 True\n",
             "README.md": _CPM_README.format(nodes="1")}
    result = _audit(files)
    assert not documented_multi_node(result.context) and not documented_multi_node(result.facts)
    assert _check(result, "E1").status.value == "n/a", _check(result, "E1")
    # control: four nodes in that block is a documented multi-node run
    files["README.md"] = _CPM_README.format(nodes="4")
    result = _audit(files)
    assert documented_multi_node(result.context) or documented_multi_node(result.facts)
    assert _check(result, "E1").status.value != "n/a"


# --- MMR1: Liger Kernel in requirements.txt only -----------------------------------------------------------------------------------


def test_liger_only_in_the_requirements_is_not_a_framework_of_the_project() -> None:
    files = {"train.py": _LLAVA_TRAIN, "requirements.txt": "torch\ntransformers\nliger-kernel\n",
             "scripts/train.sh": _AGUVIS_TRAIN_SH}
    result = _audit(files)
    assert "liger-kernel" not in result.project.frameworks, result.project.frameworks
    assert _check(result, "D5").status.value == "unused"
    # control: the Trainer's switch turns it on without an import
    files["scripts/train.sh"] = _AGUVIS_TRAIN_SH.replace("--bf16 True", "--bf16 True \\\n    --use_liger_kernel True")
    assert "liger-kernel" in _audit(files).project.frameworks


# --- Fengshenbang-LM: a CLIP trainer's 77-token text context beside LLM recipes --------------------------------------------------

_CLIP_PRETRAIN = ("import argparse\nimport torch\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
                  "    parser.add_argument('--seq_length', type=int, default={n})\n    args = parser.parse_args()\n"
                  "    model = build_clip(args)\n    for batch in loader:\n        loss = model(batch)\n        loss.backward()\n"
                  "        optimizer.step()\n\n\nif __name__ == '__main__':\n    main()\n")


def test_a_clip_trainers_text_context_is_not_the_projects_sequence_length() -> None:
    files = {"fengshen/examples/pretrain_taiyi_clip/pretrain.py": _CLIP_PRETRAIN.format(n=77)}
    for k in range(2):
        files[f"fengshen/examples/ziya_llama/finetune_{k}.sh"] = (
            f"torchrun --nproc_per_node 8 finetune_ziya_llama.py --max_seq_length {512 if k else 256} --bf16\n")
    result = _audit(files)
    assert result.project.max_seq_len != 77 and 77 not in (result.project.notes.get("seq_len_distribution") or {}), result.project
    # control: a text model's trainer with that default is the run's length
    files["fengshen/examples/pretrain_small/pretrain.py"] = files.pop("fengshen/examples/pretrain_taiyi_clip/pretrain.py")
    assert _audit(files).project.max_seq_len == 77


# --- Fengshenbang-LM: ``Taiyi-`` is no Yi model ----------------------------------------------------------------------------------


def test_a_short_family_name_inside_another_word_names_no_family() -> None:
    sh = "torchrun --nproc_per_node 8 train.py --model_name_or_path {model} --bf16 True\n"
    files = {"train.py": _LLAVA_TRAIN, "run.sh": sh.format(model="IDEA-CCNL/Taiyi-Stable-Diffusion-1B-Chinese-v0.1")}
    assert "yi" not in _audit(files).project.model_families
    # control: Yi itself
    files["run.sh"] = sh.format(model="01-ai/Yi-6B")
    assert "yi" in _audit(files).project.model_families


# --- the roles' reads through the facts cache's recording view (Fengshenbang's GLUE fine-tune, VisionLLM's mmcv checkout) -------

_GLUE_FT = ("from datasets import load_dataset\nfrom transformers import AutoModelForSequenceClassification, Trainer\n\n\n"
            "def main():\n    raw = load_dataset('glue', 'mrpc')\n"
            "    model = AutoModelForSequenceClassification.from_pretrained('roberta-base')\n"
            "    Trainer(model=model, train_dataset=raw['train']).train()\n\n\nif __name__ == '__main__':\n    main()\n")


def test_dataset_names_and_switched_distribution_names_read_through_the_cache_recording(tmp_path: Path) -> None:
    files = {"VisionLLMv2/visionllmv2/train/train.py": _VLLM_TRAIN,
             "VisionLLMv2/scripts/train.sh": "torchrun --nproc_per_node 8 visionllmv2/train/train.py --bf16 True\n",
             "VisionLLMv2/mmcv/setup.py": _MMCV_SETUP, "VisionLLMv2/mmcv/mmcv/__init__.py": "from .version import __version__\n",
             "VisionLLMv2/mmcv/mmcv/version.py": "__version__ = '1.7.0'\n",
             "VisionLLMv2/mmcv/mmcv/device/ipu/dataloader.py": _IPU_LOADER,
             "fengshen/examples/classification/run_glue.py": _GLUE_FT}
    roles = {f["path"]: f["role"] for f in scan_cold_and_cached(tmp_path, files)["files"]}
    assert roles["VisionLLMv2/mmcv/mmcv/device/ipu/dataloader.py"] == "vendored", roles


# --- MMR1 (EasyR1/verl): ``trainer.save_freq`` that the driver loop saves on, every RL step a batch of rollouts ------------------

_VERL = {
    "verl/trainer/ray_trainer.py": (
        "import wandb\nfrom tqdm import tqdm\n\n\nclass RayPPOTrainer:\n    def __init__(self, config):\n        self.config = config\n"
        "        self.global_step = 0\n\n    def _save_checkpoint(self):\n"
        "        self.actor_rollout_wg.save_checkpoint('checkpoints/global_step_%d' % self.global_step)\n\n"
        "    def fit(self):\n        for _ in tqdm(range(self.config.trainer.total_episodes)):\n"
        "            batch = self.actor_rollout_wg.generate_sequences(self.next_batch())\n"
        "            actor_output = self.actor_rollout_wg.update_actor(batch)\n"
        "            if self.config.trainer.save_freq > 0 and self.global_step % self.config.trainer.save_freq == 0:\n"
        "                self._save_checkpoint()\n            wandb.log(actor_output, step=self.global_step)\n"
        "            self.global_step += 1\n"),
    "verl/trainer/main.py": ("from omegaconf import OmegaConf\nfrom verl.trainer.ray_trainer import RayPPOTrainer\n\n\n"
                             "def main():\n    config = OmegaConf.load('examples/config.yaml')\n    RayPPOTrainer(config).fit()\n\n\n"
                             "if __name__ == '__main__':\n    main()\n"),
    "verl/workers/rollout/vllm_rollout.py": "from vllm import LLM, SamplingParams\n\n\nclass vLLMRollout:\n    pass\n",
    "examples/config.yaml": "algorithm:\n  adv_estimator: grpo\ntrainer:\n  total_episodes: 15\n  save_freq: {n}\n",
    "examples/train.sh": ("python3 -m verl.trainer.main config=examples/config.yaml "
                          "worker.actor.model.model_path=Qwen/Qwen2.5-VL-7B-Instruct\n"),
}


def test_an_rl_driver_loop_saving_on_a_step_multiple_of_save_freq_counts_steps() -> None:
    files = {k: v.replace("{n}", "5") for k, v in _VERL.items()}
    i3 = _check(_audit(files), "I3")
    assert i3.status.value == "used" and "save_freq=5" in i3.detail, i3
    # control: a save every step of the same loop is a finding
    files = {k: v.replace("{n}", "1") for k, v in _VERL.items()}
    i3 = _check(_audit(files), "I3")
    assert i3.status.value == "unused" and any(e.path == "examples/config.yaml" for e in i3.evidence), i3


# --- octopack: TRL's packing wrapper over a dataset loaded without streaming ------------------------------------------------------

_STARCODER_FT = (
    "import argparse\nfrom datasets import load_dataset\nfrom torch.utils.data import IterableDataset\n"
    "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\n\n"
    "class {cls}(IterableDataset):\n    def __init__(self, tokenizer, dataset, seq_length=1024):\n"
    "        self.dataset = dataset\n        self.seq_length = seq_length\n\n    def __iter__(self):\n"
    "        iterator = iter(self.dataset)\n        for sample in iterator:\n            yield sample\n\n\n"
    "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--streaming', action='store_true')\n"
    "    args = parser.parse_args()\n    dataset = load_dataset('bigcode/guanaco-commits', streaming=args.streaming)\n"
    "    train_dataset = {cls}(None, dataset['train'])\n"
    "    model = AutoModelForCausalLM.from_pretrained('bigcode/starcoder')\n"
    "    Trainer(model=model, args=TrainingArguments(output_dir='out'), train_dataset=train_dataset).train()\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


def test_a_packing_wrapper_over_a_loaded_dataset_is_not_streaming() -> None:
    files = {"finetuning/starcoder/finetune.py": _STARCODER_FT.format(cls="ConstantLengthDataset"),
             "finetuning/starcoder/finetune.sh": "python finetune.py --model_path bigcode/starcoder --seq_length 2048\n"}
    assert _check(_audit(files), "F9").status.value == "unused"
    # control: a dataset class of the project's own that reads as it iterates is streaming
    files["finetuning/starcoder/finetune.py"] = _STARCODER_FT.format(cls="ShardStreamDataset")
    assert _check(_audit(files), "F9").status.value == "used"
