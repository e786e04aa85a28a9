"""Round 36 (issue #9): EasyLM (a JAX/Flax trainer on TPU pods), Video-LLaMA and StarCoder at HEAD, read as a new user would.
Each test is one false claim of those reports, made from the shape of the real code, with a control that keeps the rule
honest."""

from __future__ import annotations

from reports.advice import build_plan
from reports.markdown import render_markdown

from .claims import audit as _audit
from .claims import check as _check

# --- EasyLM: a JAX trainer whose step is compiled by a pjit call, not a decorator ----------------------------------------------

_TRAIN = (
    "import jax\nimport jax.numpy as jnp\nimport optax\nimport mlxu\nfrom jax.experimental.pjit import pjit\n"
    "from jax.sharding import PartitionSpec as PS\n\n"
    "from mylm.model import FlaxLMForCausalLM, LMConfig\n\n"
    "FLAGS, FLAGS_DEF = mlxu.define_flags_with_default(\n    seed=42,\n    mesh_dim='1,-1,1',\n    dtype='fp32',\n"
    "    total_steps=10000,\n    log_freq=50,\n    save_model_freq=0,\n    save_milestone_freq=0,\n)\n\n\n"
    "def main(argv):\n    model = FlaxLMForCausalLM(LMConfig(), dtype=FLAGS.dtype)\n\n"
    "    def train_step(train_state, rng, batch):\n        def loss_and_accuracy(params):\n"
    "            logits = model.apply(params, batch['input_tokens']).logits\n"
    "            return optax.softmax_cross_entropy_with_integer_labels(logits, batch['target_tokens']).mean()\n"
    "        grad_fn = jax.value_and_grad(loss_and_accuracy)\n        loss, grads = grad_fn(train_state.params)\n"
    "        train_state = train_state.apply_gradients(grads=grads)\n        return train_state, rng, loss\n\n"
    "    def eval_step(train_state, rng, batch):\n        return model.apply(train_state.params, batch['input_tokens'])\n\n"
    "    sharded_train_step = pjit(\n        train_step,\n        in_shardings=(PS(), PS(), PS()),\n"
    "        out_shardings=(PS(), PS(), PS()),\n        donate_argnums=(0, 1),\n    )\n"
    "    sharded_eval_step = pjit(eval_step, in_shardings=(PS(), PS(), PS()), out_shardings=PS())\n"
    "    for step in range(FLAGS.total_steps):\n        train_state, rng, loss = sharded_train_step(train_state, rng, batch)\n"
    "        if FLAGS.save_milestone_freq > 0 and (step + 1) % FLAGS.save_milestone_freq == 0:\n"
    "            checkpointer.save_all(train_state, milestone=True)\n\n\n"
    "if __name__ == '__main__':\n    mlxu.run(main)\n"
)
_MODEL = (
    "import flax.linen as nn\nimport jax.numpy as jnp\n\n\n"
    "class LMConfig:\n    def __init__(self, remat_policy='nothing_saveable', hidden_size=4096, num_hidden_layers=32):\n"
    "        self.remat_policy = remat_policy\n        self.hidden_size = hidden_size\n        self.num_hidden_layers = num_hidden_layers\n\n\n"
    "class Block(nn.Module):\n    config: LMConfig\n\n    @nn.compact\n    def __call__(self, x):\n"
    "        return x + nn.Dense(self.config.hidden_size)(x)\n\n\n"
    "class BlockCollection(nn.Module):\n    config: LMConfig\n\n    @nn.compact\n    def __call__(self, x):\n"
    "        block = Block\n        if self.config.remat_policy != '':\n"
    "            block = nn.remat(Block, static_argnums=(), prevent_cse=True)\n"
    "        for i in range(self.config.num_hidden_layers):\n            x = block(self.config, name=str(i))(x)\n        return x\n\n\n"
    "class FlaxLMForCausalLM(nn.Module):\n    config: LMConfig\n    dtype: jnp.dtype = jnp.float32\n\n"
    "    @nn.compact\n    def __call__(self, input_ids):\n        return BlockCollection(self.config)(input_ids)\n"
)
_SERVE = (
    "from functools import partial\n\nimport jax\nimport mlxu\nfrom jax.experimental.pjit import pjit\n"
    "from jax.sharding import PartitionSpec as PS\n\nfrom mylm.model import FlaxLMForCausalLM, LMConfig\n\n"
    "FLAGS, FLAGS_DEF = mlxu.define_flags_with_default(dtype='bf16', input_length=1024)\n\n\n"
    "def main(argv):\n    hf_model = FlaxLMForCausalLM(LMConfig())\n\n"
    "    @partial(pjit, in_shardings=(PS(), PS(), PS()), out_shardings=PS())\n"
    "    def forward_generate(params, rng, batch):\n        output = hf_model.generate(\n"
    "            batch['input_tokens'],\n            attention_mask=batch['attention_mask'],\n            params=params['params'],\n"
    "            prng_key=rng,\n        ).sequences\n        return output\n\n    return forward_generate\n\n\n"
    "if __name__ == '__main__':\n    mlxu.run(main)\n"
)
_PRETRAIN_SH = (
    "#! /bin/bash\n# pretrain a 7B model on a TPU v4-512 pod; run this script on every host of the pod.\n\n"
    "export LIBTPU_INIT_ARGS='--xla_enable_async_all_gather=true --xla_tpu_enable_latency_hiding_scheduler=true'\n\n"
    "python -m mylm.train \\\n    --mesh_dim='-1,64,1' \\\n    --dtype='fp32' \\\n    --total_steps=250000 \\\n"
    "    --log_freq=50 \\\n    --save_model_freq=0 \\\n    --save_milestone_freq=2500\n"
)
_SERVE_SH = "#! /bin/bash\n\npython -m mylm.serve \\\n    --mesh_dim='1,-1,1' \\\n    --dtype=bf16 \\\n    --input_length=1024\n"


