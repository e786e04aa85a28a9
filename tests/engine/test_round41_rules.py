"""Round 41 (issue #9): public repositories read claim by claim (karpathy/llama2.c, Open-Reasoner-Zero, DeepSeek-Coder,
Qwen-VL, RWKV-LM, InternLM-XComposer). Each test is one false claim of those reports, made from the shape of the real code,
with a control that keeps the rule honest."""

from __future__ import annotations

from checks.model import Status

from .claims import audit as _audit
from .claims import check as _check

# --- karpathy/llama2.c: a 15M model, compiled, in bf16, with SDPA and pre-tokenized shards -------------------------------

def _llama2c(dim: int = 288, n_layers: int = 6, vocab: int = 32000) -> dict[str, str]:
    train = (
        "import math\nimport os\nfrom functools import partial\n\nimport torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from torch.distributed import init_process_group\n\nfrom model import ModelArgs, Transformer\nfrom tinystories import Task\n\n"
        "batch_size = 128\nmax_seq_len = 256\n"
        f"vocab_size = {vocab}\ndim = {dim}\nn_layers = {n_layers}\nn_heads = 6\nn_kv_heads = 6\nmultiple_of = 32\n"
        "gradient_accumulation_steps = 4\nlearning_rate = 5e-4\nmax_iters = 100000\nlog_interval = 10\neval_interval = 2000\n"
        "warmup_iters = 1000\ndtype = 'bfloat16'\ncompile = True\ndevice = 'cuda'\n\n"
        "ddp = int(os.environ.get('RANK', -1)) != -1\nif ddp:\n    init_process_group(backend='nccl')\n"
        "ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]\n"
        "ctx = torch.amp.autocast(device_type='cuda', dtype=ptdtype)\n"
        "iter_batches = partial(Task.iter_batches, batch_size=batch_size, max_seq_len=max_seq_len, device=device, num_workers=0)\n"
        "model_args = dict(dim=dim, n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv_heads, vocab_size=vocab_size,\n"
        "                  multiple_of=multiple_of, max_seq_len=max_seq_len)\n"
        "model = Transformer(ModelArgs(**model_args))\nmodel.to(device)\n"
        "optimizer = model.configure_optimizers(0.1, learning_rate, (0.9, 0.95), 'cuda')\n"
        "if compile:\n    model = torch.compile(model)\nif ddp:\n    model = DDP(model, device_ids=[0])\n\n\n"
        "def get_lr(it):\n    if it < warmup_iters:\n        return learning_rate * it / warmup_iters\n"
        "    decay_ratio = (it - warmup_iters) / (max_iters - warmup_iters)\n"
        "    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))\n    return 0.0 + coeff * learning_rate\n\n\n"
        "train_batch_iter = iter_batches(split='train')\nX, Y = next(train_batch_iter)\niter_num = 0\nwhile True:\n"
        "    lr = get_lr(iter_num)\n    for micro_step in range(gradient_accumulation_steps):\n        with ctx:\n"
        "            logits = model(X, Y)\n            loss = model.last_loss / gradient_accumulation_steps\n"
        "        X, Y = next(train_batch_iter)\n        loss.backward()\n    optimizer.step()\n    optimizer.zero_grad(set_to_none=True)\n"
        "    if iter_num % eval_interval == 0:\n        torch.save(model.state_dict(), 'ckpt.pt')\n"
        "    iter_num += 1\n    if iter_num > max_iters:\n        break\n"
    )
    model = (
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nfrom dataclasses import dataclass\n\n\n@dataclass\n"
        f"class ModelArgs:\n    dim: int = 4096\n    n_layers: int = 32\n    n_heads: int = 32\n    vocab_size: int = {vocab}\n"
        "    max_seq_len: int = 2048\n\n\nclass Attention(nn.Module):\n    def forward(self, xq, xk, xv):\n"
        "        return F.scaled_dot_product_attention(xq, xk, xv, attn_mask=None, dropout_p=0.0, is_causal=True)\n\n\n"
        "class Transformer(nn.Module):\n    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):\n"
        "        return torch.optim.AdamW(self.parameters(), lr=learning_rate, betas=betas, fused=True)\n"
    )
    data = (
        "import glob\nimport os\n\nimport numpy as np\nimport torch\n\n\ndef pretokenize(shard, all_tokens):\n"
        "    with open(shard.replace('.json', '.bin'), 'wb') as f:\n        f.write(all_tokens.tobytes())\n\n\n"
        "class PretokDataset(torch.utils.data.IterableDataset):\n    def __init__(self, split, max_seq_len):\n"
        "        super().__init__()\n        self.split = split\n        self.max_seq_len = max_seq_len\n\n"
        "    def __iter__(self):\n        shard_filenames = sorted(glob.glob(os.path.join('data', '*.bin')))\n"
        "        for shard in shard_filenames:\n            m = np.memmap(shard, dtype=np.uint16, mode='r')\n"
        "            num_batches = len(m) // self.max_seq_len\n            for ix in range(num_batches):\n"
        "                chunk = torch.from_numpy(m[ix * self.max_seq_len:(ix + 1) * self.max_seq_len + 1].astype(np.int64))\n"
        "                yield chunk[:-1], chunk[1:]\n\n\n"
        "class Task:\n    @staticmethod\n    def iter_batches(batch_size, device, num_workers=0, **dataset_kwargs):\n"
        "        ds = PretokDataset(**dataset_kwargs)\n"
        "        dl = torch.utils.data.DataLoader(ds, batch_size=batch_size, pin_memory=True, num_workers=num_workers)\n"
        "        for x, y in dl:\n            yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)\n"
    )
    return {"train.py": train, "model.py": model, "tinystories.py": data, "requirements.txt": "torch==2.1.0\nnumpy\n"}


