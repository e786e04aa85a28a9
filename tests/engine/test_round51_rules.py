"""Round 51 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.facts.extract import extract_file

from .claims import audit as _audit
from .claims import check as _check

# --- mlfoundations/dclm: a dataset record's stored git diff read as the project's launch --------------------------------

_DCLM_TRAIN = (
    "import torch\nfrom open_lm.main import main\n\n\ndef train(args):\n    open_lm_args = ['--workers', '2']\n"
    "    main(open_lm_args)\n\n\nif __name__ == '__main__':\n    loss = torch.zeros(1)\n    loss.backward()\n")
_DCLM_README = (
    "# DCLM\n\n## Training\n\n```bash\n"
    "torchrun --nproc-per-node 8 -m training.train -- --scale 1b_1x_fast --data-config exp_data/tok.json --torchcompile\n"
    "```\n")


def _dclm_record(diff: str) -> str:
    return ('{\n  "name": "rpj",\n  "dataset_url": "s3://bucket/rpj/",\n  "tokenized": true,\n'
            f'  "dcnlp_diff": "{diff}"\n}}\n')


def test_a_patch_kept_in_a_record_is_no_launch_and_the_readme_run_counts() -> None:
    # (a context line of the patch reads as a command: `` python ray_processing/tokenize_shuffle.py ...``)
    diff = ("diff --git a/tok.sh b/tok.sh\\n--- a/tok.sh\\n+++ b/tok.sh\\n@@ -1,3 +1,3 @@\\n"
            " python ray_processing/tokenize_shuffle.py --input a\\n-    --content_key text\\n+    --content_key body\\n")
    files = {"training/__init__.py": "", "training/train.py": _DCLM_TRAIN, "README.md": _DCLM_README,
             "ray_processing/tokenize_shuffle.py": "import ray\n", "exp_data/datasets/tokenized/rpj.json": _dclm_record(diff)}
    audit = _audit(files)
    a1 = _check(audit, "A1")
    assert a1.status.value == "used", a1.detail
    # the flags after ``--`` are the script's own
    ff = extract_file("README.md", _DCLM_README.encode())
    run = next(x for x in ff.doc_launches if x.launcher == "torchrun")
    assert run.script == "training.train" and run.script_args.get("scale") == "1b_1x_fast" and run.script_args.get("torchcompile") is True
    # control: a record whose string is a real command, not a patch, still is a launch
    record = extract_file("exp.json", _dclm_record("python ray_processing/tokenize_shuffle.py --input a").encode())
    assert [x.script for x in record.launches] == ["ray_processing/tokenize_shuffle.py"]
    patch = extract_file("exp.json", _dclm_record(diff).encode())
    assert patch.launches == []


# --- IEIT-Yuan/Yuan-2.0: flags of a quoted multi-line variable cited at the variable's first line ------------------------

_YUAN_SH = (
    "GPUS_PER_NODE=8\nDISTRIBUTED_ARGS=\"\n    --nproc_per_node $GPUS_PER_NODE \\\n    --nnodes 1\n\"\n\n"
    "GPT_ARGS=\"\n    --tensor-model-parallel-size 1 \\\n    --num-workers 2 \\\n    --bf16\n\"\n\n"
    "torchrun $DISTRIBUTED_ARGS pretrain_yuan.py \\\n    $GPT_ARGS \\\n    --save x\n")


def test_each_flag_of_a_quoted_flag_list_is_cited_at_its_own_line() -> None:
    ff = extract_file("examples/pretrain_yuan.sh", _YUAN_SH.encode())
    (launch,) = ff.launches
    assert launch.launcher_arg_lines == {"nproc_per_node": 3, "nnodes": 4}
    assert launch.arg_lines == {"tensor_model_parallel_size": 8, "num_workers": 9, "bf16": 10, "save": 15}


# --- baichuan-inc/Baichuan-7B: a hostfile template's "..." line counted as a host -----------------------------------------

_BAICHUAN_TRAIN = (
    "import deepspeed\nimport torch\n\n\ndef main(args, model):\n"
    "    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())\n"
    "    for step in range(10):\n        loss = engine(torch.zeros(1))\n        engine.backward(loss)\n        engine.step()\n")


def test_a_hostfile_that_goes_on_gives_several_nodes_not_a_count() -> None:
    launch = "#!/bin/bash\ndeepspeed --hostfile config/hostfile \\\n--force_multi \\\ntrain.py \\\n--deepspeed\n"
    files = {"train.py": _BAICHUAN_TRAIN, "scripts/train.sh": launch,
             "config/hostfile": "[master address] slots=8\n[worker address] slots=8\n...\n"}
    project = _audit(files).project
    assert project.multi_node and project.num_nodes is None, project.num_nodes
    assert "config/hostfile:1 lists 2" in str(project.notes.get("nodes_unresolved")), project.notes
    # control: a complete hostfile is a count, cited where it lists its hosts
    files["config/hostfile"] = "node1 slots=8\nnode2 slots=8\nnode3 slots=8\n"
    project = _audit(files).project
    assert project.num_nodes == 3 and project.notes["nodes_source"] == "config/hostfile:1", project.notes


# --- LLM360/amber-train: a Hydra group choice named as a model; an f-string model path left unread -------------------------

_AMBER_MAIN = (
    "import torch\nimport lightning as L\nfrom transformers import AutoConfig, AutoTokenizer, LlamaForCausalLM\n\n"
    "MODEL_SIZE = '7b'\nHF_MODEL_NAME_OR_PATH = f'huggyllama/llama-{MODEL_SIZE}'\n\n\n"
    "def main(n_nodes=1):\n    fabric = L.Fabric(num_nodes=n_nodes, devices=4, precision='bf16-mixed')\n"
    "    model = LlamaForCausalLM(config=AutoConfig.from_pretrained(HF_MODEL_NAME_OR_PATH))\n"
    "    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)\n    model, optimizer = fabric.setup(model, optimizer)\n"
    "    for step in range(10):\n        loss = model(torch.zeros(1)).logits.sum()\n        fabric.backward(loss)\n"
    "        optimizer.step()\n")
_AMBER_SFT = ("#!/bin/bash\npython -u direct-preference-optimization/train.py \\\n    model=blank_model \\\n"
              "    model.name_or_path=LLM360/AmberChat \\\n    loss=sft\n")


def test_a_config_group_choice_is_no_model_and_an_fstring_of_constants_is_read() -> None:
    files = {"main.py": _AMBER_MAIN, "run.sh": "#!/bin/bash\nsrun python main.py --n_nodes 56\n",
             "finetune/ambersafe/sft.sh": _AMBER_SFT}
    project = _audit(files).project
    assert "blank_model" not in project.model_names, project.model_names
    assert "huggyllama/llama-7b" in project.model_names, project.model_names
    assert project.estimated_params == "7B"
    # control: an f-string with a field that is no constant stays unread
    files["main.py"] = _AMBER_MAIN.replace("MODEL_SIZE = '7b'\n", "import os\nMODEL_SIZE = os.environ['SIZE']\n")
    project = _audit(files).project
    assert not any(n.startswith("huggyllama/") for n in project.model_names), project.model_names


# --- IEIT-Yuan/Yuan-2.0 (Megatron): empty_cache() behind a memory level no launch raises -----------------------------------

_MEGATRON_TRAINING = (
    "import torch\nfrom megatron import get_args\n\n\ndef train_step(forward_step_func, model, optimizer):\n"
    "    args = get_args()\n    losses = forward_step_func(model)\n"
    "    if args.empty_unused_memory_level >= 1:\n        torch.cuda.empty_cache()\n"
    "    optimizer.step()\n    return losses\n\n\ndef train(model, optimizer):\n    iteration = 0\n"
    "    while iteration < 100:\n        train_step(None, model, optimizer)\n        iteration += 1\n")
_MEGATRON_ARGS = (
    "import argparse\n\n\ndef parse_args():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--empty-unused-memory-level', default=0, type=int, choices=[0, 1, 2])\n"
    "    return parser.parse_args()\n")


def test_empty_cache_behind_a_switch_left_off_is_no_finding() -> None:
    launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --bf16\n"
    files = {"megatron/training.py": _MEGATRON_TRAINING, "megatron/arguments.py": _MEGATRON_ARGS,
             "pretrain_gpt.py": "from megatron.training import train\ntrain(None, None)\n", "examples/pretrain.sh": launch}
    c6 = _check(_audit(files), "C6")
    assert not c6.findings, c6.findings
    # control: the launch that raises the level makes it run every step
    files["examples/pretrain.sh"] = launch.replace("--bf16", "--bf16 --empty-unused-memory-level 1")
    c6 = _check(_audit(files), "C6")
    assert [(e.path, e.line) for e in c6.findings] == [("megatron/training.py", 9)], c6.detail


# --- LLM360/amber-train: one launch's batch multiplied by another job's node count -----------------------------------------

_FASTCHAT_TRAIN = (
    "import transformers\n\n\ndef train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained('LLM360/Amber')\n"
    "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == '__main__':\n    train()\n")
_AMBER_SFT_LAUNCH = (
    "#!/bin/bash\ntorchrun --nproc_per_node=8 --master_port=20001 fastchat/train/train.py \\\n"
    "    --per_device_train_batch_size 2 \\\n    --gradient_accumulation_steps 16 \\\n    --bf16 True\n")


def test_a_launch_without_a_node_count_runs_on_one_node() -> None:
    files = {"main.py": _AMBER_MAIN, "fastchat/train/train.py": _FASTCHAT_TRAIN,
             "finetune/amberchat/instruction_finetune.sh": _AMBER_SFT_LAUNCH,
             "run.sh": "#!/bin/bash\n#SBATCH --nodes=56\n#SBATCH --ntasks-per-node=4\nsrun python main.py --n_nodes 56\n"}
    g2 = _check(_audit(files), "G2")
    assert "estimated global batch 256" in g2.detail, g2.detail
    # control: the same launch joining a rendezvous is a multi-node job: the job's node count applies
    files["finetune/amberchat/instruction_finetune.sh"] = _AMBER_SFT_LAUNCH.replace(
        "--master_port=20001", "--master_port=20001 --master_addr=$MASTER_ADDR --node_rank=$NODE_RANK")
    g2 = _check(_audit(files), "G2")
    assert "estimated global batch 256" not in g2.detail, g2.detail


# --- ymcui/Chinese-LLaMA-Alpaca-3: "eager only" beside the vLLM engine its inference script builds behind a flag -------------

_CLA3_INFER = (
    "import argparse\nimport torch\nfrom transformers import AutoModelForCausalLM\n\n"
    "parser = argparse.ArgumentParser()\nparser.add_argument('--base_model', default=None, type=str, required=True)\n"
    "parser.add_argument('--use_vllm', action='store_true', help='Use vLLM as back-end LLM service.')\n"
    "args = parser.parse_args()\nif args.use_vllm:\n    from vllm import LLM, SamplingParams\n\n\n"
    "if __name__ == '__main__':\n    if args.use_vllm:\n        model = LLM(model=args.base_model, dtype='float16')\n"
    "    else:\n        model = AutoModelForCausalLM.from_pretrained(args.base_model, torch_dtype=torch.float16)\n"
    "    if args.use_vllm:\n        outputs = model.generate(['hi'], SamplingParams(max_tokens=64))\n"
    "    else:\n        outputs = model.generate(input_ids=torch.zeros(1, 4, dtype=torch.long), max_new_tokens=64)\n")


def test_an_engine_behind_a_switch_is_named_as_one() -> None:
    j5 = _check(_audit({"scripts/inference/inference_hf.py": _CLA3_INFER}), "J5")
    assert j5.status.value == "unused" and j5.values.get("engine_switch") == "vllm", j5.detail
    assert "vllm is a switch of the inference code (`LLM(...)` at scripts/inference/inference_hf.py:15, under `args.use_vllm`)" in j5.detail
    # control: a launch that passes the flag runs the engine
    on = _audit({"scripts/inference/inference_hf.py": _CLA3_INFER,
                 "scripts/inference/run.sh": "python scripts/inference/inference_hf.py --base_model m --use_vllm\n"})
    assert _check(on, "J5").status.value == "used"