def _easylm(**over: str) -> dict[str, str]:
    files = {"mylm/__init__.py": "", "mylm/train.py": _TRAIN, "mylm/model.py": _MODEL, "mylm/serve.py": _SERVE,
             "examples/pretrain.sh": _PRETRAIN_SH, "examples/serve.sh": _SERVE_SH}
    files.update(over)
    return {k: v for k, v in files.items() if v is not None}


def test_a_pjit_call_on_the_train_step_is_a_jax_training_path():
    a = _audit(_easylm())
    assert "train_step" in a.project.notes.get("jax_training", "")
    assert "jax" in a.project.frameworks
    # control: a pjit of the evaluation step alone is no training path
    a = _audit(_easylm(**{"mylm/train.py": _TRAIN.replace("        train_step,\n", "        eval_step,\n")}))
    assert not a.project.notes.get("jax_training")


def test_the_launch_of_a_serving_script_is_no_training_recipe():
    a = _audit(_easylm())
    assert a.roles.by_path["examples/serve.sh"] == "eval" and a.roles.by_path["mylm/serve.py"] == "eval"
    c1 = _check(a, "C1")
    assert c1.status.value == "unused" and all(e.path != "examples/serve.sh" for e in c1.evidence)
    # control: the same script named for training keeps its launch in scope
    a = _audit(_easylm(**{"examples/serve.sh": _SERVE_SH.replace("mylm.serve", "mylm.train")}))
    assert a.roles.by_path["examples/serve.sh"] == "launch"
    # control: a script that starts a serving engine itself before its client (oumi ``vllm_worker.sh``) stays in scope
    engine = "vllm serve /models/llama --tensor-parallel-size=8 --enforce-eager &\n" + _SERVE_SH
    a = _audit(_easylm(**{"examples/serve.sh": engine}))
    assert a.roles.by_path["examples/serve.sh"] == "launch"


def test_pytorch_only_mechanisms_do_not_apply_to_a_jax_step():
    a = _audit(_easylm())
    for cid in ("C6", "D4", "D6", "D8", "E3", "F11"):
        r = _check(a, cid)
        assert r.status.value == "n/a" and r.detail.startswith("JAX training path"), (cid, r.detail)
    for cid in ("A1", "C2", "D3"):
        r = _check(a, cid)
        assert r.status.value == "n/a" and r.detail.startswith("not judged: the training path is JAX"), (cid, r.detail)
    # control: a PyTorch trainer beside the JAX driver keeps every check
    torch_loop = ("import torch\n\n\ndef train(model, loader, optimizer):\n    for batch in loader:\n        loss = model(batch)\n"
                  "        loss.backward()\n        optimizer.step()\n\n\nif __name__ == '__main__':\n    train(model, loader, optimizer)\n")
    a = _audit(_easylm(**{"mylm/train_torch.py": torch_loop,
                          "examples/train_torch.sh": "torchrun --nproc_per_node 8 -m mylm.train_torch\n"}))
    assert not a.project.notes.get("jax_training")
    assert _check(a, "D4").status.value != "n/a" and _check(a, "A1").status.value != "n/a"