def test_a_tiny_compiled_model_is_not_compute_bound_by_elimination() -> None:
    # a 15M model (dim 288, 6 layers): its narrow GEMMs and microsecond kernels make compute-bound a guess, not a finding
    a = _audit(_llama2c())
    assert a.project.params_billions is not None and a.project.params_billions < 0.05
    assert a.project.bottleneck.value != "compute-bound"
    assert any("the model is tiny" in r for r in a.project.bottleneck_reasons)


def test_a_larger_compiled_model_still_reads_compute_bound() -> None:
    # the control: the same script at GPT-2 size (124M-class: dim 768, 12 layers, vocab 50304) keeps the elimination's verdict
    a = _audit(_llama2c(dim=768, n_layers=12, vocab=50304))
    assert a.project.params_billions is not None and a.project.params_billions >= 0.05
    assert a.project.bottleneck.value == "compute-bound"
    assert not any("the model is tiny" in r for r in a.project.bottleneck_reasons)


# --- Open-Reasoner-Zero: PPO with DeepSpeed and vLLM, run configs as subclasses in playground/ -----------------------------

_ORZ_BASE = (
    "from dataclasses import dataclass\n\n\n@dataclass\nclass BasePPOExpConfig:\n    pretrain: str = 'Qwen/Qwen2.5-7B'\n"
    "    zero_stage: int = 3\n    bf16: bool = True\n    adam_offload: bool = True\n    gradient_checkpointing: bool = True\n"
    "    enforce_eager: bool = False\n"
)


def _orz_run(name: str, offload: bool = False) -> str:
    return ("from dataclasses import dataclass\n\nfrom orz.exps.examples.ppo.ppo_base_exp import BasePPOExpConfig\n"
            "from orz.ppo.trainer import RayPPOTrainer\n\n\n@dataclass\nclass PPOExpConfig(BasePPOExpConfig):\n"
            f"    pretrain: str = 'Qwen/Qwen2.5-{name}'\n    adam_offload: bool = {offload}\n    save_interval: int = 50\n\n\n"
            "if __name__ == '__main__':\n    cfg = PPOExpConfig()\n    RayPPOTrainer(cfg).fit()\n")


_ORZ_STRATEGY = (
    "import torch.distributed as dist\nimport deepspeed\nfrom deepspeed.ops.adam import DeepSpeedCPUAdam, FusedAdam\n"
    "from ring_flash_attn import substitute_hf_flash_attn\n\n\nclass DeepspeedStrategy:\n"
    "    def __init__(self, args):\n        self.args = args\n        self.adam_offload = args.adam_offload\n\n"
    "    def setup_ring_attn(self):\n        self.ring_attn_size = getattr(self.args, 'ring_attn_size', 1)\n"
    "        if self.ring_attn_size == 1:\n            self.ring_attn_rank = 0\n            return\n"
    "        group = dist.new_group(ranks=list(range(self.ring_attn_size)), backend='nccl')\n"
    "        substitute_hf_flash_attn(group, 1)\n\n"
    "    def prepare(self, model):\n        AdamOptimizer = DeepSpeedCPUAdam if self.adam_offload else FusedAdam\n"
    "        optim = AdamOptimizer(model.parameters(), lr=1e-6)\n"
    "        engine, optim, _, _ = deepspeed.initialize(model=model, optimizer=optim, config=self.get_ds_config())\n"
    "        return engine\n"
)

_ORZ_MODELS = (
    "import torch\nfrom peft import LoraConfig, TaskType, get_peft_model\nfrom transformers import AutoModelForCausalLM, BitsAndBytesConfig\n\n\n"
    "class Actor(torch.nn.Module):\n    def __init__(\n        self,\n        pretrain_or_model,\n        use_flash_attention_2=False,\n"
    "        bf16=True,\n        load_in_4bit=False,\n        lora_rank=0,\n        lora_alpha=16,\n        target_modules=None,\n"
    "        packing_samples=False,\n    ) -> None:\n        super().__init__()\n        if isinstance(pretrain_or_model, str):\n"
    "            self.model = AutoModelForCausalLM.from_pretrained(pretrain_or_model, torch_dtype=torch.bfloat16 if bf16 else 'auto')\n"
    "            if lora_rank > 0:\n                self.model.enable_input_require_grads()\n"
    "                lora_config = LoraConfig(task_type=TaskType.CAUSAL_LM, r=lora_rank, lora_alpha=lora_alpha,\n"
    "                                         target_modules=target_modules, lora_dropout=0, bias='none')\n"
    "                self.model = get_peft_model(self.model, lora_config)\n"
)

_ORZ_TRAINER = (
    "import torch\n\nfrom orz.ppo.models import Actor\nfrom orz.ppo.replay_buffer import NaiveReplayBuffer\n\n\n"
    "class RayPPOTrainer:\n    def __init__(self, cfg):\n        self.cfg = cfg\n"
    "        self.replay_buffer = NaiveReplayBuffer(\n            sample_batch_size=8,\n            limit=0,\n"
    "            cpu_offload=True,\n            packing_samples=True,\n        )\n"
    "        self.actor = Actor(cfg.pretrain, use_flash_attention_2=True, bf16=cfg.bf16, packing_samples=True)\n\n"
    "    def fit(self):\n        for step in range(100):\n            loss = self.actor(torch.ones(1)).sum()\n"
    "            loss.backward()\n"
)

_ORZ_BUFFER = (
    "class NaiveReplayBuffer:\n    def __init__(self, sample_batch_size, limit=0, cpu_offload=True, packing_samples=False):\n"
    "        self.cpu_offload = cpu_offload\n        self.items = []\n\n    def append(self, experience):\n"
    "        if self.cpu_offload:\n            experience.to_device('cpu')\n        self.items.append(experience)\n"
)


