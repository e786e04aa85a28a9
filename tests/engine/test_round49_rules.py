"""Round 49 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.model import Status

from .claims import audit as _audit
from .claims import check as _check

# --- facebookresearch/chameleon: an inference-only release scored as training code -------------------------------------

_TRANSFORMER = (
    "import torch\nfrom torch import nn\nfrom xformers.ops import fmha\n\n\n"
    "class Attention(nn.Module):\n"
    "    def forward(self, x, cache, attn_bias):\n"
    "        xq, xk, xv = self.wqkv(x).chunk(3, dim=-1)\n"
    "        output = fmha.memory_efficient_attention_forward(xq, cache[0], cache[1], attn_bias)\n"
    "        return self.wo(output)\n\n\n"
    "class Transformer(nn.Module):\n"
    "    @torch.no_grad()\n"
    "    def forward_with_attn_bias(self, token_values, attn_bias, cache):\n"
    "        h = self.tok_embeddings(token_values)\n"
    "        for i, layer in enumerate(self.layers):\n"
    "            h = layer(h, cache[i], attn_bias)\n"
    "        return self.output(self.norm(h)).float()\n\n\n"
    "def make_cache(args, length, dtype=None):\n"
    "    shape = (1, length, args.n_kv_heads, args.dim // args.n_heads)\n"
    "    return [(torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype)) for _ in range(args.n_layers)]\n")
_CUDAGRAPH = (
    "import torch\n\n\n"
    "class CUDAGraphWrapper:\n"
    "    def __init__(self, fn, warmup_iter=1):\n        self.fn = fn\n        self.warmup_iter = warmup_iter\n"
    "        self.graph = None\n\n"
    "    def __call__(self, *args, **kwargs):\n"
    "        if self.warmup_iter > 0:\n            self.warmup_iter -= 1\n            return self.fn(*args, **kwargs)\n"
    "        if self.graph is None:\n            self.graph = torch.cuda.CUDAGraph()\n"
    "            with torch.cuda.graph(self.graph):\n                self.result = self.fn(*args, **kwargs)\n"
    "        self.graph.replay()\n        return self.result\n\n\n"
    "def cudagraph_wrap(fn):\n    return CUDAGraphWrapper(fn)\n")
_ADAPTER = (
    "import torch\nfrom chameleon.inference import transformer\nfrom chameleon.inference.cudagraph import cudagraph_wrap\n\n\n"
    "class ChameleonModelAdapter:\n"
    "    \"\"\"Adapter for Chameleon-style model that handles state, such as cache.\"\"\"\n\n"
    "    def __init__(self, model, max_seq_len):\n        self._model = model\n        self._max_seq_len = max_seq_len\n\n"
    "    def initialize(self, prompt_tokens):\n"
    "        self._cache = transformer.make_cache(args=self._model.args, length=len(prompt_tokens) * self._max_seq_len)\n"
    "        self._forward = cudagraph_wrap(self._model.forward_with_attn_bias)\n\n"
    "    @torch.inference_mode()\n"
    "    def __call__(self, inputs):\n"
    "        return self._forward(token_values=inputs[:, -1], attn_bias=self._bias, cache=self._cache)\n")
_CHAMELEON = (
    "import torch\nfrom chameleon.inference.model_adapter import ChameleonModelAdapter\n\n\n"
    "class ChameleonInferenceModel:\n"
    "    def __init__(self, model):\n        self.adapter = ChameleonModelAdapter(model, max_seq_len=4096)\n\n"
    "    @torch.inference_mode()\n"
    "    def generate(self, prompt_text, max_gen_len=4096):\n"
    "        tokens = self.tokenize(prompt_text)\n        self.adapter.initialize([tokens])\n"
    "        for _ in range(max_gen_len):\n            logits = self.adapter(tokens)\n"
    "            tokens = torch.cat([tokens, logits.argmax(-1)[:, -1:]], dim=1)\n"
    "        return tokens\n")
_EXAMPLE = (
    "from chameleon.inference.chameleon import ChameleonInferenceModel\n\n\n"
    "def main():\n    model = ChameleonInferenceModel(load_model('./data/models/7b/'))\n"
    "    tokens = model.generate(prompt_text='All your base')\n    print(tokens)\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


def _chameleon(adapter_dir: str = "chameleon/inference") -> dict[str, str]:
    return {
        "chameleon/__init__.py": "",
        "chameleon/inference/__init__.py": "",
        "chameleon/inference/transformer.py": _TRANSFORMER,
        "chameleon/inference/cudagraph.py": _CUDAGRAPH,
        f"{adapter_dir}/model_adapter.py": _ADAPTER,
        "chameleon/inference/chameleon.py": _CHAMELEON.replace("chameleon.inference.model_adapter",
                                                              adapter_dir.replace("/", ".") + ".model_adapter"),
        "chameleon/inference/examples/simple.py": _EXAMPLE,
        "README.md": "# Chameleon\n\nStandalone inference code: a fast GPU-based inference implementation.\n\n"
                     "```bash\npython -m chameleon.inference.examples.simple\n```\n",
    }


def test_a_model_adapter_in_an_inference_folder_is_no_fine_tuning_path():
    """Chameleon: ``chameleon/inference/model_adapter.py`` (an adapter in the design-pattern sense) made the project a
    fine-tuning one, so an inference-only release was scored on 52 training checks. A folder of inference code names
    its workload, not an adapter fine-tune. Control: the same file outside an inference folder (``chameleon/tuning/``)
    still reads as fine-tuning code."""
    a = _audit(_chameleon())
    assert not a.project.does_training and a.project.does_inference
    assert _check(a, "A1").status is Status.NA and _check(a, "F1").status is Status.NA
    control = _audit(_chameleon("chameleon/tuning"))
    assert control.project.does_training


def test_a_decode_step_captured_as_a_cuda_graph_by_hand_is_not_eager():
    """Chameleon: J6 said "decode runs as CUDA graphs" (``torch.cuda.graph`` in ``cudagraph.py``), while J5 said
    "generation runs in PyTorch eager" and step zero "decoding in eager PyTorch: ... CPU dispatch per token". A decode
    step captured by hand is not eager: J5 says so, and step zero reads J6's evidence. Control: without the capture,
    both say eager."""
    a = _audit(_chameleon())
    assert _check(a, "J6").status is Status.USED
    j5 = _check(a, "J5")
    assert j5.status is Status.UNUSED and "captured as a CUDA graph" in (j5.detail or "") and "eager" not in (j5.detail or "")
    assert "eager" not in " ".join(a.project.bottleneck_reasons)
    assert any("runs as CUDA graphs (`chameleon/inference/cudagraph.py" in r for r in a.project.bottleneck_reasons)
    eager = _chameleon()
    eager["chameleon/inference/model_adapter.py"] = _ADAPTER.replace(
        "cudagraph_wrap(self._model.forward_with_attn_bias)", "self._model.forward_with_attn_bias")
    eager["chameleon/inference/cudagraph.py"] = "import torch\n"
    b = _audit(eager)
    assert _check(b, "J6").status is Status.UNUSED
    assert "eager" in (_check(b, "J5").detail or "") and any("eager PyTorch" in r for r in b.project.bottleneck_reasons)


def test_xformers_forward_only_attention_is_fused_attention():
    """Chameleon: D1 said "flash-attn is installed but nothing enables it" beside ``fmha.memory_efficient_attention_forward``
    (xformers' forward-only entry, which dispatches to the same fused kernels). Control: a hand-written softmax attention."""
    a = _audit(_chameleon())
    assert _check(a, "D1").status is Status.USED
    plain = _chameleon()
    plain["chameleon/inference/transformer.py"] = _TRANSFORMER.replace(
        "fmha.memory_efficient_attention_forward(xq, cache[0], cache[1], attn_bias)",
        "torch.softmax(xq @ cache[0].transpose(-2, -1), dim=-1) @ cache[1]")
    assert _check(_audit(plain), "D1").status is not Status.USED


# --- dvlab-research/LISA: a copied LLaVA training script read as the project's entry point; DeepSpeed's own loader ---------

_TRAIN_DS = (
    "import argparse\nfrom functools import partial\n\nimport deepspeed\nimport torch\n\n"
    "from model.LISA import LISAForCausalLM\nfrom utils.dataset import HybridDataset, ValDataset, collate_fn\n\n\n"
    "def parse_args(args):\n    parser = argparse.ArgumentParser(description='LISA Model Training')\n"
    "    parser.add_argument('--version', default='liuhaotian/llava-llama-2-13b-chat-lightning-preview')\n"
    "    parser.add_argument('--precision', default='bf16', type=str)\n"
    "    parser.add_argument('--lora_r', default=8, type=int)\n"
    "    parser.add_argument('--workers', default=4, type=int)\n"
    "    parser.add_argument('--batch_size', default=2, type=int)\n"
    "    return parser.parse_args(args)\n\n\n"
    "def main(args):\n    args = parse_args(args)\n"
    "    model = LISAForCausalLM.from_pretrained(args.version, torch_dtype=torch.bfloat16)\n"
    "    train_dataset = HybridDataset(args.dataset_dir)\n"
    "    ds_config = {'train_micro_batch_size_per_gpu': args.batch_size, 'bf16': {'enabled': args.precision == 'bf16'},\n"
    "                 'zero_optimization': {'stage': 2}}\n"
    "    model_engine, optimizer, train_loader, scheduler = deepspeed.initialize(\n"
    "        model=model,\n        model_parameters=model.parameters(),\n        training_data=train_dataset,\n"
    "        collate_fn=partial(collate_fn, tokenizer=tokenizer),\n        config=ds_config,\n    )\n"
    "    val_loader = torch.utils.data.DataLoader(\n        ValDataset(args.val_dataset), batch_size=1, shuffle=False,\n"
    "        num_workers=args.workers, pin_memory=False)\n"
    "    for input_dict in train_loader:\n        output_dict = model_engine(**input_dict)\n"
    "        model_engine.backward(output_dict['loss'])\n        model_engine.step()\n\n\n"
    "if __name__ == '__main__':\n    import sys\n\n    main(sys.argv[1:])\n")
_LLAVA_TRAIN = (
    "from dataclasses import dataclass, field\n\nimport transformers\n\n"
    "from llava.model import LlavaLlamaForCausalLM\nfrom llava.train.llava_trainer import LLaVATrainer\n\n\n"
    "@dataclass\nclass TrainingArguments(transformers.TrainingArguments):\n    lora_enable: bool = False\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = LlavaLlamaForCausalLM.from_pretrained('facebook/opt-125m')\n"
    "    trainer = LLaVATrainer(model=model, args=training_args)\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    train()\n")


def _lisa(copy: str = "model/llava") -> dict[str, str]:
    rel = ".llava" if copy == "model/llava" else "llava"
    return {
        "train_ds.py": _TRAIN_DS,
        "model/LISA.py": f"from {rel}.model.language_model.llava_llama import LlavaLlamaForCausalLM\n\n\n"
                         "class LISAForCausalLM(LlavaLlamaForCausalLM):\n    pass\n",
        "utils/dataset.py": "import torch\n\n\nclass HybridDataset(torch.utils.data.Dataset):\n    pass\n\n\n"
                            "class ValDataset(torch.utils.data.Dataset):\n    pass\n\n\ndef collate_fn(batch, tokenizer=None):\n"
                            "    return batch\n",
        f"{copy}/__init__.py": "from .model import LlavaLlamaForCausalLM\n",
        f"{copy}/model/__init__.py": "from .language_model.llava_llama import LlavaLlamaForCausalLM\n",
        f"{copy}/model/language_model/llava_llama.py": "from transformers import LlamaForCausalLM\n\n\n"
                                                       "class LlavaLlamaForCausalLM(LlamaForCausalLM):\n    pass\n",
        f"{copy}/train/train.py": _LLAVA_TRAIN,
        f"{copy}/train/llava_trainer.py": "from transformers import Trainer\n\n\nclass LLaVATrainer(Trainer):\n    pass\n",
        "README.md": "## Training\n\n```\ndeepspeed --master_port=24999 train_ds.py --version=PATH_TO_LLaVA "
                     "--dataset_dir=./dataset --exp_name=lisa-7b\n```\n",
    }


def test_a_copied_packages_own_training_script_is_not_the_projects_entry_point():
    """LISA: ``model/llava/train/train.py`` (LLaVA's script, copied with the package) became an entry point by its name, so
    B3 said "training runs through the HF Trainer (model/llava/train/train.py:1005)" and G4 read LLaVA's ``lora_enable``.
    It imports ``llava`` as a top-level package, which the repository root does not have: it runs only in LLaVA's own
    checkout. Control: the same package at the root (``llava/``), where that script does run, stays an entry point."""
    a = _audit(_lisa())
    assert a.roles.entry_points == ["train_ds.py"]
    assert a.roles.role("model/llava/train/train.py") == "other" and "copied package" in a.roles.why["model/llava/train/train.py"]
    assert a.roles.role("model/llava/train/llava_trainer.py") == "other"
    assert _check(a, "B3").status is Status.UNUSED
    root = _audit(_lisa("llava"))
    assert "llava/train/train.py" in root.roles.entry_points


def test_the_loader_deepspeed_builds_from_training_data_is_the_training_loader():
    """LISA: ``deepspeed.initialize(..., training_data=train_dataset)`` builds the training loader (``deepspeed_io``:
    pinned, 2 workers per rank), but F1-F3 read the validation loader beside it (``num_workers=args.workers``,
    ``pin_memory=False``): F3 said "training loader without pin_memory". Control: an engine given no dataset, fed by a
    loader of the script's own in the main process."""
    a = _audit(_lisa())
    f1 = _check(a, "F1")
    assert f1.status is Status.PARTIAL and "DeepSpeed's default" in (f1.detail or "")
    at = next(i for i, t in enumerate(_TRAIN_DS.splitlines(), 1) if "deepspeed.initialize(" in t)
    assert [(e.path, e.line) for e in f1.evidence] == [("train_ds.py", at)]
    assert _check(a, "F3").status is Status.USED
    own = _lisa()
    own["train_ds.py"] = _TRAIN_DS.replace("        training_data=train_dataset,\n", "").replace(
        "    for input_dict in train_loader:",
        "    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=2, num_workers=0)\n"
        "    for input_dict in train_loader:")
    b = _audit(own)
    assert _check(b, "F1").status is Status.UNUSED and _check(b, "F3").status is not Status.USED


# --- NExT-GPT/NExT-GPT: the old codebase the README says was moved aside; a self-test's config class ----------------------

_NEXT_TRAIN = (
    "import transformers\n\nfrom nextgpt.model import NextGPTLlamaForCausalLM\n"
    "from nextgpt.model.multimodal_projector.builder import build_input_projector\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    model = NextGPTLlamaForCausalLM.from_pretrained('lmsys/vicuna-7b-v1.5')\n"
    "    model.input_projector = build_input_projector(model.config)\n"
    "    trainer = transformers.Trainer(model=model, args=training_args)\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    train()\n")
_BUILDER = (
    "import torch\nfrom torch import nn\n\n\n"
    "def build_input_projector(config):\n    return nn.Linear(config.mm_hidden_size, config.hidden_size)\n\n\n"
    "if __name__ == '__main__':\n\n    class Config:\n        mm_hidden_size = 1024\n        hidden_size = 768\n\n"
    "    config = Config()\n    input_projector = build_input_projector(config)\n    print(input_projector)\n")
_LEGACY_TRAIN = (
    "import deepspeed\nimport numpy as np\n\n\n"
    "def main(args):\n    embeddings = np.load(args.embed_path)\n"
    "    engine, _, _, _ = deepspeed.initialize(model=agent, config=args.ds_config)\n"
    "    for batch in loader:\n        loss = engine(batch)\n        engine.backward(loss)\n        engine.step()\n\n\n"
    "if __name__ == '__main__':\n    main(parse_args())\n")


def _next_gpt(readme_note: bool = True) -> dict[str, str]:
    note = ("**Noted**: we wrap the former old codebase into the [NExT-GPT-Lagacy](NExT-GPT-Lagacy). Please refer to this "
            "new codebase for all training and tuning procedures.\n\n" if readme_note else "")
    return {
        "README.md": "# NExT-GPT\n\n" + note + "## Training\n\n```\nbash scripts/finetune.sh\n```\n",
        "scripts/finetune.sh": "deepspeed --include localhost:0 train_mem.py --deepspeed ./scripts/zero2.json --bf16 True\n",
        "train_mem.py": "from train import train\n\nif __name__ == '__main__':\n    train()\n",
        "train.py": _NEXT_TRAIN,
        "nextgpt/__init__.py": "",
        "nextgpt/model/__init__.py": "class NextGPTLlamaForCausalLM:\n    pass\n",
        "nextgpt/model/multimodal_projector/__init__.py": "",
        "nextgpt/model/multimodal_projector/builder.py": _BUILDER,
        "NExT-GPT-Lagacy/code/train.py": _LEGACY_TRAIN,
        "NExT-GPT-Lagacy/code/scripts/train.sh": "deepspeed --master_port 28459 train.py --stage 1\n",
    }


def test_a_folder_the_readme_calls_the_former_codebase_is_archived():
    """NExT-GPT: "we wrap the former old codebase into the [NExT-GPT-Lagacy](NExT-GPT-Lagacy)". F10 said "training reads
    pre-tokenized binary data" from that folder's ``np.load`` of caption embeddings. A hyphenated folder name the README
    calls the former code is an archived copy. Control: without the sentence, the folder stays in scope."""
    a = _audit(_next_gpt())
    assert a.roles.role("NExT-GPT-Lagacy/code/train.py") == "archive"
    b = _audit(_next_gpt(readme_note=False))
    assert b.roles.role("NExT-GPT-Lagacy/code/train.py") != "archive"


def test_a_config_class_only_a_modules_self_test_builds_is_no_model_dimension():
    """NExT-GPT: D7 said "visible GEMM dimensions are multiples of 8" citing ``hidden_size = 768`` of a ``class Config``
    declared and built in the projector builder's ``if __name__ == "__main__":`` block, a self-test the run never executes.
    Control: the same class built by the training script is the run's configuration."""
    a = _audit(_next_gpt())
    assert not any(e.path.endswith("builder.py") for e in _check(a, "D7").evidence)
    run = _next_gpt()
    run["nextgpt/model/multimodal_projector/builder.py"] = _BUILDER.replace(
        "if __name__ == '__main__':\n\n    class Config:\n        mm_hidden_size = 1024\n        hidden_size = 768\n\n"
        "    config = Config()\n",
        "class Config:\n    mm_hidden_size = 1024\n    hidden_size = 768\n\n\nconfig = Config()\n\n\nif __name__ == '__main__':\n")
    b = _audit(run)
    assert any(e.path.endswith("builder.py") for e in _check(b, "D7").evidence)


# --- epfLLM/Megatron-LLM: upstream launch scripts of a script the fork removed ---------------------------------------------

_SC21_SRUN = (
    "#!/bin/bash\n\n#SBATCH -t 0:30:00 --exclusive --mem=0 --overcommit --ntasks-per-node=8\n\n\nTHIS_DIR=`pwd`\n"
    "mkdir -p ${THIS_DIR}/logs\n\n\nCMD=\"python -u ${MEGATRON_CODE_DIR}/pretrain_gpt.py ${MEGATRON_PARAMS}\"\n\n\n"
    "srun -l \\\n     --container-image \"nvcr.io#nvidia/pytorch:20.12-py3\" \\\n"
    "     --output=${THIS_DIR}/logs/%x_%j.log sh -c \"${CMD}\"\n")
_SC21_TABLE = (
    "#!/bin/bash\n\nMODEL_SIZE=1T\n\nif [ ${MODEL_SIZE} == \"1T\" ]; then\n    TP=8\n    PP=64\n    MBS=1\n    GBS=3072\n"
    "    NNODES=384\nelse\n    echo \"Invalid configuration\"\n    exit 1\nfi\n\n"
    "export JOB_NAME=results_table_1_model_size_${MODEL_SIZE}\n\n. `pwd`/CONFIG.sh\n\n. `pwd`/SBATCH.sh\n\nexit 0\n")


def _megatron_llm(gpt_script: bool = False) -> dict[str, str]:
    files = {
        "finetune.py": "from megatron.training import pretrain\n\n\nif __name__ == '__main__':\n    pretrain(train_valid_test_datasets_provider, model_provider)\n",
        "pretrain_bert.py": "from megatron.training import pretrain\n\n\nif __name__ == '__main__':\n    pretrain(train_valid_test_datasets_provider, model_provider)\n",
        "megatron/__init__.py": "",
        "megatron/training.py": "def pretrain(provider, model_provider):\n    loss.backward()\n    optimizer.step()\n",
        "examples/finetune.sh": ("#!/bin/bash\nGPUS_PER_NODE=8\nN_NODES=1\nDISTRIBUTED_ARGS=\"--nproc_per_node $GPUS_PER_NODE --nnodes $N_NODES\"\n"
                                 "torchrun $DISTRIBUTED_ARGS finetune.py \\\n       --tensor_model_parallel_size 8 \\\n"
                                 "       --log_interval 1 \\\n       --bf16\n"),
        "examples/pretrain_bert.sh": "#!/bin/bash\npython pretrain_bert.py \\\n       --num_layers 24 \\\n       --log_interval 100\n",
        "examples/pretrain_gpt.sh": "#!/bin/bash\npython pretrain_gpt.py \\\n       --num_layers 24 \\\n       --log_interval 100\n",
        "examples/sc21/SRUN.sh": _SC21_SRUN,
        "examples/sc21/SBATCH.sh": ("#!/bin/bash\n\nsbatch -p ${SLURM_PARTITION} \\\n       --nodes=${NNODES} \\\n"
                                    "       --export=MEGATRON_CODE_DIR,MEGATRON_PARAMS SRUN.sh\n\nexit 0\n"),
        "examples/sc21/run_table_1.sh": _SC21_TABLE,
        "README.md": "## Fine-tune\n\n```\nbash examples/finetune.sh\n```\n",
    }
    if gpt_script:
        files["pretrain_gpt.py"] = files["pretrain_bert.py"]
    return files


def test_launch_scripts_of_a_removed_script_are_stale():
    """Megatron-LLM kept upstream's ``examples/pretrain_gpt.sh`` and ``examples/sc21/`` (``NNODES=384``, a job ending in
    ``python -u ${MEGATRON_CODE_DIR}/pretrain_gpt.py``) after removing ``pretrain_gpt.py`` from its root, where
    ``pretrain_bert.py`` and ``finetune.py`` still run: the overview said "multi-node" with 384 nodes. A launch of a
    script that is nowhere in the repository, in a folder holding scripts other launches run, is stale, and so are the
    scripts beside it that launch nothing themselves. Controls: with ``pretrain_gpt.py`` at the root, or a script renamed
    from it, they are recipes."""
    a = _audit(_megatron_llm())
    for p in ("examples/pretrain_gpt.sh", "examples/sc21/SRUN.sh", "examples/sc21/run_table_1.sh", "examples/sc21/SBATCH.sh"):
        assert a.roles.role(p) == "other", p
    assert a.roles.role("examples/finetune.sh") == "launch" and not a.project.multi_node
    b = _audit(_megatron_llm(gpt_script=True))
    assert b.roles.role("examples/pretrain_gpt.sh") == "launch" and b.roles.role("examples/sc21/run_table_1.sh") != "other"
    # a renamed script keeps its recipe (fms-fsdp's documented ``scripts/train.sh`` runs ``main_training.py``, which the
    # project split into ``main_training_llama.py`` and ``main_training_mamba.py``)
    renamed = _megatron_llm()
    renamed["pretrain_gpt_llama.py"] = renamed["pretrain_bert.py"]
    assert _audit(renamed).roles.role("examples/pretrain_gpt.sh") == "launch"


# --- artidoro/qlora: a naive layer split set with setattr -----------------------------------------------------------------

_QLORA = (
    "import torch\nimport transformers\nfrom transformers import AutoModelForCausalLM, Seq2SeqTrainer\n\n\n"
    "def get_accelerate_model(args):\n    n_gpus = torch.cuda.device_count()\n"
    "    max_memory = {i: f'{args.max_memory_MB}MB' for i in range(n_gpus)}\n"
    "    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, device_map='auto', max_memory=max_memory,\n"
    "                                                 load_in_4bit=True)\n"
    "    setattr(model, 'model_parallel', True)\n    setattr(model, 'is_parallelizable', True)\n    return model\n\n\n"
    "def train():\n    hfparser = transformers.HfArgumentParser((transformers.Seq2SeqTrainingArguments,))\n"
    "    (training_args,) = hfparser.parse_args_into_dataclasses()\n    model = get_accelerate_model(training_args)\n"
    "    trainer = Seq2SeqTrainer(model=model, args=training_args)\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    train()\n")


def test_a_layer_split_set_with_setattr_is_no_dataparallel_fallback():
    """qlora: A1 said "with several visible GPUs the HF Trainer would fall back to nn.DataParallel", but ``device_map='auto'``
    spreads the layers over the GPUs and ``setattr(model, 'model_parallel', True)`` makes the Trainer keep one process
    without DataParallel: the GPUs take turns. Control: without those flags and with the model on one device, the
    DataParallel fallback is what happens (a model spread by ``device_map='auto'`` alone is model parallel to the Trainer
    too, which reads its ``hf_device_map``: round 67's baize test)."""
    files = {"qlora.py": _QLORA, "scripts/finetune.sh": "python qlora.py \\\n    --model_name_or_path huggyllama/llama-7b \\\n"
             "    --bf16\n"}
    a1 = _check(_audit(files), "A1")
    assert "layers are split across them, model.model_parallel = True at qlora.py:" in (a1.detail or "")
    assert "DataParallel" not in (a1.detail or "")
    plain = {**files, "qlora.py": _QLORA.replace("    setattr(model, 'model_parallel', True)\n    setattr(model, 'is_parallelizable', True)\n", "")
             .replace("device_map='auto'", "device_map={'': 0}")}
    assert "fall back to nn.DataParallel" in (_check(_audit(plain), "A1").detail or "")