def test_xla_latency_hiding_scheduler_is_comm_compute_overlap():
    e2 = _check(_audit(_easylm()), "E2")
    assert e2.status.value == "used" and e2.evidence[0].path == "examples/pretrain.sh" and e2.evidence[0].line == 4
    off = _PRETRAIN_SH.replace("latency_hiding_scheduler=true", "latency_hiding_scheduler=false")
    assert _check(_audit(_easylm(**{"examples/pretrain.sh": off})), "E2").status.value == "unused"
    unset = _PRETRAIN_SH.replace(" --xla_tpu_enable_latency_hiding_scheduler=true", "")
    assert _check(_audit(_easylm(**{"examples/pretrain.sh": unset})), "E2").detail.startswith("not judged")


def test_jax_advice_names_jax_not_pytorch():
    a = _audit(_easylm())
    plan = build_plan(a)
    recs = {r.check: r for r in plan.recommendations}
    assert "jax.nn.dot_product_attention" in recs["D1"].text and "attn_implementation" not in recs["D1"].text
    assert "param_dtype" in recs["C1"].text and "bf16: true" not in recs["C1"].text
    assert recs["C1"].snippet is not None and recs["C1"].snippet.where.split(":")[0].endswith(".py")
    assert recs["D1"].snippet.where == "mylm/train.py"  # the file of the jitted step
    md = render_markdown(a, plan=plan)
    assert "jax.profiler" in md and "torch.profiler" not in md
    zh = render_markdown(a, lang="zh", plan=plan)
    assert "jax.nn.dot_product_attention" in zh and "attn_implementation" not in zh.split("## 优先")[0]


def test_fp32_on_a_jax_path_is_memory_not_missed_tensor_cores():
    a = _audit(_easylm())
    text = " ".join(a.project.bottleneck_reasons)
    assert "twice the memory" in text and "miss the Tensor Cores" not in text


def test_flax_remat_is_activation_checkpointing():
    c3 = _check(_audit(_easylm()), "C3")
    assert c3.status.value == "used" and c3.evidence[0].path == "mylm/model.py"
    plain = _MODEL.replace("            block = nn.remat(Block, static_argnums=(), prevent_cse=True)\n", "            block = Block\n")
    assert _check(_audit(_easylm(**{"mylm/model.py": plain})), "C3").status.value != "used"


def test_a_flax_generate_in_a_jax_file_is_not_pytorch_eager_generation():
    chat = _SERVE.replace("if __name__ == '__main__':\n    mlxu.run(main)\n", "")
    a = _audit(_easylm(**{"examples/serve.sh": None, "mylm/serve.py": None, "mylm/chat.py": chat}))
    j5 = _check(a, "J5")
    assert "PyTorch eager" not in (j5.detail or "")
    # control: the same call in a PyTorch file is HF generate
    torch_chat = "import torch\nfrom transformers import AutoModelForCausalLM\n\nmodel = AutoModelForCausalLM.from_pretrained('m')\n" \
                 "def reply(ids):\n    return model.generate(ids, attention_mask=ids, max_new_tokens=64)\n"
    a = _audit(_easylm(**{"examples/serve.sh": None, "mylm/serve.py": None, "mylm/chat.py": torch_chat}))
    assert "PyTorch eager" in (_check(a, "J5").detail or "")


# --- Video-LLaMA: a LAVIS-style runner around a frozen LLM -------------------------------------------------------------------