def _orz(**extra: str) -> dict[str, str]:
    files = {"orz/exps/examples/ppo/ppo_base_exp.py": _ORZ_BASE, "orz/ppo/deepspeed_strategy.py": _ORZ_STRATEGY,
             "orz/ppo/models.py": _ORZ_MODELS, "orz/ppo/trainer.py": _ORZ_TRAINER, "orz/ppo/replay_buffer.py": _ORZ_BUFFER,
             "orz/__init__.py": "", "orz/ppo/__init__.py": "",
             "playground/orz_7b_ppo.py": _orz_run("7B"), "playground/orz_1p5b_ppo.py": _orz_run("1.5B"),
             "playground/orz_32b_ppo.py": _orz_run("32B"),
             "README.md": "# ORZ\n\n```bash\npython -m playground.orz_7b_ppo\n```\n"}
    files.update(extra)
    return files


def test_a_replay_buffer_kept_on_the_host_is_not_model_offload() -> None:
    a = _audit(_orz())
    c4 = _check(a, "C4")
    assert c4.status == Status.UNUSED, c4.detail
    assert not any(e.path == "orz/ppo/trainer.py" for e in c4.evidence)


def test_a_base_config_default_that_every_run_overrides_does_not_decide() -> None:
    # BasePPOExpConfig.adam_offload = True, every playground run's subclass sets False: no run offloads
    c4 = _check(_audit(_orz()), "C4")
    assert c4.status == Status.UNUSED
    assert {e.path for e in c4.evidence} <= {"playground/orz_7b_ppo.py", "playground/orz_1p5b_ppo.py", "playground/orz_32b_ppo.py"}


def test_a_run_that_keeps_the_base_offload_default_offloads() -> None:
    # the control: a run that leaves the base default in place (no override) offloads Adam to the CPU
    runs = {f"playground/orz_{n}_ppo.py": _orz_run(n.upper()).replace("    adam_offload: bool = False\n", "")
            for n in ("7b", "1p5b", "32b")}
    c4 = _check(_audit(_orz(**runs)), "C4")
    assert c4.status == Status.USED
    assert any(e.path == "orz/exps/examples/ppo/ppo_base_exp.py" for e in c4.evidence)


def test_lora_behind_a_rank_that_defaults_to_zero_and_no_caller_passes_is_off() -> None:
    g4 = _check(_audit(_orz()), "G4")
    assert g4.status == Status.UNUSED, g4.detail


def test_lora_rank_passed_by_a_caller_turns_lora_on() -> None:
    trainer = _ORZ_TRAINER.replace("packing_samples=True)\n\n", "packing_samples=True, lora_rank=64)\n\n")
    g4 = _check(_audit(_orz(**{"orz/ppo/trainer.py": trainer})), "G4")
    assert g4.status == Status.USED


def test_ring_attention_after_an_early_return_on_an_unset_size_is_off() -> None:
    a6 = _check(_audit(_orz()), "A6")
    assert a6.status == Status.UNUSED, a6.detail


def test_ring_attention_with_a_size_a_run_sets_is_on() -> None:
    runs = {f"playground/orz_{n}_ppo.py": _orz_run(n.upper()).replace("    save_interval: int = 50\n",
                                                                        "    save_interval: int = 50\n    ring_attn_size: int = 2\n")
            for n in ("7b", "1p5b", "32b")}
    a6 = _check(_audit(_orz(**runs)), "A6")
    assert a6.status == Status.USED


def test_rollout_tokenization_in_make_experience_is_not_dataset_preprocessing() -> None:
    # (the rollout runs in the training loop, which the run's ``__main__`` reaches: without the rule it read as start-up work)
    trainer = _ORZ_TRAINER.replace("            loss.backward()\n", "            loss.backward()\n            self.make_experience(['p'], ['o'])\n") + (
        "\n    def make_experience(self, prompts, outputs):\n        return self._pack(prompts, outputs)\n\n"
        "    def _pack(self, prompts, outputs):\n        input_token_ids = self.tokenizer(prompts, add_special_tokens=False)['input_ids']\n"
        "        response_token_ids = self.tokenizer(outputs, add_special_tokens=False)['input_ids']\n"
        "        return input_token_ids, response_token_ids\n"
    )
    f6 = _check(_audit(_orz(**{"orz/ppo/trainer.py": trainer})), "F6")
    assert not any(e.path == "orz/ppo/trainer.py" for e in f6.evidence), f6.detail
    assert "start-up" not in f6.detail


# --- DeepSeek-Coder / Qwen-VL: HF Trainer with a DeepSpeed config whose scheduler is WarmupLR ----------------------------

_DS_WARMUP = ('{\n  "bf16": {"enabled": "auto"},\n  "scheduler": {\n    "type": "WarmupLR",\n    "params": {"warmup_min_lr": "auto", '
              '"warmup_max_lr": "auto", "warmup_num_steps": "auto"}\n  },\n  "zero_optimization": {"stage": 3, "overlap_comm": true},\n'
              '  "train_micro_batch_size_per_gpu": "auto"\n}\n')
_HF_FINETUNE = ("import transformers\nfrom transformers import Trainer\n\n\ndef train():\n"
                "    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
                "    (training_args,) = parser.parse_args_into_dataclasses()\n"
                "    model = transformers.AutoModelForCausalLM.from_pretrained('deepseek-ai/deepseek-coder-6.7b-instruct')\n"
                "    trainer = Trainer(model=model, args=training_args)\n    trainer.train()\n\n\nif __name__ == '__main__':\n    train()\n")


def _launch(ds: bool = True) -> str:
    return ("deepspeed finetune_deepseekcoder.py \\\n    --output_dir out \\\n    --learning_rate 2e-5 \\\n    --warmup_steps 10 \\\n"
            "    --lr_scheduler_type \"cosine\" \\\n    --bf16 True" + (" \\\n    --deepspeed configs/ds_config_zero3.json\n" if ds else "\n"))


