"""Round 34 (issue #9): Baichuan2, dolly, open_flamingo, BELLE and lit-llama at HEAD, and the DeepSpeedExamples shell
leftovers of round 33, read as a new user would. Each test is one false claim of those reports, made from the shape of the
real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.facts.shell import extract_shell_text
from checks.facts.types import FileFacts

from .claims import audit as _audit
from .claims import check as _check


def _shell(text: str) -> FileFacts:
    out = FileFacts(path="run.sh", kind="shell", lines=0)
    extract_shell_text("run.sh", text, out)
    return out


# --- a README command run from its script's folder --------------------------------------------------------------------------

_FT = ("import transformers\nfrom dataclasses import dataclass, field\n\n\n@dataclass\n"
       "class TrainingArguments(transformers.TrainingArguments):\n    model_max_length: int = field(default=512)\n\n\n"
       "def train():\n    parser = transformers.HfArgumentParser((TrainingArguments,))\n    (args,) = parser.parse_args_into_dataclasses()\n"
       "    model = transformers.AutoModelForCausalLM.from_pretrained('baichuan-inc/Baichuan2-7B-Base')\n"
       "    trainer = transformers.Trainer(model=model, args=args, train_dataset=ds)\n    trainer.train()\n\n\n"
       "if __name__ == '__main__':\n    train()\n")
_DS = '{\n  "bf16": {"enabled": "auto"},\n  "zero_optimization": {\n    "stage": 3,\n    "overlap_comm": true\n  },\n  "train_micro_batch_size_per_gpu": "auto"\n}\n'
_README = ("# Baichuan 2\n\n## Fine-tuning\n\n```shell\nhostfile=\"\"\ndeepspeed --hostfile=$hostfile fine-tune.py  \\\n"
           "    --report_to \"none\" \\\n    --model_max_length 512 \\\n    --logging_steps 1 \\\n    --gradient_checkpointing True \\\n"
           "    --deepspeed {ds} \\\n    --bf16 True \\\n    --tf32 True\n```\n")


def test_a_readme_command_run_in_its_scripts_folder_is_the_run():
    # Baichuan2: the README runs `deepspeed fine-tune.py ... --deepspeed ds_config.json --bf16 True`; both files live in
    # fine-tune/. C1 said "no BF16/FP16 training setting found" and I4 "HF default of 500".
    a = _audit({"fine-tune/fine-tune.py": _FT, "fine-tune/ds_config.json": _DS, "README.md": _README.format(ds="ds_config.json")})
    c1, i4 = _check(a, "C1"), _check(a, "I4")
    assert c1.status.value == "used", c1.detail
    assert any(e.path == "README.md" for e in c1.evidence)
    assert i4.status.value == "unused", i4.detail


def test_control_a_bare_script_without_its_folders_files_stays_a_readme_mention():
    # the same bare name, but nothing the command hands over sits beside fine-tune/fine-tune.py: the README may document
    # another checkout's layout; it is not the run
    a = _audit({"fine-tune/fine-tune.py": _FT, "fine-tune/ds_config.json": _DS, "README.md": _README.format(ds="zero3.json")})
    assert _check(a, "C1").status.value != "used"


# --- shell: an empty-value default after the script set the value -----------------------------------------------------------

def test_an_empty_default_does_not_override_a_value_the_script_set():
    # DeepSpeed-VisualChat run_7b.sh: `ZERO_STAGE=3` ... `if [ "$ZERO_STAGE" == "" ]; then ZERO_STAGE=0; fi` ... `--zero_stage
    # $ZERO_STAGE`: the run is ZeRO-3; the launch read 0
    f = _shell('ZERO_STAGE=3\nif [ "$ZERO_STAGE" == "" ]; then\n    ZERO_STAGE=0\nfi\n'
               'A=5\n[ -z "$A" ] && A=7\ndeepspeed main.py --zero_stage $ZERO_STAGE --a $A\n')
    assert f.launches[0].script_args == {"zero_stage": 3, "a": 5}


def test_control_an_empty_default_applies_to_an_argument_or_an_unset_variable():
    f = _shell('OUTPUT=$1\nZERO_STAGE=$2\nif [ "$ZERO_STAGE" == "" ]; then\n    ZERO_STAGE=3\nfi\n'
               'if [ -z "${OUTPUT}" ]; then OUTPUT=./out; fi\n[ -z "$B" ] && B=2\n'
               'deepspeed main.py --zero_stage $ZERO_STAGE --output_dir $OUTPUT --b $B\n')
    assert f.launches[0].script_args == {"zero_stage": 3, "output_dir": "./out", "b": 2}


# --- shell: an MPI launch with two-word options and exported variables -------------------------------------------------------

_MPI = ("base_dir=`pwd`\nmpirun -n 128 -npernode 4 -hostfile /job/hostfile -x UCX_TLS=tcp --mca btl ^openib "
        "--mca btl_tcp_if_include eth0 -x NCCL_IB_DISABLE=1 -genv NCCL_DEBUG INFO python ${base_dir}/../deepspeed_train.py \\\n"
        "  --cf bert.json --deepspeed\n")


def test_an_mpirun_launch_with_mca_options_is_parsed():
    # bing_bert's mpi_ethernet scripts: `--mca btl ^openib` ended the wrapper's options at `^openib`, so the launch was lost
    f = _shell(_MPI)
    (launch,) = f.launches
    assert launch.script == "`pwd`/../deepspeed_train.py" and launch.wrappers == ("mpirun",)
    assert launch.script_args == {"cf": "bert.json", "deepspeed": True}


def test_mpirun_exports_are_the_ranks_environment():
    f = _shell(_MPI)
    got = {(e.name, e.value) for e in f.envs}
    assert {("UCX_TLS", "tcp"), ("NCCL_IB_DISABLE", "1"), ("NCCL_DEBUG", "INFO")} <= got
    assert f.launches[0].env["NCCL_IB_DISABLE"] == "1"


def test_control_the_scripts_own_flags_are_not_mpi_exports():
    f = _shell("mpirun -n 2 python train.py -x NCCL_ALGO=Tree\n")
    assert not any(e.name == "NCCL_ALGO" for e in f.envs)


# --- shell: a commented-out command ending in a backslash ---------------------------------------------------------------------

_RUN_CMD = ('NUM_NODES=2\n#run_cmd="deepspeed --num_nodes ${NUM_NODES} --num_gpus 4 \\\n#       --master_port=${MASTER_PORT} \\\n'
            'run_cmd="python3 -m torch.distributed.launch \\\n       --nproc_per_node=4 \\\n       {script} \\\n'
            '       --fp16 \\\n       --deepspeed_config ds.json \\\n       "\necho ${run_cmd}\neval ${run_cmd}\n')


def test_a_comment_line_ending_in_a_backslash_does_not_swallow_the_next_command():
    # BingBertSquad run_hf.sh: two commented lines of an old `deepspeed` command, each ending in `\`, took the live
    # `run_cmd="python3.6 -m torch.distributed.launch ...` into the comment, so its launch was never read
    f = _shell(_RUN_CMD.replace("{script}", "nvidia_run_squad_mpi.py"))
    (launch,) = f.launches
    assert launch.script == "nvidia_run_squad_mpi.py" and launch.script_args["fp16"] is True


def test_control_a_continued_command_still_joins_its_lines():
    f = _shell("deepspeed train.py \\\n    --bf16 True \\\n    --zero_stage 3\n")
    assert f.launches[0].script_args == {"bf16": True, "zero_stage": 3}


# --- scope: a side project's launch whose script is missing --------------------------------------------------------------------

_SQUAD = ("import torch\nfrom pytorch_pretrained_bert.modeling import BertForQuestionAnswering\n\n\ndef main():\n"
          "    model = BertForQuestionAnswering.from_pretrained('bert-large-uncased')\n"
          "    for batch in loader:\n        loss = model(**batch)\n        loss.backward()\n        opt.step()\n")
_LLM = ("import deepspeed\nfrom transformers import AutoModelForCausalLM\n\n\ndef main():\n"
        "    model = AutoModelForCausalLM.from_pretrained('facebook/opt-1.3b')\n"
        "    engine, *_ = deepspeed.initialize(model=model, config='ds.json')\n"
        "    for batch in loader:\n        loss = engine(**batch).loss\n        engine.backward(loss)\n        engine.step()\n")


def test_a_launch_of_a_missing_script_beside_a_side_project_is_that_projects():
    # DeepSpeedExamples: BingBertSquad/run_hf.sh (NUM_NODES=2) runs nvidia_run_squad_mpi.py, which the repository does not
    # have, beside the BERT SQuAD scripts; E1 and step zero said "multi-node training (2 nodes at run_hf.sh:14)"
    a = _audit({"applications/chat/main.py": _LLM, "applications/chat/run.sh": "deepspeed main.py --zero_stage 2\n",
                "training/BingBertSquad/nvidia_run_squad_deepspeed.py": _SQUAD,
                "training/BingBertSquad/run_hf.sh": _RUN_CMD.replace("{script}", "nvidia_run_squad_mpi.py")})
    assert a.roles.by_path["training/BingBertSquad/run_hf.sh"] == "side", a.roles.why.get("training/BingBertSquad/run_hf.sh")
    assert not a.project.multi_node


def test_control_a_missing_script_beside_llm_code_stays_a_launch():
    a = _audit({"applications/chat/main.py": _LLM, "applications/chat/run.sh": "deepspeed main.py --zero_stage 2\n",
                "training/llm/train.py": _LLM, "training/llm/run_hf.sh": _RUN_CMD.replace("{script}", "nvidia_run_llm_mpi.py")})
    assert a.roles.by_path["training/llm/run_hf.sh"] != "side"


# --- E1: launches kept in a multi_node/ folder -------------------------------------------------------------------------------

def test_launches_in_a_multi_node_folder_document_a_multi_node_run():
    # DeepSpeed-Chat: training_scripts/opt/multi_node/run_66b.sh runs `deepspeed main.py ...` with the default hostfile;
    # E1 said "single-node project"
    files = {"step1/main.py": _LLM, "step1/training_scripts/opt/single_gpu/run_1.3b.sh": "deepspeed --num_gpus 1 main.py --zero_stage 0\n",
             "step1/training_scripts/opt/multi_node/run_66b.sh": "deepspeed main.py --zero_stage 3 --output_dir out\n"}
    e1 = _check(_audit(files), "E1")
    assert e1.status.value == "unused" and "multi_node/run_66b.sh" in (e1.detail or ""), e1.detail


def test_control_without_the_multi_node_folder_e1_does_not_apply():
    files = {"step1/main.py": _LLM, "step1/training_scripts/opt/single_gpu/run_1.3b.sh": "deepspeed --num_gpus 1 main.py --zero_stage 0\n",
             "step1/training_scripts/opt/single_node/run_66b.sh": "deepspeed main.py --zero_stage 3 --output_dir out\n"}
    assert _check(_audit(files), "E1").status.value == "n/a"


# --- lit-llama: a README that runs `python finetune/lora.py` ---------------------------------------------------------------------

_LIT_MODEL = ("import torch\nimport torch.nn as nn\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass LLaMAConfig:\n"
              "    block_size: int = 2048\n    vocab_size: int = 32000\n    n_layer: int = 32\n    n_head: int = 32\n    n_embd: int = 4096\n\n"
              "    @classmethod\n    def from_name(cls, name):\n        return cls(**llama_configs[name])\n\n\n"
              "llama_configs = {\"7B\": dict(n_layer=32, n_head=32, n_embd=4096), \"13B\": dict(n_layer=40, n_head=40, n_embd=5120),\n"
              "                 \"30B\": dict(n_layer=60, n_head=52, n_embd=6656), \"65B\": dict(n_layer=80, n_head=64, n_embd=8192)}\n\n\n"
              "class LLaMA(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n        self.config = config\n")
_LIT_FT = ("import lightning as L\nimport torch\nfrom lit_llama.model import LLaMA, LLaMAConfig\n\n"
           "devices = 4\nlog_interval = 1\n\n\ndef main():\n"
           "    fabric = L.Fabric(accelerator='cuda', devices=devices, precision='bf16-mixed'{loggers})\n"
           "    config = LLaMAConfig.from_name('7B')\n    model = fabric.setup_module(LLaMA(config))\n"
           "    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=3e-4))\n"
           "    for iter_num in range(1000):\n        loss = model(x).sum()\n        fabric.backward(loss)\n        optimizer.step()\n"
           "        if iter_num % log_interval == 0:\n            fabric.log_dict({{'loss': loss.item()}}, step=iter_num)\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
_LIT_README = "# Lit-LLaMA\n\n2. Run the finetuning script\n\n   ```bash\n   python finetune/full.py\n   ```\n"
_GPTQ = ("import torch\nfrom lit_llama.model import LLaMA\n\n\ndef llama_blockwise_quantization(model, blocks):\n"
         "    for i, block in enumerate(blocks):\n        quantize(block)\n        torch.cuda.empty_cache()\n")


def _lit(loggers: str = "") -> dict[str, str]:
    return {"lit_llama/model.py": _LIT_MODEL, "finetune/full.py": _LIT_FT.format(loggers=loggers), "README.md": _LIT_README,
            "quantize/gptq.py": _GPTQ}


def test_a_readme_command_of_a_script_in_a_finetune_folder_is_the_training_path():
    # lit-llama: `python finetune/lora.py` in the README; the script's name says nothing, its folder does. No entry point was
    # found, so the GPTQ tool and the evaluation scripts were read as the run
    a = _audit(_lit())
    assert a.roles.by_path["finetune/full.py"] == "training", a.roles.why.get("finetune/full.py")


def test_empty_cache_in_a_tools_loop_is_not_the_training_loops():
    # lit-llama C6: "torch.cuda.empty_cache() runs in the training loop" cited quantize/gptq.py, a one-off GPTQ script
    c6 = _check(_audit(_lit()), "C6")
    assert not any(x.path == "quantize/gptq.py" for x in c6.findings), c6.findings
    assert "empty_cache" not in (c6.detail or "")


def test_control_empty_cache_in_the_training_loop_is_a_finding():
    files = _lit()
    files["finetune/full.py"] = files["finetune/full.py"].replace("        optimizer.step()\n", "        optimizer.step()\n        torch.cuda.empty_cache()\n")
    c6 = _check(_audit(files), "C6")
    assert any(x.path == "finetune/full.py" for x in c6.findings), c6.findings


def test_fabric_log_dict_without_loggers_reports_to_no_tracker():
    # lit-llama I5: "progress reported to trackers every step" at `fabric.log_dict(...)`; no Fabric gets `loggers=`
    i5 = _check(_audit(_lit()), "I5")
    assert i5.status.value != "unused", i5.detail


def test_control_fabric_with_a_logger_reports_every_step():
    i5 = _check(_audit(_lit(", loggers=L.fabric.loggers.TensorBoardLogger('out')")), "I5")
    assert i5.status.value == "unused", i5.detail


def test_a_model_config_built_from_a_preset_name_sizes_the_model():
    # lit-llama: every training script builds `LLaMAConfig.from_name("7B")`; the overview said "unknown"
    a = _audit(_lit())
    assert a.project.estimated_params == "7B", (a.project.estimated_params, a.project.notes.get("params_source"))


# --- F4/F10: chunk files read past their own header -------------------------------------------------------------------------

_PACKED = ("import numpy as np\nimport torch\nfrom torch.utils.data import IterableDataset\n\nHDR_MAGIC = b'LITPKDS'\nHDR_SIZE = 24\n\n\n"
           "class PackedDatasetIterator:\n    def _load_n_chunks(self):\n        for filename in self._filenames:\n"
           "            mmap = np.memmap(filename, mode='r', order='C', offset=HDR_SIZE)\n            self._mmaps.append(mmap)\n\n\n"
           "class PackedDataset(IterableDataset):\n    def __iter__(self):\n        return PackedDatasetIterator(self._filenames)\n")
_PRETRAIN = ("import glob\nimport torch\nfrom torch.utils.data import DataLoader\nfrom lit_llama.packed_dataset import PackedDataset\n\n\n"
             "def main():\n    ds = PackedDataset(glob.glob('data/lit-redpajama/train*'))\n    loader = DataLoader(ds, batch_size=4)\n"
             "    for batch in loader:\n        loss = model(batch).sum()\n        loss.backward()\n        opt.step()\n\n\n"
             "if __name__ == '__main__':\n    main()\n")


def test_chunk_files_read_past_their_header_are_a_packed_token_format():
    # lit-llama's PackedDataset: chunks written as HDR_MAGIC + tokens, read with np.memmap(filename, offset=HDR_SIZE); F4
    # said "no sharded or indexed data format found"
    a = _audit({"lit_llama/packed_dataset.py": _PACKED, "pretrain/train.py": _PRETRAIN})
    assert _check(a, "F4").status.value == "used", _check(a, "F4").detail


def test_control_a_memmap_at_a_computed_offset_is_not_a_header():
    a = _audit({"lit_llama/packed_dataset.py": _PACKED.replace("offset=HDR_SIZE", "offset=start * 2"), "pretrain/train.py": _PRETRAIN})
    assert _check(a, "F4").status.value != "used"


# --- J1: a decode loop that hands the model its cache position ------------------------------------------------------------------

_GEN = ("import torch\n\n\n@torch.no_grad()\ndef generate(model, idx, max_new_tokens):\n    input_pos = torch.arange(0, idx.size(0))\n"
        "    for _ in range(max_new_tokens):\n        x = idx.index_select(0, input_pos).view(1, -1)\n"
        "        logits = model(x, 2048, {pos})\n        idx_next = torch.multinomial(torch.softmax(logits[0, -1], -1), 1)\n"
        "        input_pos = input_pos[-1:] + 1\n        idx = idx.index_copy(0, input_pos, idx_next)\n    return idx\n\n\n"
        "def main():\n    y = generate(model, encoded, max_new_tokens=100)\n    print(y)\n")


def test_a_decode_loop_that_passes_the_cache_position_keeps_a_kv_cache():
    # lit-llama generate.py: `model(x, max_seq_length, input_pos)` writes into the model's KVCache; J1 said "no KV cache reuse"
    j1 = _check(_audit({"generate.py": _GEN.format(pos="input_pos")}), "J1")
    assert j1.status.value == "partial", j1.detail


def test_control_a_decode_loop_that_reruns_the_prefix_has_no_cache():
    j1 = _check(_audit({"generate.py": _GEN.format(pos="None")}), "J1")
    assert j1.status.value == "unused", j1.detail


# --- dolly: a Databricks notebook that launches the trainer with `!deepspeed` -------------------------------------------------

_NB = ("# Databricks notebook source\n# MAGIC %md\n# MAGIC ## Train Dolly\n\n# COMMAND ----------\n\nimport os\n\n"
       "gpu_family = dbutils.widgets.get('gpu_family')\ndeepspeed_config = os.path.join(os.getcwd(), 'config', f'{gpu_family}_config.json')\n"
       "num_gpus_flag = ''\n\n# COMMAND ----------\n\n"
       "!deepspeed {num_gpus_flag} \\\n    --module training.trainer \\\n    --deepspeed {deepspeed_config} \\\n"
       "    --logging-steps 10 \\\n    --save-steps 200 \\\n    --lr 5e-6\n\n# COMMAND ----------\n\n"
       "from training.generate import generate_response\n")
_TRAINER = ("import click\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\n\n@click.command()\n"
            "@click.option('--deepspeed', type=str, default=None)\n@click.option('--logging-steps', type=int, default=10)\n"
            "@click.option('--save-steps', type=int, default=400)\n@click.option('--lr', type=float, default=1e-5)\n"
            "def train(deepspeed, logging_steps, save_steps, lr):\n"
            "    model = AutoModelForCausalLM.from_pretrained('EleutherAI/pythia-2.8b')\n"
            "    args = TrainingArguments(output_dir='out', deepspeed=deepspeed, logging_steps=logging_steps, save_steps=save_steps,\n"
            "                             learning_rate=lr, bf16=True)\n    Trainer(model=model, args=args, train_dataset=ds).train()\n\n\n"
            "if __name__ == '__main__':\n    train()\n")
_OFF = '{\n  "zero_optimization": {\n    "stage": 3,\n    "offload_optimizer": {\n      "device": "cpu"\n    }\n  }\n}\n'
_ON = '{\n  "zero_optimization": {\n    "stage": 3\n  }\n}\n'


def _dolly(nb: str = _NB) -> dict[str, str]:
    return {"train_dolly.py": nb, "training/trainer.py": _TRAINER, "config/a10_config.json": _OFF,
            "config/v100_config.json": _OFF, "config/a100_config.json": _ON}


def test_a_databricks_notebooks_shell_command_is_a_launch():
    # dolly: train_dolly.py is a Databricks notebook; its `!deepspeed ... \` command made the file unparseable ("Files that
    # could not be parsed: train_dolly.py"), so B1 said "nothing visible passes" the DeepSpeed configs
    from checks.facts.extract import extract_file

    ff = extract_file("train_dolly.py", _NB.encode())
    assert ff.error is None
    (launch,) = ff.launches
    assert (launch.launcher, launch.script, launch.line) == ("deepspeed", "training.trainer", 15)
    assert launch.arg_line("logging_steps") == 18 and launch.launcher_args.get("module") is True
    assert any(c.short == "join" for c in ff.calls)  # the Python around the command is still read


def test_control_a_plain_python_file_with_a_bang_line_stays_unparseable():
    from checks.facts.extract import extract_file

    ff = extract_file("train.py", _NB.replace("# Databricks notebook source\n", "").encode())
    assert ff.error is not None and not ff.launches


def test_the_notebooks_launch_decides_b1_and_i3():
    a = _audit(_dolly())
    assert _check(a, "B1").status.value == "used", _check(a, "B1").detail
    i3 = _check(a, "I3")
    assert any(e.path == "train_dolly.py" for e in i3.evidence), i3.detail


def test_offload_configs_a_launch_may_pick_are_not_called_unused():
    # dolly C4: "an offload config is shipped, but no launch script or config uses it", where the notebook hands DeepSpeed
    # `{gpu_family}_config.json` and two of the three configs offload
    c4 = _check(_audit(_dolly()), "C4")
    assert c4.status.value == "partial" and "2 of 3 DeepSpeed configs offload" in c4.detail, c4.detail


def test_control_a_launch_that_names_the_non_offloading_config():
    c4 = _check(_audit(_dolly(_NB.replace("{deepspeed_config}", "config/a100_config.json"))), "C4")
    assert "no launch script or config uses it" in c4.detail, c4.detail


def test_a_variable_before_the_launchers_module_switch_is_a_launcher_option():
    f = _shell("FLAGS=$1\ndeepspeed ${FLAGS} --module training.trainer --lr 1e-5\n")
    assert (f.launches[0].script, f.launches[0].script_args) == ("training.trainer", {"lr": 1e-5})
    f = _shell("deepspeed $SCRIPT --lr 1e-5\n")  # control: a variable with no module switch after it is the script
    assert f.launches[0].script == "$SCRIPT"


def test_a_jupyter_notebooks_shell_command_is_a_launch_and_its_continuation_is_not_python():
    import json

    from checks.facts.extract import extract_file

    nb = {"cells": [{"cell_type": "code", "source": ["import os\n", "cfg = 'ds.json'\n"]},
                    {"cell_type": "code", "source": ["!torchrun --nproc_per_node 8 train.py \\\n", "    --deepspeed {cfg} \\\n", "    --bf16 True\n",
                                                     "print('done')\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    ff = extract_file("train.ipynb", json.dumps(nb, indent=1).encode())
    (launch,) = ff.launches
    assert (launch.launcher, launch.script, launch.script_args["bf16"]) == ("torchrun", "train.py", True)
    assert any(c.short == "print" for c in ff.calls)  # the cell's Python after the command still parses


# --- open_flamingo: a launch run from the folder above the checkout ------------------------------------------------------------

_OF_TRAIN = ("import argparse\nimport torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
             "from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing\n\n\n"
             "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--gradient_checkpointing', action='store_true')\n"
             "    args = parser.parse_args()\n    model = DDP(build())\n    if args.gradient_checkpointing:\n"
             "        apply_activation_checkpointing(model, check_fn=lambda m: True)\n"
             "    for batch in loader:\n        loss = model(batch).sum()\n        loss.backward()\n        opt.step()\n\n\n"
             "if __name__ == '__main__':\n    main()\n")


def test_a_launch_path_that_ends_with_the_repositorys_file_is_not_stale():
    # open_flamingo's run_train.sh runs `python open_flamingo/open_flamingo/train/train.py ... --gradient_checkpointing`
    # (started above the checkout); it was judged a stale launch, so C3 said "no config or launch turns on" the flag
    a = _audit({"open_flamingo/train/train.py": _OF_TRAIN,
                "open_flamingo/scripts/run_train.sh": "srun python open_flamingo/open_flamingo/train/train.py \\\n    --gradient_checkpointing\n"})
    assert a.roles.by_path["open_flamingo/scripts/run_train.sh"] == "launch", a.roles.why.get("open_flamingo/scripts/run_train.sh")
    assert _check(a, "C3").status.value == "used"


def test_control_a_launch_of_a_renamed_package_is_still_stale():
    a = _audit({"videollava/train/train.py": _OF_TRAIN, "scripts/run.sh": "deepspeed llava/train/train.py --gradient_checkpointing\n"})
    assert a.roles.by_path["scripts/run.sh"] == "other", a.roles.why.get("scripts/run.sh")


# --- G2: a micro-batch beside a batch the code accumulates to --------------------------------------------------------------------

_LIT_BATCH = ("import torch\n\ndevices = 4\nbatch_size = 128 / devices\nmicro_batch_size = {micro}\n"
              "gradient_accumulation_iters = batch_size // micro_batch_size\n\n\ndef main():\n"
              "    for iter_num, batch in enumerate(loader):\n        loss = model(batch).sum()\n        loss.backward()\n"
              "        if (iter_num + 1) % gradient_accumulation_iters == 0:\n            opt.step()\n\n\n"
              "if __name__ == '__main__':\n    main()\n")


def test_a_micro_batch_beside_an_accumulated_batch_is_not_the_global_batch():
    # lit-llama G2: "estimated global batch 20" (micro-batch 5 x 4 GPUs), where the scripts accumulate to 64-128
    g2 = _check(_audit({"finetune/full.py": _LIT_BATCH.format(micro=4).replace("batch_size = 128 / devices\n", "batch_size = 128\n")}), "G2")
    assert g2.detail == "no LAMB/LARS optimizer", g2.detail


def test_control_a_micro_batch_with_its_accumulation_count_gives_the_global_batch():
    src = ("import torch\nmicro_batch_size = 4\ngradient_accumulation_steps = 8\n\n\ndef main():\n    for batch in loader:\n"
           "        loss = model(batch).sum()\n        loss.backward()\n        opt.step()\n")
    g2 = _check(_audit({"train.py": src}), "G2")
    assert "a batch of 32 sequences per GPU" in (g2.detail or ""), g2.detail


# --- BELLE: the previous version kept in a folder, inference launches, computed save_steps -------------------------------------

_SFT = ("import transformers\nfrom transformers import Trainer, TrainingArguments, AutoModelForCausalLM\n\n\ndef main():\n"
        "    model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
        "    training_args = TrainingArguments(output_dir='out', bf16=True{kw})\n{attr}"
        "    trainer = Trainer(model=model, args=training_args, train_dataset=ds)\n    trainer.train()\n\n\n"
        "if __name__ == '__main__':\n    main()\n")
_DSCHAT = ("import deepspeed\nfrom deepspeed.ops.adam import FusedAdam\nfrom torch.utils.data import DataLoader\n\n\ndef main():\n"
           "    opt = FusedAdam(model.parameters(), lr=1e-5)\n    engine, *_ = deepspeed.initialize(model=model, optimizer=opt)\n"
           "    for batch in DataLoader(ds, batch_size=4):\n        loss = engine(**batch).loss\n        engine.backward(loss)\n        engine.step()\n\n\n"
           "if __name__ == '__main__':\n    main()\n")


def _belle(readme: str) -> dict[str, str]:
    return {"train/README.md": readme, "train/src/entry_point/sft_train.py": _SFT.format(kw="", attr=""),
            "train/scripts/run_sft.sh": "torchrun --nproc_per_node 8 ../src/entry_point/sft_train.py --bf16\n",
            "train/dschat_train_v1/main.py": _DSCHAT,
            "train/dschat_train_v1/training_scripts/run_FT.sh": "deepspeed main.py --zero_stage 2\n"}


def test_a_folder_the_readme_calls_the_previous_version_is_archived():
    # BELLE train/README.md: "当前仓库的代码属于BELLE项目训练代码v2版，上一版基于deepspeed-chat的代码放在dschat_train_v1目录下，未做任何改动";
    # D6 said "fused kernels are in use" from that copy's FusedAdam, F7 "used" from its dead packing code
    a = _audit(_belle("# BELLE训练\n\n当前仓库的代码属于BELLE项目训练代码v2版，上一版基于deepspeed-chat的代码放在dschat_train_v1目录下，未做任何改动。\n"))
    assert a.roles.by_path["train/dschat_train_v1/main.py"] == "archive", a.roles.why.get("train/dschat_train_v1/main.py")
    assert _check(a, "D6").status.value != "used"


def test_control_a_folder_the_readme_names_without_calling_it_old_stays():
    a = _audit(_belle("# BELLE训练\n\nThe DeepSpeed-Chat based trainer is in dschat_train_v1, the HF one in src.\n"))
    assert a.roles.by_path["train/dschat_train_v1/main.py"] != "archive"


def test_a_launched_inference_script_that_never_trains_is_not_the_training_path():
    # BELLE run_zero_inference.sh runs zero_inference.py (Seq2SeqTrainer(...).predict) with --use_flash_attention; D1 said
    # "efficient attention" from it while every training recipe leaves the flag off
    infer = ("from transformers import Seq2SeqTrainer\n\n\ndef main():\n    trainer = Seq2SeqTrainer(model=model, args=args)\n"
             "    out = trainer.predict(ds)\n\n\nif __name__ == '__main__':\n    main()\n")
    files = {**_belle("# BELLE\n"), "train/src/entry_point/zero_inference.py": infer,
             "train/scripts/run_zero_inference.sh": "torchrun --nproc_per_node 8 ../src/entry_point/zero_inference.py --use_flash_attention\n"}
    a = _audit(files)
    assert a.roles.by_path["train/src/entry_point/zero_inference.py"] == "eval", a.roles.why.get("train/src/entry_point/zero_inference.py")
    assert a.roles.by_path["train/scripts/run_zero_inference.sh"] == "eval"


def test_control_an_inference_script_on_an_engine_stays_in_scope():
    infer = ("from vllm import LLM\n\n\ndef main():\n    llm = LLM(model='m')\n    llm.generate(prompts)\n\n\n"
             "if __name__ == '__main__':\n    main()\n")
    files = {**_belle("# BELLE\n"), "train/src/entry_point/vllm_inference.py": infer,
             "train/scripts/run_vllm_inference.sh": "torchrun --nproc_per_node 8 ../src/entry_point/vllm_inference.py\n"}
    a = _audit(files)
    assert a.roles.by_path.get("train/src/entry_point/vllm_inference.py") != "eval"


def test_save_steps_computed_in_code_is_not_the_hf_default():
    # BELLE I3: "HF Trainer default: a checkpoint every 500 steps (save_steps is not set ...)", where every trainer sets
    # `training_args.save_steps = training_args.eval_steps` or passes `save_steps=eval_and_save_steps`
    files = {"train.py": _SFT.format(kw="", attr="    training_args.save_steps = training_args.eval_steps\n")}
    i3 = _check(_audit(files), "I3")
    assert "HF Trainer default" not in i3.detail and "save_steps is computed in code" in i3.detail, i3.detail
    files = {"train.py": _SFT.format(kw=", save_steps=eval_and_save_steps", attr="")}
    assert "save_steps is computed in code" in _check(_audit(files), "I3").detail


def test_control_save_steps_left_unset_is_the_hf_default():
    i3 = _check(_audit({"train.py": _SFT.format(kw="", attr="")}), "I3")
    assert "HF Trainer default" in i3.detail, i3.detail


def test_a_float_is_not_a_sequence_length():
    # Megatron-DeepSpeed: `block_size = 1e6` of the Retro DB's chunk blocks became the max sequence length (1000000)
    src = _SFT.format(kw="", attr="    block_size = 1e6\n    model_max_length = 2048\n")
    a = _audit({"train.py": src, "cfg.yaml": "model_max_length: 2048\nlearning_rate: 1.0e-5\n"})
    assert a.project.max_seq_len == 2048, a.project.max_seq_len


def test_a_tools_launch_is_not_where_trainer_flags_go():
    # BELLE: "append to the training command in train/scripts/merge_lora.sh:7" (a LoRA merge) for --use_liger_kernel
    files = {"train.py": _SFT.format(kw="", attr=""),
             "scripts/a_merge_lora.sh": "python merge_llama_with_lora.py --model_name_or_path m --output_dir o\n",
             "merge_llama_with_lora.py": "import peft\n",
             "scripts/run_sft.sh": "torchrun --nproc_per_node 8 train.py --model_name_or_path m --output_dir o\n"}
    from reports.snippets import repo_style

    a = _audit(files)
    assert repo_style(a.facts, a.project, a.roles.by_path).where.get("hf-flags", "").startswith("scripts/run_sft.sh"), \
        repo_style(a.facts, a.project, a.roles.by_path).where


def test_a_deepspeed_config_named_for_inference_is_no_training_runs():
    # BELLE's configs/deepspeed_config_stage3_inference.json (passed only by its ZeRO-3 inference launch) was counted among
    # the run's ZeRO-3 configs (step zero: "fully sharded in 5 of 8 DeepSpeed configs"; A3 and E2 evidence)
    z3 = '{\n  "zero_optimization": {\n    "stage": 3,\n    "overlap_comm": true\n  }\n}\n'
    z2 = '{\n  "zero_optimization": {\n    "stage": 2\n  }\n}\n'
    files = {"train.py": _SFT.format(kw="", attr=""), "configs/ds_z2.json": z2, "configs/ds_config_stage3_inference.json": z3}
    a3 = _check(_audit(files), "A3")
    assert not any("inference" in e.path for e in a3.evidence), a3.evidence
    files["configs/ds_config_stage3.json"] = files.pop("configs/ds_config_stage3_inference.json")
    assert any(e.path == "configs/ds_config_stage3.json" for e in _check(_audit(files), "A3").evidence)  # control


# --- dolly: click options of the trainer's command ------------------------------------------------------------------------------

_CLICK_TRAINER = ("import click\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\n\n@click.command()\n"
                  "@click.option('--logging-steps', type=int, default=10)\n"
                  "@click.option('--gradient-checkpointing/--no-gradient-checkpointing', is_flag=True, default={gc})\n"
                  "def train(logging_steps, gradient_checkpointing):\n"
                  "    model = AutoModelForCausalLM.from_pretrained('EleutherAI/pythia-6.9b')\n"
                  "    args = TrainingArguments(output_dir='out', logging_steps=logging_steps, gradient_checkpointing=gradient_checkpointing)\n"
                  "    Trainer(model=model, args=args, train_dataset=ds).train()\n\n\nif __name__ == '__main__':\n    train()\n")


def test_a_click_flag_on_by_default_is_the_runs_setting():
    # dolly's training/trainer.py: `--gradient-checkpointing/--no-gradient-checkpointing`, default=True, passed to
    # TrainingArguments; C3 said "no activation checkpointing found"
    c3 = _check(_audit({"training/trainer.py": _CLICK_TRAINER.format(gc="True")}), "C3")
    assert c3.status.value == "used", c3.detail


def test_control_a_click_flag_off_by_default_and_a_data_tools_options():
    assert _check(_audit({"training/trainer.py": _CLICK_TRAINER.format(gc="False")}), "C3").status.value != "used"
    from checks.facts.extract import extract_file

    tool = "import click\n\n\n@click.command()\n@click.option('--batch_size', type=int, default=100)\ndef shuffle(batch_size):\n    run(batch_size)\n"
    assert not extract_file("data/shuffle.py", tool.encode()).arg_options  # no trainer in the file: not a training knob


# --- G4: a model frozen in its builder is not a full-parameter fine-tune ----------------------------------------------------------

_OF_FACTORY = ("from transformers import AutoModelForCausalLM\n\n\ndef create_model_and_transforms():\n"
               "    lang = AutoModelForCausalLM.from_pretrained('mosaicml/mpt-1b-redpajama-200b')\n    model = Flamingo(lang)\n"
               "    {freeze}\n    model.perceiver.requires_grad_(True)\n    return model\n")


def test_a_model_frozen_in_its_builder_is_not_full_parameter_training():
    # open_flamingo G4: "full-parameter fine-tuning (no LoRA/PEFT)", where factory.py:105 freezes the whole model and only
    # the Perceiver and the cross-attention layers train (G5 and H1 cite the same line)
    files = {"open_flamingo/src/factory.py": _OF_FACTORY.format(freeze="model.requires_grad_(False)"),
             "open_flamingo/train/train.py": _OF_TRAIN.replace("import torch\n", "import torch\nfrom open_flamingo.src.factory import create_model_and_transforms\n", 1)
             .replace("model = DDP(build())", "model = DDP(create_model_and_transforms())")}
    g4 = _check(_audit(files), "G4")
    assert "part of the model is frozen" in g4.detail and "full-parameter" not in g4.detail, g4.detail


def test_control_a_freeze_under_a_switch_keeps_full_parameter_training():
    files = {"open_flamingo/src/factory.py": _OF_FACTORY.format(freeze="if freeze_lm:\n        model.requires_grad_(False)"),
             "open_flamingo/train/train.py": _OF_TRAIN.replace("import torch\n", "import torch\nfrom open_flamingo.src.factory import create_model_and_transforms\n", 1)
             .replace("model = DDP(build())", "model = DDP(create_model_and_transforms())")}
    assert "full-parameter" in _check(_audit(files), "G4").detail


def test_an_empty_fsdp_config_is_not_fsdp():
    # BELLE, trlx, smollm: accelerate configs with `distributed_type: DEEPSPEED` and an empty `fsdp_config: {}`; the overview
    # listed fsdp among the frameworks while A2/B5 said FSDP is not used
    acc = "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nfsdp_config: {fsdp}\nnum_processes: 8\n"
    files = {"train.py": _SFT.format(kw="", attr=""), "configs/accelerate_config.yaml": acc.format(fsdp="{}")}
    assert "fsdp" not in _audit(files).project.frameworks
    files["configs/accelerate_config.yaml"] = acc.format(fsdp="\n  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_offload_params: false")
    assert "fsdp" in _audit(files).project.frameworks  # control: an FSDP config with settings in it