_VL_MODEL = (
    "import torch\nimport torch.nn as nn\nfrom transformers import LlamaForCausalLM, LlamaTokenizer\n\n"
    "from vl.models.Qformer import BertConfig, BertLMHeadModel\n\n\n"
    "class VideoLLAMA(nn.Module):\n    def __init__(self, llama_model='', freeze_qformer=True, max_txt_len=32):\n"
    "        super().__init__()\n        self.llama_tokenizer = LlamaTokenizer.from_pretrained(llama_model, use_fast=False)\n"
    "        self.llama_model = LlamaForCausalLM.from_pretrained(llama_model, torch_dtype=torch.bfloat16)\n\n"
    "        for name, param in self.llama_model.named_parameters():\n            param.requires_grad = False\n\n"
    "        self.llama_proj = nn.Linear(768, self.llama_model.config.hidden_size)\n\n"
    "    def forward(self, samples):\n        return self.llama_model(inputs_embeds=samples['embeds'], labels=samples['labels']).loss\n"
)
_VL_TASK = (
    "from vl.common.logger import MetricLogger\n\n\n"
    "class BaseTask:\n    def evaluation(self, model, data_loader, cuda_enabled=True):\n"
    "        metric_logger = MetricLogger(delimiter='  ')\n        header = 'Evaluation'\n        print_freq = 10\n"
    "        results = []\n        for samples in metric_logger.log_every(data_loader, print_freq, header):\n"
    "            results.extend(self.valid_step(model=model, samples=samples))\n        return results\n\n"
    "    def train_epoch(self, epoch, model, data_loader, optimizer, scaler, log_freq=50, accum_grad_iters=1):\n"
    "        metric_logger = MetricLogger(delimiter='  ')\n"
    "        for i in metric_logger.log_every(range(len(data_loader)), log_freq, 'Train'):\n"
    "            samples = next(data_loader)\n            loss = model(samples)\n            scaler.scale(loss).backward()\n"
    "            scaler.step(optimizer)\n            scaler.update()\n            optimizer.zero_grad()\n"
)
_VL_RUNNER = (
    "from torch.nn.parallel import DistributedDataParallel as DDP\n\n\n"
    "class RunnerBase:\n    def __init__(self, cfg, task, model):\n        self.config = cfg\n        self.task = task\n"
    "        self._model = DDP(model, device_ids=[cfg.run_cfg.gpu])\n\n"
    "    @property\n    def log_freq(self):\n        log_freq = self.config.run_cfg.get('log_freq', 50)\n        return int(log_freq)\n\n"
    "    def train(self):\n        for cur_epoch in range(self.config.run_cfg.max_epoch):\n"
    "            self.task.train_epoch(cur_epoch, self._model, self.loader, self.optimizer, self.scaler, log_freq=self.log_freq)\n"
)
_VL_TRAIN = (
    "from vl.models.video_llama import VideoLLAMA\nfrom vl.runners.runner_base import RunnerBase\n"
    "from vl.tasks.base_task import BaseTask\n\n\n"
    "def main():\n    cfg = Config(parse_args())\n    model = VideoLLAMA(cfg.model_cfg.llama_model)\n"
    "    RunnerBase(cfg=cfg, task=BaseTask(), model=model).train()\n\n\nif __name__ == '__main__':\n    main()\n"
)
_IMAGEBIND = (
    "import torch.nn as nn\n\n\nclass RGBDTPreprocessor(nn.Module):\n    def tokenize_input_and_cls_pos(self, input, stem, mask):\n"
    "        tokens = stem(input)\n        return tokens.flatten(2).transpose(1, 2)\n\n"
    "    def forward(self, vision=None):\n        vision_tokens = self.tokenize_input_and_cls_pos(vision, self.rgbt_stem, None)\n"
    "        return vision_tokens\n"
)


def _videollama(**over: str) -> dict[str, str]:
    files = {"vl/__init__.py": "", "vl/models/video_llama.py": _VL_MODEL, "vl/tasks/base_task.py": _VL_TASK,
             "vl/runners/runner_base.py": _VL_RUNNER, "train.py": _VL_TRAIN,
             "vl/models/ImageBind/models/multimodal_preprocessors.py": _IMAGEBIND,
             "README.md": "## Training\n\n```bash\ntorchrun --nproc_per_node=8 train.py --cfg-path ./train_configs/stage1.yaml\n```\n"}
    files.update(over)
    return {k: v for k, v in files.items() if v is not None}


def test_a_frozen_language_model_is_no_case_for_lora():
    a = _audit(_videollama())
    g4 = _check(a, "G4")
    assert g4.values.get("finetuning") == "frozen-llm" and g4.evidence[0].path == "vl/models/video_llama.py"
    assert "G4" not in {r.check for r in build_plan(a).recommendations}
    # control: the freeze under a switch (LLaVA's ``if model_args.freeze_backbone:``) leaves full fine-tuning possible
    guarded = _VL_MODEL.replace("        for name, param in self.llama_model.named_parameters():\n            param.requires_grad = False\n",
                                "        if freeze_llm:\n            for name, param in self.llama_model.named_parameters():\n"
                                "                param.requires_grad = False\n").replace("max_txt_len=32", "max_txt_len=32, freeze_llm=False")
    a = _audit(_videollama(**{"vl/models/video_llama.py": guarded}))
    assert _check(a, "G4").values.get("finetuning") != "frozen-llm"