def test_a_deepspeed_warmup_scheduler_replaces_the_trainers_cosine() -> None:
    a = _audit({"finetune/finetune_deepseekcoder.py": _HF_FINETUNE, "finetune/configs/ds_config_zero3.json": _DS_WARMUP,
                "finetune/run.sh": "cd finetune && " + _launch()})
    g1 = _check(a, "G1")
    assert g1.status == Status.PARTIAL, g1.detail
    assert "WarmupLR" in g1.detail and "replaces" in g1.detail


def test_the_trainers_cosine_holds_when_the_deepspeed_config_has_no_scheduler() -> None:
    ds = _DS_WARMUP.replace('  "scheduler": {\n    "type": "WarmupLR",\n    "params": {"warmup_min_lr": "auto", '
                            '"warmup_max_lr": "auto", "warmup_num_steps": "auto"}\n  },\n', "")
    a = _audit({"finetune/finetune_deepseekcoder.py": _HF_FINETUNE, "finetune/configs/ds_config_zero3.json": ds,
                "finetune/run.sh": "cd finetune && " + _launch()})
    assert _check(a, "G1").status == Status.USED


def test_launches_without_deepspeed_keep_the_trainers_schedule() -> None:
    # most launches pass no DeepSpeed config: the HF schedule is theirs, the DeepSpeed scheduler is the exception
    a = _audit({"finetune/finetune_deepseekcoder.py": _HF_FINETUNE, "finetune/configs/ds_config_zero3.json": _DS_WARMUP,
                "finetune/run_ds.sh": "cd finetune && " + _launch(),
                "finetune/run_a.sh": "cd finetune && " + _launch(ds=False).replace("deepspeed ", "python "),
                "finetune/run_b.sh": "cd finetune && " + _launch(ds=False).replace("deepspeed ", "python ")})
    g1 = _check(a, "G1")
    assert "replaces" not in g1.detail


# --- RWKV-LM and InternLM-XComposer: older versions of the project kept in top-level folders ------------------------------

def _rwkv_train(version: str) -> str:
    return (f"# RWKV-{version}\nimport torch\nfrom src.model import GPT\n\nmodel = GPT()\n"
            "opt = torch.optim.Adam(model.parameters(), lr=6e-4)\nfor batch in range(10):\n    loss = model(batch)\n"
            "    loss.backward()\n    opt.step()\n")


def test_older_version_folders_beside_a_newer_trained_one_are_archived() -> None:
    files = {f"RWKV-v{v}/train.py": _rwkv_train(v) for v in ("4", "5", "7")}
    files["RWKV-v4neo/train.py"] = _rwkv_train("4neo")
    files["RWKV-v8/251014_rosa_1bit_train.py"] = _rwkv_train("8")
    files["README.md"] = "# RWKV\n"
    a = _audit(files)
    roles = a.roles.by_path
    assert roles["RWKV-v4/train.py"] == "archive" and roles["RWKV-v5/train.py"] == "archive"
    assert roles["RWKV-v4neo/train.py"] == "archive"
    assert roles["RWKV-v7/train.py"] not in ("archive",)
    assert roles["RWKV-v8/251014_rosa_1bit_train.py"] == "archive"  # a dated experiment (YYMMDD_)


def test_model_family_folders_without_versions_stay_in_scope() -> None:
    # the control: sibling folders of different models (no version in the name) are not versions of one project
    files = {f"{m}/train.py": _rwkv_train(m) for m in ("llama", "mistral", "qwen")}
    a = _audit(files)
    assert all(r != "archive" for p, r in a.roles.by_path.items() if p.endswith("train.py"))


def _rwkv7(extra_model: str = "") -> dict[str, str]:
    model = ("import pytorch_lightning as pl\nimport torch\nfrom torch import nn\n\n\nclass WKV_7(torch.autograd.Function):\n"
             "    @staticmethod\n    def forward(ctx, r, w, k, v, a, b):\n        return torch.ops.wind_backstepping.forward(r, w, k, v, a, b)\n\n\n"
             "class RWKV_Tmix_x070(nn.Module):\n    def forward(self, x, v_first):\n        return WKV_7.apply(x, x, x, x, x, x), v_first\n\n\n"
             + extra_model +
             "class RWKV(pl.LightningModule):\n    def configure_optimizers(self):\n"
             "        return torch.optim.Adam(self.parameters(), lr=6e-4)\n\n"
             "    def training_step(self, batch, batch_idx):\n        idx, targets = batch\n        return self(idx).float().mean()\n")
    train = ("import pytorch_lightning as pl\nfrom torch.utils.data import DataLoader\n\nfrom src.dataset import MyDataset\n"
             "from src.model import RWKV\n\nmodel = RWKV()\ntrainer = pl.Trainer(precision='bf16', strategy='deepspeed_stage_2')\n"
             "data_loader = DataLoader(MyDataset(), shuffle=False, pin_memory=True, batch_size=16, num_workers=1)\n"
             "trainer.fit(model, data_loader)\n")
    return {"RWKV-v7/train_temp/src/model.py": model, "RWKV-v7/train_temp/train.py": train,
            "RWKV-v7/train_temp/src/dataset.py": "class MyDataset:\n    pass\n"}


def test_an_attention_free_model_makes_flash_attention_not_applicable() -> None:
    d1 = _check(_audit(_rwkv7()), "D1")
    assert d1.status == Status.NA, d1.detail
    assert "RWKV_Tmix_x070" in d1.detail or "RWKV at" in d1.detail


def test_a_hybrid_with_an_attention_layer_is_judged() -> None:
    attn = ("class CausalSelfAttention(nn.Module):\n    def forward(self, q, k, v):\n"
            "        return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v\n\n\n")
    d1 = _check(_audit(_rwkv7(attn)), "D1")
    assert d1.status != Status.NA


# --- InternLM-XComposer 2.5: dynamic resolution through HD sub-images ------------------------------------------------------

