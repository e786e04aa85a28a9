"""Round 45 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.model import Status

from .claims import audit as _audit
from .claims import check as _check

# --- THUDM/GLM: a fastText language-ID model that filters the corpus named as the trained model -------------------------

_GLM_CORPORA = (
    "import fasttext\nfrom torch.utils import data\n\n\nclass LanguageFilter(data.Dataset):\n"
    "    def __init__(self, ds):\n        self.ds = ds\n"
    "        self.model = fasttext.load_model('/mnt/lid.176.bin')\n\n"
    "    def __getitem__(self, idx):\n        text = self.ds[idx]\n"
    "        lang = self.model.predict(text.replace('\\n', ''))[0][0]\n        return text if lang == '__label__en' else ''\n")
_GLM_TRAIN = (
    "import torch\nfrom transformers import AutoModelForCausalLM\nfrom data_utils.corpora import LanguageFilter\n\n\n"
    "def main():\n    model = AutoModelForCausalLM.from_pretrained('THUDM/glm-large')\n"
    "    loader = torch.utils.data.DataLoader(LanguageFilter([]), batch_size=8)\n"
    "    for batch in loader:\n        model(**batch).loss.backward()\n\n\nif __name__ == '__main__':\n    main()\n")


def test_a_language_id_classifier_is_not_the_trained_model():
    a = _audit({"data_utils/corpora.py": _GLM_CORPORA, "pretrain_glm.py": _GLM_TRAIN,
                "run.sh": "deepspeed pretrain_glm.py\n"})
    assert "/mnt/lid.176.bin" not in a.project.model_names
    assert "THUDM/glm-large" in a.project.model_names
    # control: the project's own load_model with a hub ID still names the model
    b = _audit({"data_utils/corpora.py": _GLM_CORPORA.replace("fasttext.load_model", "load_model").replace(
        "import fasttext\n", "from models import load_model\n").replace("/mnt/lid.176.bin", "THUDM/glm-10b"),
        "pretrain_glm.py": _GLM_TRAIN, "run.sh": "deepspeed pretrain_glm.py\n"})
    assert "THUDM/glm-10b" in b.project.model_names


# --- modelscope/ms-swift: a weight-sync engine's ZeroMQ socket address and a regex read as training-data locations ------------

_SWIFT_SYNC = (
    "import zmq\n\n\nclass NCCLCheckpointEngine:\n    def _connect_zmq_client(self, metadata):\n"
    "        context = zmq.Context()\n        self.socket = context.socket(zmq.SUB)\n"
    "        address = f'tcp://[{metadata.zmq_ip}]:{metadata.zmq_port}'\n        self.socket.connect(address)\n")
_SWIFT_SYNTAX = (
    "import re\n\n\ndef parse_dataset_id(dataset_id):\n"
    "    match_ = re.search('/datasets--.+?--(.+?)/snapshots/', dataset_id)\n    return match_.group(1) if match_ else dataset_id\n")
_SWIFT_SFT = (
    "from swift_lite.sync import NCCLCheckpointEngine\nfrom swift_lite.syntax import parse_dataset_id\n"
    "from transformers import Trainer\n\n\ndef main(args):\n    engine = NCCLCheckpointEngine()\n"
    "    data = load_dataset('json', data_files=parse_dataset_id(args.dataset))\n"
    "    Trainer(model=args.model, train_dataset=data).train()\n\n\nif __name__ == '__main__':\n    main(None)\n")


def _swift_files(extra: str = "") -> dict[str, str]:
    return {"swift_lite/sync.py": _SWIFT_SYNC, "swift_lite/syntax.py": _SWIFT_SYNTAX, "swift_lite/__init__.py": "",
            "train.py": _SWIFT_SFT + extra, "run.sh": "torchrun --nproc_per_node 8 train.py\n"}


def test_a_socket_address_and_a_regex_are_not_training_data_locations():
    from checks.rules.i_infra import data_locations
    a = _audit(_swift_files())
    values = {d.value for d in data_locations(a.facts)}
    assert not any(v.startswith("tcp://") or ".+?" in v for v in values), values
    for cid in ("I1", "I2"):
        assert "tcp://" not in (_check(a, cid).detail or ""), _check(a, cid).detail
    # control: an object-store path on a data line is still a location
    b = _audit(_swift_files("\nDATA_SHARDS = 's3://bucket/data/train-00000.jsonl'\n"))
    assert "s3://bucket/data/train-00000.jsonl" in {d.value for d in data_locations(b.facts)}


# --- facebookresearch/metaseq: the validation loader's num_workers_valid read as the training num_workers -------------------

_METASEQ_CONFIGS = (
    "from dataclasses import dataclass, field\n\n\n@dataclass\nclass DatasetConfig:\n"
    "    num_workers: int = field(default=4, metadata={'help': 'how many subprocesses to use for data loading'})\n"
    "    num_workers_valid: int = field(default=0, metadata={'help': 'subprocesses for data loading during validation'})\n")
_METASEQ_TRAINER = (
    "import torch\nfrom metaseq_lite.configs import DatasetConfig\n\n\nclass Trainer:\n    def __init__(self, cfg):\n"
    "        self.cfg = cfg\n\n    def get_train_iterator(self, ds):\n"
    "        return torch.utils.data.DataLoader(ds, num_workers=self.cfg.dataset.num_workers, pin_memory=True)\n\n"
    "    def get_valid_iterator(self, ds):\n"
    "        return torch.utils.data.DataLoader(ds, num_workers=self.cfg.dataset.num_workers_valid)\n\n"
    "    def train_step(self, batch):\n        loss = self.model(batch)\n        loss.backward()\n")


def test_a_validation_loaders_worker_setting_is_not_the_training_loaders():
    files = {"metaseq_lite/configs.py": _METASEQ_CONFIGS, "metaseq_lite/trainer.py": _METASEQ_TRAINER,
             "metaseq_lite/__init__.py": "", "train.py": "from metaseq_lite.trainer import Trainer\n\n\ndef main():\n"
             "    Trainer(None).train_step(None)\n", "run.sh": "torchrun --nproc_per_node 8 train.py\n"}
    a = _audit(files)
    assert {s.value for s in a.facts.settings("num_workers")} == {4}
    assert _check(a, "F1").status is Status.USED, _check(a, "F1").detail
    # control: a training loader that reads a 0-worker setting still reads it
    files["metaseq_lite/configs.py"] = _METASEQ_CONFIGS.replace("default=4", "default=0")
    assert _check(_audit(files), "F1").status is not Status.USED


# --- Alpha-VLLM/LLaMA2-Accessory: parser.set_defaults(pin_mem=True) over a store_true --pin_mem --------------------------

_ACC_MAIN = (
    "import argparse\nimport torch\n\n\ndef get_args_parser():\n    parser = argparse.ArgumentParser('finetune', add_help=False)\n"
    "    parser.add_argument('--num_workers', default=8, type=int)\n"
    "    parser.add_argument('--pin_mem', action='store_true',\n"
    "                        help='Pin CPU memory in DataLoader for more efficient (sometimes) transfer to GPU.')\n"
    "    parser.add_argument('--no_pin_mem', action='store_false', dest='pin_mem')\n"
    "    parser.set_defaults(pin_mem=True)\n    return parser\n\n\n"
    "def main(args):\n    data_loader_train = torch.utils.data.DataLoader(\n        dataset_train, batch_size=args.batch_size,\n"
    "        num_workers=args.num_workers,\n        pin_memory=args.pin_mem,\n        drop_last=True,\n    )\n"
    "    for batch in data_loader_train:\n        model(batch).backward()\n")


def test_argparse_set_defaults_replaces_the_options_default():
    files = {"accessory/main_finetune.py": _ACC_MAIN,
             "exps/finetune.sh": "torchrun --nproc_per_node 8 accessory/main_finetune.py --batch_size 4\n"}
    a = _audit(files)
    f3 = _check(a, "F3")
    assert f3.status is Status.USED, f3.detail
    assert any(e.line == 11 for e in f3.evidence), [(e.path, e.line) for e in f3.evidence]  # the set_defaults line
    # control: without set_defaults, --pin_mem is off unless a launch passes it
    files["accessory/main_finetune.py"] = _ACC_MAIN.replace("    parser.set_defaults(pin_mem=True)\n", "")
    assert _check(_audit(files), "F3").status is not Status.USED


# --- FasterDecoding/Medusa: --save_strategy "no" on the launch read as HF's default of a save every 500 steps -----------------

_MEDUSA_TRAIN = (
    "import transformers\nfrom transformers import Trainer\n\n\ndef train():\n"
    "    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))\n"
    "    model_args, data_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    trainer = Trainer(model=model, tokenizer=tokenizer, args=training_args, **data_module)\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    train()\n")


def test_save_strategy_no_on_a_launch_means_no_step_checkpoints():
    run = ("torchrun --nproc_per_node=4 medusa/train/train_legacy.py --model_name_or_path lmsys/vicuna-7b-v1.3 \\\n"
           "    --bf16 True \\\n    --save_strategy \"no\" \\\n    --learning_rate 1e-3\n")
    i3 = _check(_audit({"medusa/train/train_legacy.py": _MEDUSA_TRAIN, "scripts/train.sh": run}), "I3")
    assert "no step-interval checkpoint" in (i3.detail or "") and "'no'" in i3.detail and "500 steps" not in i3.detail, i3.detail
    # control: --save_strategy steps keeps HF's default interval
    i3 = _check(_audit({"medusa/train/train_legacy.py": _MEDUSA_TRAIN, "scripts/train.sh": run.replace('"no"', "steps")}), "I3")
    assert "500 steps" in (i3.detail or ""), i3.detail


# --- ms-swift: NCCL_CUMEM_ENABLE=0 and TORCH_NCCL_AVOID_RECORD_STREAMS=1 read as a transport switch and a diagnostic -----

def test_collective_memory_settings_are_neither_a_transport_switch_nor_a_diagnostic():
    train = ("import os\nimport torch\n\n\ndef main():\n    os.environ['NCCL_CUMEM_ENABLE'] = '0'\n"
             "    torch.distributed.init_process_group('nccl')\n    loss = model(batch)\n    loss.backward()\n\n\nmain()\n")
    e4 = _check(_audit({"train.py": train, "run.sh": "torchrun --nnodes 2 --nproc_per_node 8 train.py\n"}), "E4")
    assert e4.status is Status.UNUSED and "switch transports off" not in (e4.detail or "") and "memory setting" in e4.detail, e4.detail
    # control: NCCL_P2P_DISABLE=1 is a transport switched off
    e4 = _check(_audit({"train.py": train.replace("NCCL_CUMEM_ENABLE'] = '0'", "NCCL_P2P_DISABLE'] = '1'"),
                        "run.sh": "torchrun --nnodes 2 --nproc_per_node 8 train.py\n"}), "E4")
    assert "switch transports off" in (e4.detail or ""), e4.detail


# --- THUDM/GLM: TensorBoard scalars written by a helper the while loop calls every log_interval iterations ----------------

_GLM_PRETRAIN = (
    "import argparse\nfrom tensorboardX import SummaryWriter\nfrom train_utils import train_step\n\n\n"
    "def report_iteration_metrics(summary_writer, optimizer, lr, loss, elapsed_time, step, total_step, args):\n"
    "    print_rank_0(' iteration {:8d}/{:8d} |'.format(step, total_step))\n"
    "    if summary_writer is not None:\n        summary_writer.add_scalar(f'Train/lr', lr, step)\n"
    "        summary_writer.add_scalar(f'Train/train_loss', loss, step)\n\n\n"
    "def train(model, optimizer, lr_scheduler, train_data_iterator, summary_writer, args):\n"
    "    total_lm_loss = 0.0\n    while args.iteration < args.train_iters:\n"
    "        lm_loss, skipped_iter, mems = train_step(train_data_iterator, model, optimizer, lr_scheduler, args)\n"
    "        args.iteration += 1\n        total_lm_loss += lm_loss.data.detach().float()\n"
    "        if args.iteration % args.log_interval == 0:\n            learning_rate = optimizer.param_groups[0]['lr']\n"
    "            report_iteration_metrics(summary_writer, optimizer, learning_rate, total_lm_loss, 0.0, args.iteration,\n"
    "                                     args.train_iters, args)\n            total_lm_loss = 0.0\n\n\n"
    "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--log-interval', type=int, default=100)\n"
    "    args = parser.parse_args()\n    train(None, None, None, None, SummaryWriter(log_dir='runs'), args)\n\n\n"
    "if __name__ == '__main__':\n    main()\n")
_GLM_TRAIN_UTILS = (
    "def train_step(data_iterator, model, optimizer, lr_scheduler, args):\n    loss = model(next(data_iterator))\n"
    "    model.backward(loss)\n    model.step()\n    return loss, 0, []\n")


def test_tracker_reports_from_a_helper_the_while_loop_calls_on_an_iteration_interval():
    files = {"pretrain_glm.py": _GLM_PRETRAIN, "train_utils.py": _GLM_TRAIN_UTILS,
             "scripts/ds_pretrain.sh": "deepspeed --num_gpus 8 pretrain_glm.py --log-interval 50\n"}
    i5 = _check(_audit(files), "I5")
    assert i5.status is Status.USED and "report_iteration_metrics" in (i5.detail or "") and "50" in i5.detail, i5.detail
    # control: called every iteration, the same helper reports every step
    files["pretrain_glm.py"] = _GLM_PRETRAIN.replace("        if args.iteration % args.log_interval == 0:\n",
                                                     "        if args.iteration % 1 == 0:\n")
    assert _check(_audit(files), "I5").status is Status.UNUSED


# --- mosaicml/llm-foundry: an HF-export callback's ``cpu_offload = True`` read as training offload ---------------------------

_LF_CHECKPOINTER = (
    "from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict\n\n\n"
    "class HuggingFaceCheckpointer:\n    def _save_checkpoint(self, state):\n        state_dict_model = state.model.model\n"
    "        cpu_offload = True\n\n"
    "        state_dict = get_model_state_dict(\n            state_dict_model,\n"
    "            options=StateDictOptions(\n                full_state_dict=True,\n                cpu_offload=cpu_offload,\n"
    "            ),\n        )\n        return state_dict\n")
_LF_TRAIN = (
    "from composer import Trainer\nfrom llmfoundry_lite.callbacks import HuggingFaceCheckpointer\n\n\n"
    "def main(cfg):\n    trainer = Trainer(model=cfg.model, train_dataloader=cfg.loader, callbacks=[HuggingFaceCheckpointer()],\n"
    "                      parallelism_config={'fsdp': cfg.fsdp_config})\n    trainer.fit()\n")


def test_a_local_switch_read_only_by_a_state_dict_gather_is_not_training_offload():
    files = {"llmfoundry_lite/callbacks.py": _LF_CHECKPOINTER, "llmfoundry_lite/__init__.py": "", "train.py": _LF_TRAIN,
             "run.sh": "composer train.py yamls/mpt-125m.yaml\n"}
    assert _check(_audit(files), "C4").status is not Status.USED
    # control: the same switch handed to the FSDP wrapper offloads the training state
    files["llmfoundry_lite/callbacks.py"] = _LF_CHECKPOINTER.replace(
        "        return state_dict\n", "        return FullyShardedDataParallel(state_dict_model, cpu_offload=cpu_offload)\n")
    assert _check(_audit(files), "C4").status is Status.USED


# --- llm-foundry: PYTORCH_CUDA_ALLOC_CONF assembled in code from a field that defaults to expandable segments ----------------

_LF_ALLOC = (
    "import os\nfrom dataclasses import dataclass\nfrom typing import Optional\n\n\n@dataclass\nclass TrainConfig:\n"
    "    max_split_size_mb: Optional[int] = None\n    expandable_segments: bool = True\n\n\n"
    "def train(train_cfg: TrainConfig, model, loader):\n    cuda_alloc_conf = []\n"
    "    max_split_size_mb: Optional[int] = train_cfg.max_split_size_mb\n    if max_split_size_mb is not None:\n"
    "        cuda_alloc_conf.append(f'max_split_size_mb:{max_split_size_mb}')\n\n"
    "    if train_cfg.expandable_segments:\n        cuda_alloc_conf.append('expandable_segments:True')\n\n"
    "    if len(cuda_alloc_conf) > 0:\n        os.environ['PYTORCH_CUDA_ALLOC_CONF'] = ','.join(cuda_alloc_conf)\n"
    "    for batch in loader:\n        model(batch).loss.backward()\n")


def test_an_allocator_config_assembled_from_a_default_on_field_is_allocator_tuning():
    files = {"train.py": _LF_ALLOC, "run.sh": "torchrun --nproc_per_node 8 train.py\n"}
    c6 = _check(_audit(files), "C6")
    assert c6.status is Status.USED and {e.line for e in c6.evidence} >= {19, 22}, (c6.status, c6.detail, c6.evidence)
    # control: the field defaults to off, so nothing tunes the allocator
    files["train.py"] = _LF_ALLOC.replace("expandable_segments: bool = True", "expandable_segments: bool = False")
    assert _check(_audit(files), "C6").status is not Status.USED


# --- llm-foundry: a documented composer command run on each node with its rank, and the composer launcher's processes -------

_LF_README = (
    "# Training\n\n### Multi-Node via CLI args\n\n```bash\n# Using 2 nodes each with 8 devices\n# Node 0\n"
    "composer --world_size 16 --node_rank 0 --master_addr 0.0.0.0 --master_port 7501 train.py yamls/pretrain/mpt-125m.yaml\n\n"
    "# Node 1\ncomposer --world_size 16 --node_rank 1 --master_addr 0.0.0.0 --master_port 7501 train.py yamls/pretrain/mpt-125m.yaml\n"
    "```\n")


def test_a_documented_per_node_command_with_a_rendezvous_is_multi_node_and_composer_runs_many_processes():
    files = {"train.py": _LF_TRAIN, "llmfoundry_lite/callbacks.py": _LF_CHECKPOINTER, "llmfoundry_lite/__init__.py": "",
             "scripts/train/README.md": _LF_README, "run.sh": "composer train.py yamls/pretrain/mpt-125m.yaml\n"}
    a = _audit(files)
    e1, e3 = _check(a, "E1"), _check(a, "E3")
    assert e1.status is not Status.NA and "scripts/train/README.md:8" in (e1.detail or ""), (e1.status, e1.detail)
    assert "no distributed training found" not in (e3.detail or ""), e3.detail
    # control: a single-node README command and a one-process composer launch
    files["scripts/train/README.md"] = "```bash\ncomposer train.py yamls/pretrain/mpt-125m.yaml\n```\n"
    files["run.sh"] = "composer -n 1 train.py yamls/pretrain/mpt-125m.yaml\n"
    b = _audit(files)
    assert _check(b, "E1").status is Status.NA and "no distributed training found" in (_check(b, "E3").detail or "")


# --- llm-foundry: Composer's global / device micro-batch pair is gradient accumulation ------------------------------------

def test_composers_global_batch_over_the_device_micro_batch_is_accumulation():
    def recipe(g: int, m: int) -> str:
        return (f"max_seq_len: 2048\nglobal_seed: 17\nmodel:\n  name: mpt_causal_lm\n  d_model: 768\n"
                f"global_train_batch_size: {g}\ndevice_train_microbatch_size: {m}\nprecision: amp_bf16\n")
    files = {"train.py": _LF_TRAIN, "llmfoundry_lite/callbacks.py": _LF_CHECKPOINTER, "llmfoundry_lite/__init__.py": "",
             "run.sh": "composer train.py yamls/pretrain/mpt-125m.yaml\n",
             "yamls/pretrain/mpt-125m.yaml": recipe(256, 16), "yamls/pretrain/mpt-350m.yaml": recipe(256, 8)}
    c5 = _check(_audit(files), "C5")
    assert c5.status is Status.USED and "Composer global batch" in (c5.detail or "") and "2 of 2 recipes" in c5.detail, c5.detail
    # control: a global batch of one micro-batch per GPU on a node does not accumulate
    files["yamls/pretrain/mpt-125m.yaml"], files["yamls/pretrain/mpt-350m.yaml"] = recipe(128, 16), recipe(64, 8)
    assert _check(_audit(files), "C5").status is not Status.USED


# --- bytedance/SALMONN: an audio-language model called a text-only project ------------------------------------------------

_SALMONN_MODEL = (
    "import torch\nfrom torch import nn\nfrom .modeling_llama import LlamaForCausalLM\nfrom .modeling_whisper import WhisperModel\n\n\n"
    "class SALMONN(nn.Module):\n    def __init__(self, llama_path, whisper_path, freeze_whisper=True):\n        super().__init__()\n"
    "        self.llama_model = LlamaForCausalLM.from_pretrained(llama_path, torch_dtype=torch.float16)\n"
    "        self.speech_encoder = WhisperModel.from_pretrained(whisper_path).encoder\n"
    "        if freeze_whisper:\n            for p in self.speech_encoder.parameters():\n                p.requires_grad = False\n")
_SALMONN_TRAIN = (
    "from models.salmonn import SALMONN\n\n\ndef main():\n    model = SALMONN('lmsys/vicuna-13b-v1.1', 'openai/whisper-large-v2')\n"
    "    for batch in loader:\n        model(batch).loss.backward()\n\n\nif __name__ == '__main__':\n    main()\n")


def test_an_audio_language_model_is_not_called_text_only():
    files = {"models/salmonn.py": _SALMONN_MODEL, "models/__init__.py": "", "train.py": _SALMONN_TRAIN,
             "README.md": "```bash\npython3 train.py --cfg-path configs/config.yaml\n```\n"}
    h1 = _check(_audit(files), "H1")
    assert h1.status is Status.NA and "audio-language model (WhisperModel at models/salmonn.py:11)" in (h1.detail or ""), h1.detail
    # control: without the speech encoder it is text-only
    files["models/salmonn.py"] = _SALMONN_MODEL.replace("WhisperModel.from_pretrained(whisper_path).encoder", "None")
    assert "text-only project" in (_check(_audit(files), "H1").detail or "")


# --- Alpha-VLLM/LLaMA2-Accessory: "token routing needs all-to-all exchanges" where no all-to-all runs --------------------------

_MOE_TRAIN = (
    "import torch\nfrom megatron.core import parallel_state\n\n\ndef pretrain(args):\n    model = GPTModel(num_moe_experts=args.num_experts)\n"
    "    for batch in loader:\n        model(batch).backward()\n")


def test_all_to_all_is_claimed_only_where_experts_exchange_tokens_all_to_all():
    run = ("torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-experts 8 --expert-model-parallel-size 4 "
           "--tensor-model-parallel-size 1 --bf16\n")
    a = _audit({"pretrain_gpt.py": _MOE_TRAIN, "run.sh": run})
    assert any("all-to-all exchanges every layer" in r and "run.sh:1" in r for r in a.project.bottleneck_reasons), a.project.bottleneck_reasons
    # control: experts replicated on every GPU (no expert parallelism): no exchange per layer is claimed
    b = _audit({"pretrain_gpt.py": _MOE_TRAIN, "run.sh": run.replace("--expert-model-parallel-size 4 ", "")})
    assert b.project.moe and not any("mixture-of-experts" in r for r in b.project.bottleneck_reasons), b.project.bottleneck_reasons


# --- ms-swift: "metrics logged every step" where most recipes, and the default, log every 5 --------------------------------

_SWIFT_ARGS = (
    "from dataclasses import dataclass, field\nimport transformers\nfrom transformers import Trainer\n\n\n@dataclass\n"
    "class TrainingArguments(transformers.TrainingArguments):\n    logging_steps: int = field(default=5)\n\n\n"
    "def main():\n    parser = transformers.HfArgumentParser((TrainingArguments,))\n"
    "    (args,) = parser.parse_args_into_dataclasses()\n    Trainer(model=None, args=args).train()\n\n\nmain()\n")


def _swift_recipes(default: int, steps: list[int]) -> dict[str, str]:
    files = {"train.py": _SWIFT_ARGS.replace("default=5", f"default={default}")}
    for i, n in enumerate(steps):
        files[f"examples/run_{i}.sh"] = f"torchrun --nproc_per_node 8 train.py --learning_rate 1e-5 --logging_steps {n}\n"
    files["examples/run_unset.sh"] = "torchrun --nproc_per_node 8 train.py --learning_rate 1e-5\n"
    return files


def test_a_code_default_recipes_leave_in_place_votes_with_them_in_the_headline():
    i4 = _check(_audit(_swift_recipes(5, [5, 5, 1, 1])), "I4")
    assert i4.status is Status.UNUSED and (i4.detail or "").startswith("metrics logged every 5 steps"), i4.detail
    # control: with a default of 1, most recipes log every step
    assert (_check(_audit(_swift_recipes(1, [5, 5, 1, 1])), "I4").detail or "").startswith("metrics logged every step")


# --- imoneoi/openchat: two .item() per step of a 7B model called a latency-bound sign ------------------------------------

def test_a_sync_per_step_of_a_large_model_is_not_a_latency_sign_on_its_own():
    train = ("import torch\n\n\ndef train(model, loader, optimizer):\n    for batch in loader:\n"
             "        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n"
             "        print(loss.item())\n")
    run = "torchrun --nproc_per_node 8 train.py --model_name_or_path {m}\n"
    big = _audit({"train.py": train, "run.sh": run.format(m="meta-llama/Llama-2-7b-hf")}).project.bottleneck_reasons
    assert any("synchronisation point" in r and "small share" in r for r in big), big
    small = _audit({"train.py": train, "run.sh": run.format(m="gpt2")}).project.bottleneck_reasons
    assert any("synchronisation point" in r and "small share" not in r for r in small), small


# --- modelscope/ms-swift: the `swift sft` / `megatron sft` commands of its 300 example recipes were not read --------------

_SWIFT_LIGER = (
    "# test env: 4 * A100\nNPROC_PER_NODE=4 \\\nCUDA_VISIBLE_DEVICES=0,1,2,3 \\\nswift sft \\\n    --model Qwen/Qwen2.5-7B \\\n"
    "    --tuner_type full \\\n    --dataset 'liucong/Chinese-DeepSeek-R1-Distill-data-110k-SFT#10000' \\\n"
    "    --torch_dtype bfloat16 \\\n    --per_device_train_batch_size 1 \\\n    --gradient_accumulation_steps 2 \\\n"
    "    --save_steps 100 \\\n    --logging_steps 5 \\\n    --deepspeed zero3 \\\n    --use_liger_kernel true\n")
_SWIFT_FP8 = (
    "PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True' \\\nNPROC_PER_NODE=8 \\\nmegatron sft \\\n"
    "    --model Qwen/Qwen3-30B-A3B-Instruct-2507-FP8 \\\n    --fp8_recipe blockwise \\\n    --fp8_format e4m3 \\\n"
    "    --fp8_param_gather true \\\n    --tensor_model_parallel_size 2 \\\n    --pipeline_model_parallel_size 2 \\\n"
    "    --micro_batch_size 4 \\\n    --global_batch_size 16\n")


def test_ms_swift_commands_are_training_launches_with_their_flags():
    from checks.facts.extract import extract_file
    [launch] = extract_file("examples/train/liger/sft.sh", _SWIFT_LIGER.encode()).launches
    assert (launch.launcher, launch.launcher_args, launch.script) == ("swift", {"command": "sft"}, None)
    assert launch.script_args["use_liger_kernel"] is True and launch.arg_line("use_liger_kernel") == 14
    [mg] = extract_file("examples/megatron/fp8/llm.sh", _SWIFT_FP8.encode()).launches
    assert mg.launcher_args == {"command": "sft", "backend": "megatron"} and mg.script_args["fp8_format"] == "e4m3"
    a = _audit({"examples/train/liger/sft.sh": _SWIFT_LIGER, "examples/megatron/fp8/llm.sh": _SWIFT_FP8})
    assert "ms-swift" in a.project.frameworks
    assert _check(a, "D5").status is Status.USED and _check(a, "C2").status is Status.USED
    assert _check(a, "A5").status is Status.USED and _check(a, "A1").status is Status.USED
    e3 = _check(a, "E3")
    assert e3.status is Status.USED and e3.detail.startswith("parameter all-gathers compressed"), e3.detail
    # control: inference and export commands are no training launch
    b = extract_file("examples/infer/run.sh", b"CUDA_VISIBLE_DEVICES=0 swift infer --model Qwen/Qwen2.5-7B --stream true\n")
    assert not b.launches


# --- ms-swift: a sane save interval headlined by the smallest value when a code default sat beside the recipes -------------

def test_a_sane_interval_with_a_code_default_beside_the_recipes_is_headlined_by_their_majority():
    args = _SWIFT_ARGS.replace("logging_steps: int = field(default=5)", "save_steps: int = field(default=500)")
    files = {"train.py": args}
    for i, n in enumerate([100, 100, 100, 50]):
        files[f"examples/run_{i}.sh"] = f"torchrun --nproc_per_node 8 train.py --learning_rate 1e-5 --save_steps {n}\n"
    files["examples/run_unset.sh"] = "torchrun --nproc_per_node 8 train.py --learning_rate 1e-5\n"  # runs with the default 500
    i3 = _check(_audit(files), "I3")
    assert i3.status is Status.USED and "(save_steps=100)" in (i3.detail or ""), i3.detail


# --- round 46: THUDM/CodeGeeX: an upload of profiler graphs to s3:// read as remote training data; MindSpore unnamed -------

_CODEGEEX_FINETUNE = (
    "import os\nimport moxing as mox\nimport mindspore\nfrom mindspore import context\n\n\n"
    "def run_train(args_opt):\n    context.set_auto_parallel_context(parallel_mode='semi_auto_parallel')\n"
    "    model = build_model(args_opt)\n    try:\n        model.train(args_opt.epoch_size, ds, callbacks=callback)\n"
    "    finally:\n        if args_opt.profiling:\n            jobid = os.environ['BATCH_JOB_ID']\n"
    "            mox.file.make_dirs('s3://wudao-1/yyf/graphs_' + jobid)\n"
    "            mox.file.copy_parallel(src_url='/cache/graphs_of_device_id_0',\n"
    "                                   dst_url='s3://wudao-1/yyf/graphs_' + jobid + '/0')\n")


def test_an_upload_destination_is_no_training_data_read_and_mindspore_is_a_framework():
    files = {"codegeex/mindspore/finetune.py": _CODEGEEX_FINETUNE,
             "codegeex/mindspore/configs/13B_finetune.sh": "python codegeex/mindspore/finetune.py --data_url /cache/Data\n"}
    a = _audit(files)
    assert "mindspore" in a.project.frameworks
    assert not any("read from remote object storage" in r for r in a.project.bottleneck_reasons), a.project.bottleneck_reasons
    # control: a read of training data from the bucket is remote
    files["codegeex/mindspore/finetune.py"] = _CODEGEEX_FINETUNE.replace(
        "    model = build_model(args_opt)\n", "    model = build_model(args_opt)\n    data_path = 's3://wudao-1/data/train_tokens/'\n")
    assert any("read from remote object storage" in r for r in _audit(files).project.bottleneck_reasons)


# --- magic-research/PLLaVA: empty_cache() once per epoch called "every step"; a debug-mode break read as logging ------------

_PLLAVA_TRAIN = (
    "import gc\nimport logging\nimport torch\n\nlogger = logging.getLogger(__name__)\n\n\n"
    "def main(config, model, train_loader, optimizer):\n    global_step = 0\n    log_freq = config.log_freq\n"
    "    for epoch in range(start_epoch, config.scheduler.epochs):\n        gc.collect()\n        torch.cuda.empty_cache()\n"
    "        for i, inputs in enumerate(train_loader):\n            loss = model(**inputs).loss\n"
    "            loss.backward()\n            optimizer.step()\n            global_step += 1\n"
    "            if global_step % log_freq == 0:\n                logger.info(f'loss {loss.item()}')\n"
    "            if config.debug and global_step % 3 == 0:\n"
    "                logger.info('debug mode, break training loop')\n                break\n")
_PLLAVA_CONFIG = "debug = False\nlog_freq = 20\nnum_workers = 8\n"


def test_a_cache_flush_per_epoch_and_a_debug_break_are_not_per_step():
    files = {"tasks/train/train_pllava.py": _PLLAVA_TRAIN, "tasks/train/config_pllava.py": _PLLAVA_CONFIG,
             "scripts/train_pllava.sh": "accelerate launch --num_processes 8 tasks/train/train_pllava.py tasks/train/config_pllava.py\n"}
    a = _audit(files)
    assert "empty_cache" not in (_check(a, "C6").detail or ""), _check(a, "C6").detail
    i4 = _check(a, "I4")
    assert i4.status is Status.USED and "every 2 steps" not in (i4.detail or ""), i4.detail
    # control: the flush inside the step loop runs every step, and a debug switch that is on logs every 3 steps
    files["tasks/train/train_pllava.py"] = _PLLAVA_TRAIN.replace(
        "        gc.collect()\n        torch.cuda.empty_cache()\n", "").replace(
        "            optimizer.step()\n", "            optimizer.step()\n            torch.cuda.empty_cache()\n")
    assert "empty_cache" in (_check(_audit(files), "C6").detail or "")
    files["tasks/train/config_pllava.py"] = _PLLAVA_CONFIG.replace("debug = False", "debug = True")
    assert "every 3 steps" in (_check(_audit(files), "I4").detail or "")


def test_an_interval_computed_in_the_guard_is_not_its_first_term():
    from checks.rules.i_infra import _guard
    f = _audit({"train.py": "log_freq = 5\n"}).facts
    assert _guard(f, "config.debug and global_step % (2 * log_freq + 3) == 0", "train.py") == (True, None)
    assert _guard(f, "global_step % (log_freq) == 0", "train.py") == (True, 5.0)  # control: a parenthesised name is the name


# --- OpenLMLab/MOSS-RLHF: a checkpoint-save message and an evaluation summary read as the step's metrics logging -----------

def test_log_lines_of_save_and_evaluate_functions_are_not_the_steps_metrics():
    trainer = (
        "import logging\n\nlogger = logging.getLogger(__name__)\n\n\nclass Trainer:\n"
        "    def train(self, loader):\n        for step, batch in enumerate(loader):\n            loss = self.model(batch)\n"
        "            loss.backward()\n            self.optimizer.step()\n"
        "            if step % self.save_per_step == 0:\n                self._save_checkpoint(step)\n\n"
        "    def _save_checkpoint(self, step):\n        torch.save(self.model.state_dict(), f'ckpt_{step}.pt')\n"
        "        logger.info(f'saved checkpoint at step {step}')\n")
    files = {"ppo/trainer.py": trainer, "train.py": "from ppo.trainer import Trainer\nTrainer().train(loader)\n",
             "run.sh": "accelerate launch train.py --save_per_step 100\n"}
    i4 = _check(_audit(files), "I4")
    assert "_save_checkpoint" not in (i4.detail or ""), i4.detail
    # control: the same helper named for logging is the step's log, at the save interval
    files["ppo/trainer.py"] = trainer.replace("_save_checkpoint", "_log_progress")
    assert "_log_progress" in (_check(_audit(files), "I4").detail or "")


def test_a_guarded_saving_message_is_the_saves_not_the_steps_metrics():
    from checks.rules.i_infra import log_calls
    loop = ("import logging\n\nlogger = logging.getLogger(__name__)\n\n\ndef train(args, loader):\n    for update_step, batch in "
            "enumerate(loader):\n        model(batch).backward()\n        if update_step % args.save_every == 0:\n"
            "            logger.info(f'Saving model and optimizer to {args.save_dir}, update step {update_step}')\n"
            "        if update_step % args.eval_every == 0:\n            logger.info(f'Eval loss at step {update_step}: {loss}')\n")
    lines = {c.line for c in log_calls(_audit({"torchrun_main.py": loop}).facts)}
    assert 10 not in lines and 12 in lines, lines



# --- FlagEmbedding: a hostfile written by an old example under research/old-examples/ read as multi-node ---------------------

def test_an_old_examples_folder_is_an_archived_copy():
    from checks.roles import path_role
    assert path_role("research/old-examples/unified_finetune/run.sh", "shell")[0] == "archive"
    assert path_role("examples/finetune/run.sh", "shell")[0] is None
    assert path_role("models_old/train.py", "python")[0] == "archive"


# --- RLHF-Reward-Modeling: a sentiment-analysis pipeline scoring responses read as an inference workload; G6 for a scalar RM --

_RM_TRAIN = (
    "import torch.nn as nn\nfrom transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments\n\n\n"
    "class RewardTrainer(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False):\n"
    "        rewards = model(input_ids=inputs['input_ids'], attention_mask=inputs['attention_mask'])[0]\n"
    "        loss = -nn.functional.logsigmoid(rewards[0::2] - rewards[1::2]).mean()\n        return loss\n\n\n"
    "model = AutoModelForSequenceClassification.from_pretrained('google/gemma-2b-it', num_labels=1)\n"
    "trainer = RewardTrainer(model=model, args=TrainingArguments(output_dir='out', bf16=True), train_dataset=ds)\n"
    "trainer.train()\n")
_RM_SERVE = ("from transformers import pipeline\n\nrm_pipe = pipeline('sentiment-analysis', model='RLHFlow/ArmoRM', device=0)\n"
             "scores = rm_pipe(['a chat'], return_all_scores=True, function_to_apply='none', batch_size=1)\n")


def test_a_scoring_pipeline_is_no_generation_and_a_scalar_reward_model_has_no_logits_to_fuse():
    a = _audit({"bradley-terry-rm/gemma_2B_rm.py": _RM_TRAIN, "odin/serving_two_head.py": _RM_SERVE})
    assert not a.project.does_inference
    assert (_check(a, "J1").detail or "").startswith("no inference workload in scope"), _check(a, "J1").detail
    g6 = _check(a, "G6")
    assert g6.status is Status.NA and "reward-model training only" in (g6.detail or ""), (g6.status, g6.detail)
    # control: a text-generation pipeline in a serving script is inference; a DPO run beside the RM is judged
    b = _audit({"bradley-terry-rm/gemma_2B_rm.py": _RM_TRAIN,
                "odin/serving_two_head.py": _RM_SERVE.replace("'sentiment-analysis'", "'text-generation'"),
                "dpo.py": "from trl import DPOTrainer\nDPOTrainer(model=m, args=a, train_dataset=d).train()\n"})
    assert b.project.does_inference and _check(b, "G6").status is Status.UNUSED


# --- CodeGeeX: a Megatron global batch over a micro-batch with no GPU count called "no gradient accumulation" -----------------

def test_a_megatron_batch_pair_without_a_gpu_count_is_not_judged_with_what_it_would_be():
    run = ("GLOBAL_BATCH=560\nMICRO_BATCH=10\ndeepspeed --hostfile $HOSTFILE pretrain_codegeex.py --micro-batch-size $MICRO_BATCH "
           "--global-batch-size $GLOBAL_BATCH --seq-length 2048 --fp16\n")
    train = "import torch\n\n\ndef train_step(model, batch):\n    loss = model(batch)\n    model.backward(loss)\n    model.step()\n"
    c5 = _check(_audit({"pretrain_codegeex.py": train, "scripts/pretrain.sh": run}), "C5")
    assert c5.status is Status.NA and "7 on one node of 8 GPUs" in (c5.detail or ""), (c5.status, c5.detail)
    # control: a global batch of one micro-batch per GPU of a node is no accumulation to judge
    c5 = _check(_audit({"pretrain_codegeex.py": train, "scripts/pretrain.sh": run.replace("560", "80")}), "C5")
    assert c5.status is not Status.NA


# --- X-PLUG/mPLUG-DocOwl: "trains on a single GPU" beside launches over every visible GPU; an MoE behind an unset getattr -------

def test_a_process_count_set_at_start_up_is_not_a_single_gpu_and_an_unset_getattr_switch_is_off():
    owl = ("GPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)\n"
           "torchrun --nproc_per_node $GPUS_PER_NODE --nnodes 1 train_docowl.py --bf16 True\n")
    paper = "torchrun --nproc_per_node 1 --nnodes 1 pipeline/train.py --bf16\n"
    proj = ("import torch.nn as nn\n\n\ndef build_vision_projector(config):\n    mlp = nn.Linear(config.mm_hidden_size, config.hidden_size)\n"
            "    if getattr(config, 'load_moe_mm_projector', False):\n        from deepspeed.moe.layer import MoE\n"
            "        mlp = MoE(config.mm_hidden_size, expert=mlp, num_experts=4, ep_size=1, k=2)\n    return mlp\n")
    train = ("import torch\nfrom owl.projector import build_vision_projector\n\n\ndef train(config, loader, optimizer):\n"
             "    model = build_vision_projector(config)\n    for batch in loader:\n        model(batch).sum().backward()\n"
             "        optimizer.step()\n")
    files = {"DocOwl/scripts/finetune.sh": owl, "PaperOwl/scripts/train_it.sh": paper, "owl/projector.py": proj,
             "owl/__init__.py": "", "train_docowl.py": train, "pipeline/train.py": train}
    a = _audit(files)
    assert a.project.num_gpus is None and not a.project.moe
    assert _check(a, "A7").status is Status.NA and _check(a, "B1").status is not Status.USED  # (the MoE layer is DeepSpeed's)
    # control: assigned anywhere, the switch may be on: the MoE layer counts
    files["owl/config.py"] = "class Config:\n    def __init__(self):\n        self.load_moe_mm_projector = True\n"
    assert _audit(files).project.moe



def test_an_unset_getattr_switch_is_off_only_on_a_config_object():
    from checks.rules._helpers import _unset_get_off
    f = _audit({"train.py": "import torch\n"}).facts
    assert _unset_get_off(f, "getattr(config, 'load_moe_mm_projector', False)")
    # control: a model's attribute is the library's (every HF model sets supports_gradient_checkpointing)
    assert not _unset_get_off(f, "training_args.gradient_checkpointing and getattr(model, 'supports_gradient_checkpointing', False)")


# --- unslothai/unsloth: a web front end's recipe JSON read as model names ------------------------------------------------

def test_a_web_front_end_is_a_side_project():
    from checks.roles import path_role
    assert path_role("studio/frontend/src/features/data-recipes/learning-recipes/conversation.json", "json")[0] == "side"
    recipe = ('{"recipe": {"columns": [{"name": "domain"}]}, "ui": {"nodes": [{"id": "note_1", "node_type": "markdown_note", '
              '"name": "note_1"}]}, "model_name": "note_1"}\n')
    files = {"studio/frontend/src/features/data-recipes/conversation.json": recipe,
             "train.py": "from trl import SFTTrainer\nSFTTrainer(model='unsloth/llama-3-8b', train_dataset=d).train()\n"}
    assert "note_1" not in _audit(files).project.model_names
    # control: the same JSON outside a front end is read
    files["recipes/conversation.json"] = files.pop("studio/frontend/src/features/data-recipes/conversation.json")
    assert "note_1" in _audit(files).project.model_names
