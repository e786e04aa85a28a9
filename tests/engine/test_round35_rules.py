"""Round 35 (issue #9): llm.c, MiniCPM, mPLUG-Owl, CogVLM and GaLore at HEAD, read as a new user would. Each test is one
false claim of those reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from reports.advice import build_plan

from .claims import audit as _audit
from .claims import check as _check

# --- llm.c: a hand-written PyTorch reference trainer ---------------------------------------------------------------------------

_LLMC_MODEL = (
    "import os\nimport numpy as np\nimport torch\nimport torch.nn as nn\nfrom dataclasses import dataclass\n"
    "from torch.nn import functional as F\n\n\n"
    "@dataclass\nclass GPTConfig:\n    block_size: int = 1024\n    vocab_size: int = 50257\n    n_layer: int = 12\n"
    "    n_head: int = 12\n    n_embd: int = 768\n\n\n"
    "class GPT(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n"
    "        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)\n"
    "        self.transformer.wte.weight = self.lm_head.weight\n\n"
    "    @classmethod\n    def from_pretrained(cls, model_type):\n        from transformers import GPT2LMHeadModel\n"
    "        config_args = {\n            'gpt2': dict(n_layer=12, n_head=12, n_embd=768),\n"
    "            'gpt2-medium': dict(n_layer=24, n_head=16, n_embd=1024),\n        }[model_type]\n"
    "        model_hf = GPT2LMHeadModel.from_pretrained(model_type)\n        return cls(GPTConfig(**config_args))\n\n\n"
    "def _load_data_shard(filename):\n    with open(filename, 'rb') as f:\n"
    "        header = np.frombuffer(f.read(256*4), dtype=np.int32)\n"
    "        tokens = np.frombuffer(f.read(), dtype=np.uint16)\n    return tokens\n\n\n"
    "class DistributedDataLoader:\n    def __init__(self, filename, B, T):\n        self.B, self.T = B, T\n"
    "        self.tokens = _load_data_shard(filename)\n        self.current_position = 0\n\n"
    "    def next_batch(self):\n        B, T = self.B, self.T\n"
    "        buf = self.tokens[self.current_position : self.current_position+B*T+1]\n"
    "        buf = torch.tensor(buf.astype(np.int32), dtype=torch.long)\n"
    "        x = (buf[:-1]).view(B, T)\n        y = (buf[1:]).view(B, T)\n        self.current_position += B * T\n"
    "        return x, y\n\n\n"
    "def write_state(model, x, y, logits, loss, filename):\n    with open(filename, 'wb') as file:\n"
    "        file.write(x.cpu().numpy().astype('int32').tobytes())\n"
    "        file.write(y.cpu().numpy().astype('int32').tobytes())\n\n\n"
    "def write_model(model, filename, dtype):\n    for name, tensor in model.state_dict().items():\n"
    "        t = tensor.detach().cpu().to(torch.bfloat16)\n\n\n"
    "def print0(*args, **kwargs):\n    if int(os.environ.get('RANK', 0)) == 0:\n        print(*args, **kwargs)\n\n\n"
)
_LLMC_MAIN = (
    "if __name__ == '__main__':\n    import argparse\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--input_bin', type=str, default='dev/data/tinyshakespeare/tiny_shakespeare_val.bin')\n"
    "    parser.add_argument('--model', type=str, default='gpt2')\n"
    "    parser.add_argument('--batch_size', type=int, default=4)\n"
    "    parser.add_argument('--sequence_length', type=int, default=64)\n"
    "    parser.add_argument('--learning_rate', type=float, default=1e-4)\n"
    "    parser.add_argument('--weight_decay', type=float, default=0.0)\n"
    "    parser.add_argument('--num_iterations', type=int, default=10)\n"
    "    parser.add_argument('--val_loss_every', type=int, default=0)\n"
    "    parser.add_argument('--write_tensors', type=int, default=1)\n"
    "    args = parser.parse_args()\n    device = 'cuda'\n"
    "    if args.model[0] == 'd':\n        model_config = {\n"
    "            \"d12\": GPTConfig(block_size=1024, vocab_size=50257, n_layer=12, n_head=12, n_embd=768),\n"
    "            \"d24\": GPTConfig(block_size=1024, vocab_size=50257, n_layer=24, n_head=16, n_embd=1024),\n"
    "        }[args.model]\n        model = GPT(model_config)\n    else:\n        model = GPT.from_pretrained(args.model)\n"
    "    model.to(device)\n"
    "    train_loader = DistributedDataLoader(args.input_bin, args.batch_size, args.sequence_length)\n"
    "    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)\n"
    "    if args.write_tensors:\n        x, y = train_loader.next_batch()\n        logits, loss = model(x, y)\n"
    "        loss.backward()\n        write_model(model, 'gpt2_124M.bin', dtype='float32')\n"
    "        write_state(model, x, y, logits, loss, 'gpt2_124M_debug_state.bin')\n"
    "    for step in range(args.num_iterations + 1):\n"
    "        last_step = (step == args.num_iterations)\n"
    "        if args.val_loss_every > 0 and (step % args.val_loss_every == 0 or last_step):\n"
    "            print0(f'val loss {loss.item()}')\n"
    "        model.train()\n        optimizer.zero_grad(set_to_none=True)\n"
    "        x, y = train_loader.next_batch()\n        x, y = x.to(device), y.to(device)\n"
    "        with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n            _, loss = model(x, y)\n"
    "        loss.backward()\n        lossf = loss.item()\n        optimizer.step()\n"
    "        print0(f'step {step+1:4d}/{args.num_iterations} | train loss {lossf:.6f}')\n"
)
_LLMC_RUN = ("torchrun --standalone --nproc_per_node=8 train_gpt2.py \\\n"
             "    --input_bin \"dev/data/fineweb10B/fineweb_train_*.bin\" \\\n    --model d12 \\\n    --batch_size 32 \\\n"
             "    --sequence_length 1024 \\\n    --learning_rate 0.0006 \\\n    --weight_decay 0.1 \\\n    --val_loss_every 250\n")
_LLMC_PREP = ("import numpy as np\nfrom transformers import AutoTokenizer\n\n\n"
              "def write_datafile(filename, toks):\n    header = np.zeros(256, dtype=np.int32)\n"
              "    toks_np = np.array(toks, dtype=np.uint16)\n    with open(filename, 'wb') as f:\n"
              "        f.write(header.tobytes())\n        f.write(toks_np.tobytes())\n\n\n"
              "def tokenize_llama(doc):\n    tokenizer = AutoTokenizer.from_pretrained('meta-llama/Meta-Llama-3.1-8B')\n"
              "    return tokenizer.encode(doc['text'])\n")
_HELLASWAG = ("import torch\nfrom transformers import GPT2LMHeadModel\n\n\n"
              "def evaluate(model_type, device):\n    model = GPT2LMHeadModel.from_pretrained(model_type)\n    model.to(device)\n")


def _llmc(main: str = _LLMC_MAIN, run: str = _LLMC_RUN) -> dict[str, str]:
    return {"train_gpt2.py": _LLMC_MODEL + main, "scripts/pyrun_gpt2_124M.sh": run,
            "dev/data/data_common.py": _LLMC_PREP, "dev/data/hellaswag.py": _HELLASWAG}


def test_a_step_print_under_the_scripts_main_block_is_every_step():
    # llm.c train_gpt2.py: the loop lives under `if __name__ == "__main__":` and prints every step with `loss.item()`;
    # I4 said "logged only under a guard" (the main block read as an interval)
    i4 = _check(_audit(_llmc()), "I4")
    assert i4.status.value == "unused", i4.detail
    lines = {e.line for e in i4.findings}
    step_line = (_LLMC_MODEL + _LLMC_MAIN).splitlines().index(
        "        print0(f'step {step+1:4d}/{args.num_iterations} | train loss {lossf:.6f}')") + 1
    # the wrapper's own `print(*args)` is the same log as its call site in the loop: cited once, at the loop
    assert lines == {step_line}, i4.findings


def test_control_a_step_print_under_an_interval_in_the_main_block_is_sane():
    main = _LLMC_MAIN.replace("        print0(f'step {step+1:4d}", "        if step % 50 == 0:\n            print0(f'step {step+1:4d}")
    assert _check(_audit(_llmc(main)), "I4").status.value == "used"


def test_a_debug_dump_of_the_runs_tensors_is_not_token_data():
    # write_state writes a batch and its logits for the C port's test; the token shards are read by _load_data_shard
    a = _audit(_llmc())
    for cid in ("F4", "F10"):
        r = _check(a, cid)
        assert r.status.value == "used", (cid, r.detail)
        assert all("cpu()" not in e.snippet for e in r.evidence), (cid, r.evidence)
        assert any("np.frombuffer(f.read(), dtype=np.uint16)" in e.snippet for e in r.evidence), (cid, r.evidence)


def test_control_a_dump_of_tensors_alone_is_no_token_format():
    # (round 41: ``np.load`` of a token shard is a pre-tokenized read now, as in build-nanogpt; the shard here is raw text
    # tokenized on the fly, so only the debug dump of tensors is left)
    files = _llmc()
    files["train_gpt2.py"] = files["train_gpt2.py"].replace("tokens = np.frombuffer(f.read(), dtype=np.uint16)",
                                                            "tokens = np.array(tokenizer.encode(f.read().decode()))")
    del files["dev/data/data_common.py"]
    assert _check(_audit(files), "F10").status.value != "used"


def test_a_host_side_cast_for_export_is_not_the_training_precision():
    # write_model: `tensor.detach().cpu().to(torch.bfloat16)` writes weights for the C trainer; autocast is the precision
    c1 = _check(_audit(_llmc()), "C1")
    assert c1.status.value == "used"
    assert all(".cpu().to(" not in e.snippet for e in c1.evidence), c1.evidence


def test_control_a_host_cast_alone_is_no_mixed_precision():
    main = _LLMC_MAIN.replace("        with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n            _, loss = model(x, y)\n",
                              "        _, loss = model(x, y)\n")
    assert _check(_audit(_llmc(main)), "C1").status.value != "used"


def test_transformers_for_tokenizers_and_benchmarks_only_is_not_the_framework():
    # llm.c: AutoTokenizer in the data preparation, GPT2LMHeadModel in HellaSwag's evaluate and in from_pretrained
    a = _audit(_llmc())
    assert "transformers" not in a.project.frameworks
    assert a.project.notes.get("plain_torch") is True


def test_control_a_transformers_model_trained_here_is_the_framework():
    files = _llmc()
    files["sft.py"] = ("from transformers import AutoModelForCausalLM\n\n\ndef main():\n"
                       "    model = AutoModelForCausalLM.from_pretrained('gpt2')\n    loss = model(**batch).loss\n    loss.backward()\n")
    files["scripts/sft.sh"] = "python sft.py\n"
    assert "transformers" in _audit(files).project.frameworks


def test_a_preset_the_launch_picks_from_a_table_sizes_the_model():
    # `{"d12": GPTConfig(n_layer=12, n_embd=768, vocab_size=50257), "d24": ...}[args.model]` with `--model d12`
    a = _audit(_llmc())
    assert a.project.estimated_params == "124M", (a.project.estimated_params, a.project.notes)


def test_control_a_preset_table_nobody_picks_stays_unknown():
    run = _LLMC_RUN.replace("--model d12", "--model d36")
    assert _audit(_llmc(run=run)).project.estimated_params is None


def test_a_hand_written_token_reader_gets_pinning_advice_not_loader_workers():
    a = _audit(_llmc())
    f3 = _check(a, "F3")
    assert f3.status.value == "unused" and f3.values.get("loader") == "token-reader", f3.detail
    plan = build_plan(a)
    assert plan.get("F1") is None and plan.get("F2") is None
    assert "pin_memory()" in plan.get("F3").text
    withheld = {w.check: w.reason for w in plan.withheld}
    assert "by hand" in withheld["F1"]


def test_control_a_dataloader_without_workers_still_gets_worker_advice():
    main = _LLMC_MAIN.replace(
        "    train_loader = DistributedDataLoader(args.input_bin, args.batch_size, args.sequence_length)\n",
        "    from torch.utils.data import DataLoader\n    train_loader = DataLoader(ds, batch_size=args.batch_size)\n")
    files = _llmc(main)
    files["train_gpt2.py"] = files["train_gpt2.py"].replace("tokens = np.frombuffer(f.read(), dtype=np.uint16)", "tokens = None")
    assert build_plan(_audit(files)).get("F1") is not None


def test_a_whole_shard_read_as_token_ids_is_packed():
    f7 = _check(_audit(_llmc()), "F7")
    assert f7.status.value == "used", f7.detail


def test_hf_flags_are_not_offered_for_a_model_configs_dataclass_field():
    # D7's `vocab_size` is a field of GPTConfig, not an option of train_gpt2.py's argparse: `--vocab_size 50304` appended to
    # the launch would stop the run at start-up
    d7 = build_plan(_audit(_llmc())).get("D7")
    assert d7 is not None and d7.snippet is not None
    assert "--vocab_size" not in d7.snippet.code
    assert "resize_token_embeddings" not in d7.snippet.code  # no HF method on the project's own model
    assert "50304" in d7.snippet.code


def test_control_unpicked_presets_still_mark_their_file_as_a_table():
    # Megatron-LM's encoder registry: a table's entries beside one plain config call of the same file; nothing picks an
    # entry, so the file sets several sizes and names no one model (the plain call alone is not the run's model)
    files = _llmc(run=_LLMC_RUN.replace("--model d12", "--model d36"))
    files["train_gpt2.py"] = files["train_gpt2.py"].replace(
        "    model.to(device)\n",
        "    model.to(device)\n    debug_config = GPTConfig(block_size=256, vocab_size=50257, n_layer=6, n_head=6, n_embd=384)\n")
    a = _audit(files)
    assert "train_gpt2.py" not in dict(a.facts.errors()), a.facts.errors()
    assert a.project.estimated_params is None


# --- GaLore: pre-training LLaMA on C4 with the project's own optimizer ---------------------------------------------------------

_GALORE_MAIN = (
    "import argparse\nimport torch\nimport transformers\nfrom transformers import AutoConfig, AutoTokenizer\n"
    "from galore_torch import GaLoreAdamW, GaLoreAdamW8bit\nfrom peft_pretraining.modeling_llama import LlamaForCausalLM\n\n\n"
    "def parse_args():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--model_config', type=str, required=True)\n"
    "    parser.add_argument('--optimizer', default='Adam')\n    parser.add_argument('--lr', type=float, default=1e-4)\n"
    "    parser.add_argument('--single_gpu', default=False, action='store_true')\n    return parser.parse_args()\n\n\n"
    "def main(args):\n    torch.distributed.init_process_group(backend='nccl')\n"
    "    tokenizer = AutoTokenizer.from_pretrained('t5-base', model_max_length=256)\n"
    "    model_config = AutoConfig.from_pretrained(args.model_config)\n    model = LlamaForCausalLM(model_config)\n"
    "    if args.optimizer.lower() == 'adam':\n        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)\n"
    "    elif args.optimizer.lower() == 'galore_adamw':\n        optimizer = GaLoreAdamW(model.parameters(), lr=args.lr)\n"
    "    elif args.optimizer.lower() == 'galore_adamw8bit':\n        optimizer = GaLoreAdamW8bit(model.parameters(), lr=args.lr)\n"
    "    if not args.single_gpu:\n"
    "        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0], broadcast_buffers=False)\n"
    "    for batch in dataloader:\n        loss = model(**batch, labels=batch['input_ids']).loss\n        loss.backward()\n"
    "        optimizer.step()\n        optimizer.zero_grad()\n\n\n"
    "if __name__ == '__main__':\n    main(parse_args())\n")
_GALORE_PKG = ("from torch.optim import Optimizer\n\n\nclass AdamW(Optimizer):\n    def step(self, closure=None):\n"
               "        for group in self.param_groups:\n            pass\n")
_GALORE_INIT = "from .adamw import AdamW as GaLoreAdamW\nfrom .adamw import AdamW as GaLoreAdamW8bit\n"
_GALORE_RUN = ("torchrun --standalone --nproc_per_node {n} torchrun_main.py \\\n    --model_config configs/llama_1b.json \\\n"
               "    --lr 0.01 \\\n    --optimizer {opt}{extra}\n")
_GLUE = ("import torch\nfrom datasets import load_dataset\nfrom accelerate import Accelerator\n"
         "from transformers import AutoModelForSequenceClassification, LlamaForSequenceClassification\n\n\n"
         "def main(args):\n    accelerator = Accelerator()\n    raw_datasets = load_dataset('glue', args.task_name)\n"
         "    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path)\n"
         "    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)\n"
         "    for batch in loader:\n        loss = model(**batch).loss\n        accelerator.backward(loss)\n        optimizer.step()\n")


def _galore(opt: str = "galore_adamw", glue: str = _GLUE) -> dict[str, str]:
    return {"torchrun_main.py": _GALORE_MAIN, "galore_torch/__init__.py": _GALORE_INIT, "galore_torch/adamw.py": _GALORE_PKG,
            "peft_pretraining/modeling_llama.py": "import torch.nn as nn\n\n\nclass LlamaForCausalLM(nn.Module):\n    pass\n",
            "peft_pretraining/dataloader.py": "from torch.utils.data import IterableDataset\n",
            "scripts/benchmark_c4/llama_1b.sh": _GALORE_RUN.format(n=8, opt=opt, extra=""),
            "scripts/single_gpu/llama_7b.sh": _GALORE_RUN.format(n=1, opt=opt + "8bit", extra=" \\\n    --single_gpu"),
            "run_glue.py": glue,
            "README.md": "## Benchmark 2: Fine-Tuning RoBERTa on GLUE tasks\n\n```bash\npython run_glue.py --model_name_or_path roberta-base --task_name mrpc\n```\n"}


def test_launches_in_a_folder_named_for_the_papers_benchmark_are_training_runs():
    # GaLore's scripts/benchmark_c4/*.sh pre-train LLaMA on C4 with 8 processes; A1 said "every launch starts a single
    # training process" from scripts/single_gpu/ alone, while E2 cited the 8-process launches
    a1 = _check(_audit(_galore()), "A1")
    assert a1.status.value == "used", a1.detail
    assert any(e.path.startswith("scripts/benchmark_c4/") for e in a1.evidence)


def test_control_a_benchmark_folder_of_an_inference_script_stays_out():
    files = _galore()
    files["bench_gen.py"] = "import torch\n\n\ndef main():\n    out = model.generate(ids)\n"
    files["scripts/benchmark_c4/llama_1b.sh"] = "torchrun --standalone --nproc_per_node 8 bench_gen.py\n"
    a1 = _check(_audit(files), "A1")
    assert not any(e.path.startswith("scripts/benchmark_c4/") for e in a1.evidence), a1.evidence


def test_a_glue_classification_fine_tune_is_a_side_benchmark():
    # run_glue.py fine-tunes RoBERTa (or the pre-trained LLaMA as a classifier) on GLUE: B3 said "Accelerate drives
    # training" and G4 read the project as fine-tuning
    a = _audit(_galore())
    assert a.roles.by_path["run_glue.py"] == "side"
    assert _check(a, "B3").status.value != "used"


def test_control_a_reward_model_on_a_classification_head_stays_training():
    rm = _GLUE.replace("load_dataset('glue', args.task_name)", "load_dataset('Anthropic/hh-rlhf')")
    assert _audit(_galore(glue=rm)).roles.by_path.get("run_glue.py") != "side"


def test_a_folder_named_for_parameter_efficient_pretraining_is_not_fine_tuning():
    # peft_pretraining/ holds ReLoRA's and GaLore's pre-training code; G4 said "full-parameter fine-tuning"
    g4 = _check(_audit(_galore()), "G4")
    assert g4.status.value == "n/a", g4.detail


def test_control_a_finetune_folder_still_makes_a_fine_tuning_path():
    files = _galore()
    files["finetune/sft.py"] = "import torch\n\n\ndef main():\n    loss.backward()\n"
    assert _check(_audit(files), "G4").status.value != "n/a"


def test_fused_adamw_advice_is_withheld_for_the_projects_own_optimizer():
    a = _audit(_galore())
    d6 = _check(a, "D6")
    assert d6.values.get("own_optimizer") == "GaLoreAdamW", d6.detail
    plan = build_plan(a)
    assert plan.get("D6") is None
    assert "own optimizer" in {w.check: w.reason for w in plan.withheld}["D6"]


def test_control_launches_of_torchs_adam_keep_the_fused_advice():
    a = _audit(_galore(opt="adam"))
    assert "own_optimizer" not in _check(a, "D6").values
    assert build_plan(a).get("D6") is not None


def test_a_flag_only_some_launches_pass_leaves_the_others_at_the_default():
    # --single_gpu in scripts/single_gpu/*.sh only: the 8-GPU launches run `if not args.single_gpu:` DDP(model); E2 said
    # "distributed training without communication/computation overlap" (the DDP wrapper read as switched off)
    a = _audit(_galore())
    e2 = _check(a, "E2")
    assert e2.status.value == "used", e2.detail
    assert any(e.path == "torchrun_main.py" for e in _check(a, "A1").evidence)


def test_control_a_flag_every_launch_passes_switches_the_branch_off():
    files = _galore()
    files["scripts/benchmark_c4/llama_1b.sh"] = _GALORE_RUN.format(n=1, opt="galore_adamw", extra=" \\\n    --single_gpu")
    a = _audit(files)
    assert not any(e.path == "torchrun_main.py" for e in _check(a, "A1").evidence)


# --- a DeepSpeed config's scheduler replaces the HF Trainer's ----------------------------------------------------------------

_DOLLY = ("from transformers import Trainer, TrainingArguments\n\n\ndef train(deepspeed, warmup_steps):\n"
          "    args = TrainingArguments(output_dir='out', deepspeed=deepspeed, warmup_steps=warmup_steps, bf16=True)\n"
          "    trainer = Trainer(model=model, args=args, train_dataset=ds)\n    trainer.train()\n")
_DS_SCHED = ('{\n  "bf16": {"enabled": "auto"},\n  "scheduler": {\n    "type": "%s",\n    "params": {"warmup_num_steps": "auto"}\n'
             '  },\n  "zero_optimization": {"stage": 3},\n  "train_micro_batch_size_per_gpu": "auto"\n}\n')


def test_a_deepspeed_warmuplr_scheduler_has_no_decay_phase():
    # dolly: TrainingArguments (HF default linear decay) with a DeepSpeed config whose scheduler is WarmupLR: DeepSpeed's
    # scheduler replaces the Trainer's, and WarmupLR holds the peak LR; G1 said "warmup + WarmupLR schedule"
    g1 = _check(_audit({"training/trainer.py": _DOLLY, "config/a100_config.json": _DS_SCHED % "WarmupLR",
                        "run.sh": "deepspeed training/trainer.py --deepspeed config/a100_config.json --warmup-steps 50\n"}), "G1")
    assert g1.status.value == "partial", g1.detail
    assert "WarmupLR" in g1.detail and "replaces" in g1.detail


def test_the_advice_for_a_deepspeed_warmuplr_is_the_configs_scheduler():
    # lr_scheduler_type='cosine' in TrainingArguments would be ignored while the DS config has its own scheduler
    rec = build_plan(_audit({"training/trainer.py": _DOLLY, "config/a100_config.json": _DS_SCHED % "WarmupLR",
                             "run.sh": "deepspeed training/trainer.py --deepspeed config/a100_config.json --warmup-steps 50\n"})).get("G1")
    assert rec is not None and "WarmupDecayLR" in rec.text
    assert rec.snippet is not None and rec.snippet.target == "deepspeed-json" and "WarmupDecayLR" in rec.snippet.code


def test_control_a_deepspeed_warmupdecaylr_scheduler_decays():
    g1 = _check(_audit({"training/trainer.py": _DOLLY, "config/a100_config.json": _DS_SCHED % "WarmupDecayLR",
                        "run.sh": "deepspeed training/trainer.py --deepspeed config/a100_config.json --warmup-steps 50\n"}), "G1")
    assert g1.status.value == "used", g1.detail


# --- lit-llama: DeepSpeed only when devices > 1, with devices = 1 ---------------------------------------------------------------

_LIT_ADAPTER = ("import lightning as L\nfrom lightning.fabric.strategies import DeepSpeedStrategy\n\n"
                "devices = {devices}\nmicro_batch_size = 4\n\n"
                "ds_config = {{\n    \"train_micro_batch_size_per_gpu\": micro_batch_size,\n"
                "    \"zero_optimization\": {{\"stage\": 2}},\n}}\n\n\n"
                "def main(data_dir: str = 'data/alpaca'):\n    fabric = L.Fabric(\n        accelerator='cuda',\n"
                "        devices=devices,\n        strategy=(DeepSpeedStrategy(config=ds_config) if devices > 1 else 'auto'),\n"
                "        precision='bf16-true',\n    )\n    fabric.launch()\n"
                "    for batch in loader:\n        loss = model(batch)\n        fabric.backward(loss)\n        optimizer.step()\n\n\n"
                "if __name__ == '__main__':\n    main()\n")
_LIT_FULL = ("import lightning as L\n\ndevices = 4\n\n\ndef main():\n"
             "    fabric = L.Fabric(accelerator='cuda', devices=devices, precision='bf16-mixed')\n    fabric.launch()\n")


def test_deepspeed_behind_a_device_count_the_script_sets_to_one_is_off():
    # lit-llama finetune/adapter.py: `devices = 1`, `DeepSpeedStrategy(config=ds_config) if devices > 1 else "auto"`; A3 said
    # "ZeRO stage 2" and B1 "DeepSpeed drives training" (another script's `devices = 4` made the value unknown)
    a = _audit({"finetune/adapter.py": _LIT_ADAPTER.format(devices=1), "finetune/full.py": _LIT_FULL})
    assert _check(a, "A3").status.value != "used", _check(a, "A3").detail
    assert _check(a, "B1").status.value != "used", _check(a, "B1").detail


def test_control_deepspeed_behind_a_device_count_above_one_is_on():
    a = _audit({"finetune/adapter.py": _LIT_ADAPTER.format(devices=8), "finetune/full.py": _LIT_FULL})
    assert _check(a, "A3").status.value == "used", _check(a, "A3").detail
    assert _check(a, "B1").status.value == "used"


def test_control_a_counter_compared_by_order_is_still_no_setting():
    # nanoGPT: `iter_num = 0` at the top, `if iter_num > 0:` in the loop (counted up there): the branch is not off
    from checks.rules._helpers import guard_off
    a = _audit({"train.py": ("import torch\niter_num = 0\nwhile True:\n    if iter_num > 0:\n"
                             "        torch.save(checkpoint, 'ckpt.pt')\n    loss.backward()\n    iter_num += 1\n")})
    save = next(c for c in a.facts.calls("save") if c.path == "train.py")
    assert not guard_off(a.facts, save)


# --- mPLUG-Owl and CogVLM ------------------------------------------------------------------------------------------------------

_QWEN_GENERATE = ("from transformers import PreTrainedModel\n\n\nclass QWenLMHeadModel(PreTrainedModel):\n"
                  "    def generate(self, inputs=None, generation_config=None, assistant_model=None, streamer=None, **kwargs):\n"
                  "        return super().generate(inputs, generation_config=generation_config,\n"
                  "                                assistant_model=assistant_model, streamer=streamer, **kwargs)\n\n\n"
                  "def chat(model, ids):\n    return model.generate(ids, max_new_tokens=64)\n")


def test_a_generate_override_forwarding_its_assistant_model_parameter_is_no_speculative_decoding():
    # mPLUG-Owl's vendored Qwen: `assistant_model=assistant_model` hands on the override's own `None` default; J7 said used
    j7 = _check(_audit({"serve/modeling_qwen.py": _QWEN_GENERATE}), "J7")
    assert j7.status.value != "used", j7.detail


def test_control_a_draft_model_passed_to_generate_is_speculative_decoding():
    code = _QWEN_GENERATE.replace("model.generate(ids, max_new_tokens=64)", "model.generate(ids, assistant_model=draft, max_new_tokens=64)")
    assert _check(_audit({"serve/modeling_qwen.py": code}), "J7").status.value == "used"


_COG_RUN = ('#! /bin/bash\nNUM_GPUS_PER_WORKER=8\nMP_SIZE=1\n\n'
            'OPTIONS_NCCL="NCCL_DEBUG=info NCCL_IB_DISABLE=0 NCCL_NET_GDR_LEVEL=2 LOCAL_WORLD_SIZE=$NUM_GPUS_PER_WORKER"\n'
            'HOST_FILE_PATH="hostfile"\n\n'
            'gpt_options=" \\\n       --mode finetune \\\n       --train-iters 800 \\\n       --deepspeed_config {cfg} \\\n'
            '       --seed 2023\n"\n\n'
            'run_cmd="${{OPTIONS_NCCL}} deepspeed --master_port 16666 --hostfile ${{HOST_FILE_PATH}} finetune_cogvlm_demo.py ${{gpt_options}}"\n'
            'echo ${{run_cmd}}\neval ${{run_cmd}}\n')
_COG_DS = ('{\n    "train_micro_batch_size_per_gpu": 4,\n    "zero_optimization": {\n      "stage": 2,\n      "overlap_comm": true\n'
           '    },\n    "bf16": {"enabled": true}\n}\n')
_COG_TRAIN = ("import deepspeed\nfrom sat import get_args, training_main\n\n\ndef main():\n    args = get_args()\n"
              "    model = training_main(args, model_cls=model)\n    loss.backward()\n")


def _cog(cfg: str = "test_config_bf16.json") -> dict[str, str]:
    return {"finetune_demo/finetune_cogvlm_lora.sh": _COG_RUN.format(cfg=cfg), "finetune_demo/test_config_bf16.json": _COG_DS,
            "finetune_demo/finetune_cogvlm_demo.py": _COG_TRAIN}


def test_a_deepspeed_config_named_test_that_the_launch_passes_is_the_runs():
    # CogVLM: `--deepspeed_config test_config_bf16.json` sets ZeRO-2; A3 said "no ZeRO configuration found"
    a3 = _check(_audit(_cog()), "A3")
    assert a3.status.value == "used", a3.detail


def test_control_a_test_named_config_nothing_passes_stays_out():
    a3 = _check(_audit(_cog(cfg="ds_config.json")), "A3")
    assert a3.status.value != "used", a3.detail


def test_nccl_settings_at_the_head_of_an_evaled_command_are_its_environment():
    # `run_cmd="${OPTIONS_NCCL} deepspeed ..."; eval ${run_cmd}`: E1/E4 said no NCCL/RDMA setting; cited at the line that sets them
    a = _audit(_cog())
    e4 = _check(a, "E4")
    assert e4.status.value == "used", e4.detail
    assert any(e.line == 5 and "NCCL_IB_DISABLE=0" in e.snippet for e in e4.evidence), e4.evidence


def test_control_an_evaled_command_without_nccl_words_sets_none():
    files = _cog()
    files["finetune_demo/finetune_cogvlm_lora.sh"] = files["finetune_demo/finetune_cogvlm_lora.sh"].replace("${OPTIONS_NCCL} ", "")
    assert _check(_audit(files), "E4").status.value != "used"


# --- MiniCPM: an AWQ calibration set built with a per-sample concatenation ------------------------------------------------------

_AWQ = ("from datasets import load_dataset\nfrom awq import AutoAWQForCausalLM\n\n\ndef load_alpaca(path, n):\n"
        "    data = load_dataset(path, split='train')\n\n    def concatenate_data(x):\n"
        "        return {'text': '<user>' + x['instruction'] + x['input'] + '<AI>' + x['output']}\n\n"
        "    concatenated = data.map(concatenate_data{batched})[:n]\n    return list(concatenated['text'])\n")


def test_a_per_sample_concatenation_is_no_packing():
    # MiniCPM quantize/awq_quantize.py:58 joins one sample's fields into its text; F7 said "short samples packed"
    f7 = _check(_audit({"quantize/awq_quantize.py": _AWQ.replace("{batched}", "")}), "F7")
    assert f7.status.value != "used", f7.detail


def test_control_a_batched_concatenation_packs():
    f7 = _check(_audit({"quantize/awq_quantize.py": _AWQ.replace("{batched}", ", batched=True")}), "F7")
    assert f7.status.value == "used", f7.detail