_IXC_SH = ("torchrun --nproc_per_node 8 finetune.py \\\n    --model_name_or_path internlm/internlm-xcomposer2d5-7b \\\n"
           "    --data_path data.txt \\\n    --fix_vit False \\\n    --hd_num {hd} \\\n    --bf16 True \\\n"
           "    --deepspeed ds_config_zero2.json\n")
_IXC_PY = ("from dataclasses import dataclass, field\n\nimport transformers\nfrom transformers import Trainer\n\n\n@dataclass\n"
           "class DataArguments:\n    data_path: str = field(default='data.txt')\n    hd_num: int = 18\n\n\n"
           "def train():\n    parser = transformers.HfArgumentParser((DataArguments, transformers.TrainingArguments))\n"
           "    data_args, training_args = parser.parse_args_into_dataclasses()\n"
           "    model = transformers.AutoModel.from_pretrained('internlm/internlm-xcomposer2d5-7b', trust_remote_code=True)\n"
           "    Trainer(model=model, args=training_args).train()\n")


def test_xcomposer_hd_sub_images_are_dynamic_resolution() -> None:
    a = _audit({"finetune/finetune.sh": _IXC_SH.format(hd=18), "finetune/finetune.py": _IXC_PY})
    assert a.project.multimodal  # ``--fix_vit``: the model has a ViT
    assert _check(a, "H2").status == Status.USED


def test_xcomposer_with_one_view_is_fixed_resolution() -> None:
    a = _audit({"finetune/finetune.sh": _IXC_SH.format(hd=1), "finetune/finetune.py": _IXC_PY.replace("hd_num: int = 18", "hd_num: int = 1")})
    assert _check(a, "H2").status == Status.UNUSED


# --- OpenRLHF: CPU offload passed by one launch of eleven -------------------------------------------------------------------

def test_offload_in_a_minority_of_launches_is_partial() -> None:
    cli = ("import argparse\n\nfrom openrlhf.utils import get_strategy\n\n\ndef train(args):\n    strategy = get_strategy(args)\n"
           "    model = strategy.prepare(args.pretrain)\n    for batch in range(10):\n        loss = model(batch)\n"
           "        strategy.backward(loss, model)\n\n\nif __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
           "    parser.add_argument('--pretrain', type=str)\n"
           "    parser.add_argument('--ds.adam_offload', action='store_true', default=False, help='Offload Adam Optimizer')\n"
           "    train(parser.parse_args())\n")
    files = {"openrlhf/cli/train_sft.py": cli}
    for i in range(5):
        flag = "   --ds.adam_offload \\\n" if i == 0 else ""
        files[f"examples/scripts/train_sft_{i}.sh"] = (
            "deepspeed --module openrlhf.cli.train_sft \\\n   --pretrain meta-llama/Meta-Llama-3-8B \\\n" + flag + "   --learning_rate 5e-6\n")
    # a checkpoint conversion beside them is no training launch
    files["examples/scripts/ckpt_ds_zero_to_universal.sh"] = ("python -m deepspeed.checkpoint.ds_to_universal \\\n"
                                                             "   --input_folder ckpt/global_step10 \\\n   --output_folder ckpt/universal\n")
    c4 = _check(_audit(files), "C4")
    assert c4.status == Status.PARTIAL, c4.detail
    assert "1 of 5 training launches" in c4.detail


# --- 01-ai/Yi: DeepSpeed-Chat's config builder, returned as a dict ------------------------------------------------------

_YI_DS_UTILS = (
    "import deepspeed.comm as dist\nimport torch\n\nGLOBAL_BATCH_SIZE = 32\nMICRO_BATCH_SIZE = 4\n\n\n"
    "def get_train_ds_config(offload, stage=2, enable_mixed_precision_lora=False):\n"
    "    device = 'cpu' if offload else 'none'\n"
    "    zero_opt_dict = {\n        'stage': stage,\n        'offload_param': {'device': device},\n"
    "        'offload_optimizer': {'device': device},\n    }\n"
    "    if enable_mixed_precision_lora:\n        zero_opt_dict['zero_quantized_nontrainable_weights'] = True\n"
    "        if dist.get_world_size() != torch.cuda.device_count():\n"
    "            zero_opt_dict['zero_hpz_partition_size'] = torch.cuda.device_count()\n"
    "    return {\n        'train_batch_size': GLOBAL_BATCH_SIZE,\n        'train_micro_batch_size_per_gpu': MICRO_BATCH_SIZE,\n"
    "        'zero_optimization': zero_opt_dict,\n        'fp16': {'enabled': {fp16}, 'loss_scale_window': 100},\n"
    "        'gradient_clipping': 1.0,\n    }\n"
)
_YI_MAIN = (
    "import argparse\n\nimport deepspeed\nfrom torch.utils.data import DataLoader\n\nfrom utils.ds_utils import get_train_ds_config\n"
    "from utils.model import create_hf_model\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--offload', action='store_true')\n    parser.add_argument('--zero_stage', type=int, default=0)\n"
    "    args = parser.parse_args()\n"
    "    ds_config = get_train_ds_config(offload=args.offload, stage=args.zero_stage{extra})\n"
    "    model = create_hf_model(args.model_name_or_path)\n"
    "    model, optimizer, _, lr_scheduler = deepspeed.initialize(model=model, config=ds_config)\n"
    "    for step, batch in enumerate(DataLoader(dataset, batch_size=4)):\n        loss = model(**batch).loss\n"
    "        model.backward(loss)\n        model.step()\n\n\nif __name__ == '__main__':\n    main()\n"
)


def _yi(fp16: str = "True", extra: str = "") -> dict[str, str]:
    return {"finetune/utils/ds_utils.py": _YI_DS_UTILS.replace("{fp16}", fp16), "finetune/sft/main.py": _YI_MAIN.replace("{extra}", extra),
            "finetune/scripts/run_sft_Yi_6b.sh": "deepspeed main.py \\\n    --zero_stage 2 \\\n    --offload\n"}