def test_a_model_preprocessors_module_is_not_offline_preprocessing():
    f6 = _check(_audit(_videollama()), "F6")
    assert all("preprocessors" not in e.path for e in f6.evidence) and f6.values.get("preprocessing") != "mixed"
    # control: a data preparation script beside the trainer is offline preprocessing
    prep = ("import numpy as np\nfrom datasets import load_dataset\nfrom transformers import AutoTokenizer\n\n"
            "tok = AutoTokenizer.from_pretrained('gpt2')\nds = load_dataset('json', data_files='train.jsonl', split='train')\n"
            "ds = ds.map(lambda b: tok(b['text']), batched=True, num_proc=16)\nds.save_to_disk('data/tokenized')\n")
    f6 = _check(_audit(_videollama(**{"scripts/preprocess_data.py": prep,
                                      "scripts/prepare.sh": "python scripts/preprocess_data.py\n"})), "F6")
    assert any(e.path == "scripts/preprocess_data.py" for e in f6.evidence)


def test_an_evaluation_loops_interval_is_not_the_training_log_interval():
    i4 = _check(_audit(_videollama()), "I4")
    assert i4.status.value == "used" and i4.values.get("log_freq") == 50
    assert i4.evidence[0].path == "vl/runners/runner_base.py" and all(e.path != "vl/tasks/base_task.py" for e in i4.evidence)
    # control: a per-step default read the same way is a finding
    a = _audit(_videollama(**{"vl/runners/runner_base.py": _VL_RUNNER.replace("get('log_freq', 50)", "get('log_freq', 1)")}))
    assert _check(a, "I4").status.value == "unused"


_VL_MODELING = (
    "import math\nimport torch\nfrom torch import nn\nfrom transformers.modeling_utils import PreTrainedModel\n\n\n"
    "class LlamaAttention(nn.Module):\n    def forward(self, query_states, key_states, value_states, attention_mask=None):\n"
    "        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)\n"
    "        attn_weights = nn.functional.softmax(attn_weights + attention_mask, dim=-1)\n"
    "        return torch.matmul(attn_weights, value_states)\n\n\n"
    "class LlamaForCausalLM(PreTrainedModel):\n    pass\n"
)


def test_a_copied_model_class_gets_attention_advice_for_its_own_code():
    own = _VL_MODEL.replace("from transformers import LlamaForCausalLM, LlamaTokenizer",
                            "from transformers import LlamaTokenizer\n\nfrom vl.models.modeling_llama import LlamaForCausalLM")
    a = _audit(_videollama(**{"vl/models/video_llama.py": own, "vl/models/modeling_llama.py": _VL_MODELING,
                              "requirements.txt": "transformers==4.28.0\ntorch\n"}))
    d1 = _check(a, "D1")
    assert d1.values.get("attn_implementation") == "own-code" and "vl/models/modeling_llama.py" in d1.detail
    recs = {r.check: r for r in build_plan(a).recommendations}
    assert "scaled_dot_product_attention" in recs["D1"].text and "transformers>=4.36" not in (recs["D1"].snippet.code or "")
    assert _check(a, "D5").values.get("model_code") == "own"
    # control: the upstream class under an old pin keeps the pin advice
    a = _audit(_videollama(**{"requirements.txt": "transformers==4.28.0\ntorch\n"}))
    assert _check(a, "D1").values.get("attn_implementation") == "eager"


# --- StarCoder: a DeepSpeed config that only a README command passes ----------------------------------------------------------

def test_a_deepspeed_config_passed_only_by_a_documented_command_says_so():
    files = {
        "chat/train.py": ("from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments\n\n"
                          "parser = HfArgumentParser(TrainingArguments)\nargs = parser.parse_args_into_dataclasses()[0]\n"
                          "model = AutoModelForCausalLM.from_pretrained('bigcode/starcoderbase')\n"
                          "Trainer(model=model, args=args, train_dataset=ds).train()\n"),
        "chat/deepspeed_z3_config_bf16.json": '{\n  "bf16": {"enabled": "auto"},\n  "zero_optimization": {"stage": 3, "overlap_comm": true}\n}\n',
        "chat/requirements.txt": "transformers==4.28.1\ndeepspeed==0.9.1\n",
        "chat/README.md": ("## Launch training\n\n```\nTRANSFORMERS_VERBOSITY=info torchrun --nproc_per_node=8 train.py config.yaml "
                           "--deepspeed=deepspeed_z3_config_bf16.json\n```\n"),
    }
    b1 = _check(_audit(files), "B1")
    assert b1.status.value == "partial" and "only a documented command passes it (chat/README.md:4)" in b1.detail
    # control: without the documented command, nothing passes it
    files["chat/README.md"] = "## Launch training\n\nSee the docs.\n"
    assert "nothing visible passes it" in _check(_audit(files), "B1").detail