def test_fp16_in_a_returned_deepspeed_config_is_mixed_precision() -> None:
    c1 = _check(_audit(_yi()), "C1")
    assert c1.status == Status.USED, c1.detail
    assert any(e.path == "finetune/utils/ds_utils.py" for e in c1.evidence)


def test_a_returned_dict_that_is_no_deepspeed_config_is_not_read() -> None:
    # the control: the same ``fp16`` key in a dict without DeepSpeed's keys is some other payload
    files = _yi()
    files["finetune/utils/ds_utils.py"] = files["finetune/utils/ds_utils.py"].replace("'zero_optimization': zero_opt_dict,\n", "") \
        .replace("'train_micro_batch_size_per_gpu': MICRO_BATCH_SIZE,\n", "").replace("'train_batch_size': GLOBAL_BATCH_SIZE,\n", "")
    c1 = _check(_audit(files), "C1")
    assert not any(e.path == "finetune/utils/ds_utils.py" for e in c1.evidence)


def test_zero_plus_plus_behind_a_parameter_no_caller_passes_is_off() -> None:
    e3 = _check(_audit(_yi()), "E3")
    assert e3.status != Status.USED, e3.detail


def test_zero_plus_plus_turned_on_by_the_caller_counts() -> None:
    e3 = _check(_audit(_yi(extra=", enable_mixed_precision_lora=True")), "E3")
    assert e3.status == Status.USED, e3.detail


# --- jingyaogong/minimind-v: the vision tower frozen where it is built ------------------------------------------------------

def _minimind_v(builder: str = "get_vision_model") -> dict[str, str]:
    model = ("import torch\nfrom torch import nn\nfrom transformers import SiglipImageProcessor, SiglipVisionModel\n\n\n"
             "class MiniMindVLM(nn.Module):\n    def __init__(self, config, vision_model_path):\n        super().__init__()\n"
             f"        self.vision_encoder, self.processor = self.__class__.{builder}(vision_model_path)\n\n"
             f"    @staticmethod\n    def {builder}(model_path):\n        model = SiglipVisionModel.from_pretrained(model_path)\n"
             "        processor = SiglipImageProcessor.from_pretrained(model_path)\n        for param in model.parameters():\n"
             "            param.requires_grad = False\n        return model.eval(), processor\n")
    train = ("import torch\nfrom model.model_vlm import MiniMindVLM\n\nmodel = MiniMindVLM(None, '../model/siglip2-base-p32-256-ve')\n"
             "optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4)\nfor step, (X, Y, pixel_values) in enumerate(loader):\n"
             "    loss = model(X, labels=Y, pixel_values=pixel_values).loss\n    loss.backward()\n    optimizer.step()\n")
    return {"model/model_vlm.py": model, "trainer/train_pretrain_vlm.py": train}


def test_a_vision_tower_frozen_in_its_builder_is_frozen() -> None:
    h1 = _check(_audit(_minimind_v()), "H1")
    assert h1.status == Status.USED, h1.detail


def test_a_parameter_loop_in_a_function_not_named_for_vision_is_not_read_as_a_vision_freeze() -> None:
    h1 = _check(_audit(_minimind_v("get_text_model")), "H1")
    assert h1.status != Status.USED


# --- THUDM/GLM-4: ``torch.cuda.empty_cache()`` in the Trainer's evaluation step ------------------------------------------

def _glm4(hook: str) -> dict[str, str]:
    finetune = ("import torch\nfrom transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments\n\n\n"
                "class Seq2SeqTrainer(Seq2SeqTrainer):\n"
                f"    def {hook}(self, model, inputs, prediction_loss_only=False, ignore_keys=None, **gen_kwargs):\n"
                "        with torch.no_grad():\n            loss, generated_tokens, labels = super().prediction_step(model, inputs, prediction_loss_only)\n"
                "            del inputs\n            torch.cuda.empty_cache()\n        return loss, generated_tokens, labels\n\n\n"
                "def main():\n    args = Seq2SeqTrainingArguments(output_dir='./output', deepspeed='configs/ds_zero_3.json')\n"
                "    trainer = Seq2SeqTrainer(model=model, args=args)\n    trainer.train()\n\n\nif __name__ == '__main__':\n    main()\n")
    ds = ('{\n  "bf16": {"enabled": "auto"},\n  "zero_optimization": {\n    "stage": 3,\n    "overlap_comm": true,\n'
          '    "contiguous_gradients": true\n  },\n  "train_micro_batch_size_per_gpu": "auto"\n}\n')
    return {"finetune/finetune.py": finetune, "finetune/configs/ds_zero_3.json": ds}


def test_empty_cache_in_the_evaluation_step_is_not_every_training_step() -> None:
    c6 = _check(_audit(_glm4("prediction_step")), "C6")
    assert c6.status == Status.USED, c6.detail


def test_empty_cache_in_the_training_step_still_counts() -> None:
    c6 = _check(_audit(_glm4("training_step")), "C6")
    assert c6.status == Status.PARTIAL, c6.detail


# --- karpathy/build-nanogpt: .npy token shards, a hand-written loader, GPT-2 sizes in from_pretrained -------------------

_BNG_TRAIN = (
    "import os\nfrom dataclasses import dataclass\n\nimport numpy as np\nimport torch\nimport torch.nn as nn\nfrom torch.nn import functional as F\n"
    "from torch.nn.parallel import DistributedDataParallel as DDP\n\n\n@dataclass\nclass GPTConfig:\n    block_size: int = 1024\n"
    "    vocab_size: int = 50257\n    n_layer: int = 12\n    n_head: int = 12\n    n_embd: int = 768\n\n\n"
    "class GPT(nn.Module):\n    def forward(self, idx, targets=None):\n"
    "        return F.scaled_dot_product_attention(idx, idx, idx, is_causal=True)\n\n"
    "    @classmethod\n    def from_pretrained(cls, model_type):\n        from transformers import GPT2LMHeadModel\n"
    "        config_args = {\n            'gpt2': dict(n_layer=12, n_head=12, n_embd=768),\n"
    "            'gpt2-medium': dict(n_layer=24, n_head=16, n_embd=1024),\n            'gpt2-large': dict(n_layer=36, n_head=20, n_embd=1280),\n"
    "            'gpt2-xl': dict(n_layer=48, n_head=25, n_embd=1600),\n        }[model_type]\n"
    "        model_hf = GPT2LMHeadModel.from_pretrained(model_type)\n        return cls(GPTConfig(**config_args))\n\n\n"
    "def load_tokens(filename):\n    npt = np.load(filename)\n    npt = npt.astype(np.int32)\n    return torch.tensor(npt, dtype=torch.long)\n\n\n"
    "class DataLoaderLite:\n    def __init__(self, B, T, process_rank, num_processes, split):\n        self.B, self.T = B, T\n"
    "        self.shards = sorted(os.path.join('edu_fineweb10B', s) for s in os.listdir('edu_fineweb10B') if split in s)\n"
    "        self.tokens = load_tokens(self.shards[0])\n        self.current_position = 0\n\n"
    "    def next_batch(self):\n        B, T = self.B, self.T\n"
    "        buf = self.tokens[self.current_position : self.current_position + B * T + 1]\n"
    "        x = (buf[:-1]).view(B, T)\n        y = (buf[1:]).view(B, T)\n        self.current_position += B * T\n        return x, y\n\n\n"
    "B = 64\nT = 1024\ntrain_loader = DataLoaderLite(B=B, T=T, process_rank=0, num_processes=1, split='train')\n"
    "model = GPT(GPTConfig(vocab_size=50304))\nmodel.to('cuda')\nuse_compile = False\nif use_compile:\n    model = torch.compile(model)\n"
    "optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, fused=True)\nfor step in range(19073):\n"
    "    x, y = train_loader.next_batch()\n    x, y = x.to('cuda'), y.to('cuda')\n"
    "    with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n        logits, loss = model(x, y)\n"
    "    loss.backward()\n    optimizer.step()\n"
)
_BNG_DATA = ("import numpy as np\n\n\ndef write_datafile(filename, tokens_np):\n    np.save(filename, tokens_np)\n")


def _bng() -> dict[str, str]:
    return {"train_gpt2.py": _BNG_TRAIN, "fineweb.py": _BNG_DATA}


def test_npy_token_shards_read_whole_are_pre_tokenized_packed_data() -> None:
    a = _audit(_bng())
    f10, f7, f5 = _check(a, "F10"), _check(a, "F7"), _check(a, "F5")
    assert f10.status == Status.USED and any(e.path == "train_gpt2.py" for e in f10.evidence), f10.detail
    assert f7.status == Status.USED, f7.detail
    assert f5.status == Status.USED, f5.detail


def test_an_npy_load_that_is_no_token_shard_is_not_read_as_one() -> None:
    # the control: ``np.load`` of something that is not token ids (a feature file) reads nothing of the kind
    files = {"train_gpt2.py": _BNG_TRAIN.replace("def load_tokens(filename):", "def load_features(filename):")
             .replace("load_tokens(self.shards[0])", "load_features(self.shards[0])").replace("'edu_fineweb10B'", "'clip_features'")}
    f10 = _check(_audit(files), "F10")
    assert not any(e.path == "train_gpt2.py" for e in f10.evidence), f10.detail


def test_checkpoint_sizes_in_from_pretrained_do_not_hide_the_trained_model() -> None:
    a = _audit(_bng())
    assert a.project.params_billions is not None and 0.1 < a.project.params_billions < 0.2


def test_a_gpt2_size_model_without_compile_is_not_called_launch_bound() -> None:
    a = _audit(_bng())
    assert a.project.bottleneck.value != "launch-bound"
    assert any(r.startswith("launch-bound:") and "tokens per micro-batch" in r for r in a.project.bottleneck_reasons)


def test_a_tiny_model_without_compile_is_still_launch_bound() -> None:
    a = _audit(_llama2c())
    files = _llama2c()
    files["train.py"] = files["train.py"].replace("compile = True", "compile = False")
    a = _audit(files)
    assert a.project.bottleneck.value == "launch-bound"


# --- NVlabs/Eagle: a vision-language model whose own package is called ``eagle`` --------------------------------------------

def _eagle(spec: bool = False) -> dict[str, str]:
    train = ("import torch\nimport transformers\n\nfrom eagle import conversation as conversation_lib\nfrom eagle.mm_utils import tokenizer_image_token\n"
             "from eagle.model import EagleLlamaForCausalLM\n\n\ndef preprocess(sources, tokenizer):\n"
             "    conv = conversation_lib.default_conversation.copy()\n"
             "    return [tokenizer_image_token(s, tokenizer, return_tensors='pt') for s in sources]\n\n\n"
             "def train():\n    model = EagleLlamaForCausalLM.from_pretrained('lmsys/vicuna-7b-v1.5')\n"
             "    trainer = transformers.Trainer(model=model)\n    trainer.train()\n")
    files = {"eagle/train/train.py": train, "eagle/__init__.py": "", "eagle/conversation.py": "default_conversation = None\n",
             "eagle/mm_utils.py": "def tokenizer_image_token(prompt, tokenizer, return_tensors=None):\n    return tokenizer(prompt).input_ids\n",
             "eagle/model/__init__.py": "class EagleLlamaForCausalLM:\n    pass\n",
             "eagle/serve/cli.py": ("import torch\nfrom eagle.mm_utils import tokenizer_image_token\nfrom eagle.model import EagleLlamaForCausalLM\n\n"
                                    "model = EagleLlamaForCausalLM.from_pretrained('NVEagle/Eagle-X5-7B')\n"
                                    "input_ids = tokenizer_image_token(prompt, tokenizer, return_tensors='pt').unsqueeze(0).cuda()\n"
                                    "with torch.inference_mode():\n    output_ids = model.generate(input_ids, max_new_tokens=512)\n")}
    if spec:  # SafeAILab/EAGLE: the speculative heads' own model class
        files["eagle/model/ea_model.py"] = ("import torch.nn as nn\n\n\nclass EaModel(nn.Module):\n    def eagenerate(self, input_ids):\n"
                                            "        return input_ids\n")
        files["eagle/application/webui.py"] = ("import torch\nfrom eagle.model.ea_model import EaModel\nfrom eagle.model.utils import prepare_logits_processor\n\n"
                                               "model = EaModel.from_pretrained(base_model_path='meta-llama/Llama-2-7b-chat-hf', ea_model_path='yuhuili/EAGLE-llama2-chat-7B')\n"
                                               "logits_processor = prepare_logits_processor(temperature=0.0)\n"
                                               "output_ids = model.generate(torch.tensor([[1, 2, 3]]).cuda(), max_new_tokens=512)\n")
    return files


def test_a_package_named_eagle_is_not_speculative_decoding_by_its_name() -> None:
    j7 = _check(_audit(_eagle()), "J7")
    assert j7.status != Status.USED, j7.detail


def test_the_eagle_speculative_package_still_counts() -> None:
    j7 = _check(_audit(_eagle(spec=True)), "J7")
    assert j7.status == Status.USED, j7.detail


def test_token_counts_loaded_from_npy_are_not_token_ids() -> None:
    # xtuner's JSON dataset caches its per-sample token counts: ``num_tokens = np.load(_cached_file)``
    ds = ("import numpy as np\nfrom torch.utils.data import Dataset\n\n\nclass JsonDataset(Dataset):\n"
          "    def __init__(self, path, cache_dir):\n        self.path = path\n"
          "        num_tokens = np.load(cache_dir + '/num_tokens.npy')\n        self.num_tokens = num_tokens\n\n"
          "    def __getitem__(self, i):\n        return self.samples[i]\n")
    files = {**_bng(), "xtuner/_lite/datasets/json.py": ds}
    f10 = _check(_audit(files), "F10")
    assert not any(e.path == "xtuner/_lite/datasets/json.py" for e in f10.evidence)


# --- Lightning-AI/litgpt: GPU tests run by Lightning AI's CI --------------------------------------------------------------

def test_lightning_ci_workflows_are_ci() -> None:
    files = {".lightning/workflows/tests.yaml": ("trigger:\n  push:\n    branches: ['main']\nenv:\n  NCCL_IGNORE_DISABLED_P2P: 1\n"
                                                 "run: |\n  pytest tests -v\n"),
             "litgpt/pretrain.py": ("import torch\nimport lightning as L\n\n\ndef main(fabric):\n    model = torch.compile(model)\n"
                                    "    for batch in loader:\n        loss = model(batch)\n        fabric.backward(loss)\n        optimizer.step()\n")}
    a = _audit(files)
    assert a.roles.by_path[".lightning/workflows/tests.yaml"] == "ci"
    assert _check(a, "E4").status != Status.USED


# --- THUDM/ChatGLM-6B: a copy of transformers.Trainer on the training path -------------------------------------------------

#: the methods that make a class a copy of ``transformers.Trainer`` (see :func:`checks.roles.framework_copy`)
TRAINER_COPY_METHODS = ("_inner_training_loop", "_maybe_log_save_evaluate", "_save_checkpoint", "_load_from_checkpoint",
                       "_load_optimizer_and_scheduler", "_load_rng_state", "_rotate_checkpoints", "_sorted_checkpoints",
                       "_get_train_sampler", "_get_eval_sampler", "_remove_unused_columns", "_set_signature_columns_if_needed",
                       "create_optimizer_and_scheduler", "evaluation_loop", "prediction_step", "floating_point_ops", "store_flos")


def _chatglm(compile_flag: str = "") -> dict[str, str]:
    methods = TRAINER_COPY_METHODS
    trainer = ("import torch\nfrom transformers import TrainingArguments\nfrom transformers.trainer_utils import speed_metrics\n\n\n"
               "class Trainer:\n    def __init__(self, model=None, args=None):\n        self.model = model\n        self.args = args\n\n"
               "    def _wrap_model(self, model, training=True):\n        if self.args.torch_compile:\n"
               "            model = torch.compile(model, backend=self.args.torch_compile_backend)\n        return model\n\n"
               + "".join(f"    def {m}(self, *args, **kwargs):\n        return speed_metrics('{m}', 0.0)\n\n" for m in methods))
    main = ("from transformers import HfArgumentParser, Seq2SeqTrainingArguments\n\nfrom trainer import Trainer\n\n\n"
            "def main():\n    (training_args,) = HfArgumentParser((Seq2SeqTrainingArguments,)).parse_args_into_dataclasses()\n"
            "    trainer = Trainer(model=model, args=training_args)\n    trainer.train()\n\n\nif __name__ == '__main__':\n    main()\n")
    run = ("deepspeed --num_gpus=4 main.py \\\n    --deepspeed deepspeed.json \\\n    --do_train \\\n    --per_device_train_batch_size 4 \\\n"
           f"    --learning_rate 1e-4 \\\n    --fp16{compile_flag}\n")
    return {"ptuning/trainer.py": trainer, "ptuning/main.py": main, "ptuning/ds_train_finetune.sh": run}


def test_a_trainer_copys_compile_branch_is_off_at_the_framework_default() -> None:
    d2 = _check(_audit(_chatglm()), "D2")
    assert d2.status != Status.USED, d2.detail


def test_a_trainer_copys_compile_branch_runs_when_the_launch_turns_it_on() -> None:
    d2 = _check(_audit(_chatglm(" \\\n    --torch_compile")), "D2")
    assert d2.status == Status.USED, d2.detail
