"""Round 40 (issue #9): public repositories read claim by claim. Each test is one false claim of those reports, made from
the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status
from reports.markdown import render_markdown


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


# --- Meta's llama3: model-parallel generation behind torchrun, no training step anywhere ---------------------------------

_L3_README = ("# Llama 3\n\n```bash\ntorchrun --nproc_per_node 1 example_text_completion.py \\\n    --ckpt_dir Meta-Llama-3-8B/ \\\n"
              "    --tokenizer_path Meta-Llama-3-8B/tokenizer.model \\\n    --max_seq_len 128 --max_batch_size 4\n```\n")
_L3_EXAMPLE = ("import fire\nfrom llama import Llama\n\n\ndef main(ckpt_dir, tokenizer_path, temperature=0.6, top_p=0.9, max_seq_len=128,\n"
               "         max_batch_size=4):\n"
               "    generator = Llama.build(ckpt_dir=ckpt_dir, tokenizer_path=tokenizer_path, max_seq_len=max_seq_len,\n"
               "                            max_batch_size=max_batch_size)\n"
               "    results = generator.text_completion(['I believe'], max_gen_len=64, temperature=temperature, top_p=top_p)\n\n\n"
               "if __name__ == '__main__':\n    fire.Fire(main)\n")
_L3_GENERATION = (
    "import os\n\nimport torch\nfrom fairscale.nn.model_parallel.initialize import initialize_model_parallel, model_parallel_is_initialized\n\n"
    "from llama.model import ModelArgs, Transformer\n\n\nclass Llama:\n    @staticmethod\n"
    "    def build(ckpt_dir, tokenizer_path, max_seq_len, max_batch_size, model_parallel_size=None):\n"
    "        if not model_parallel_is_initialized():\n            if model_parallel_size is None:\n"
    "                model_parallel_size = int(os.environ.get('WORLD_SIZE', 1))\n"
    "            initialize_model_parallel(model_parallel_size)\n"
    "        model = Transformer(ModelArgs(max_seq_len=max_seq_len, max_batch_size=max_batch_size))\n"
    "        return Llama(model)\n\n"
    "    @torch.inference_mode()\n    def generate(self, prompt_tokens, max_gen_len, temperature=0.6, top_p=0.9, logprobs=False):\n"
    "        tokens = torch.full((len(prompt_tokens), 256), 0, dtype=torch.long, device='cuda')\n        prev_pos = 0\n"
    "        for cur_pos in range(1, 256):\n            logits = self.model.forward(tokens[:, prev_pos:cur_pos], prev_pos)\n"
    "            probs = torch.softmax(logits[:, -1] / temperature, dim=-1)\n            next_token = sample_top_p(probs, top_p)\n"
    "            tokens[:, cur_pos] = next_token\n            prev_pos = cur_pos\n        return tokens\n\n"
    "    def text_completion(self, prompts, temperature=0.6, top_p=0.9, max_gen_len=None):\n"
    "        prompt_tokens = [self.tokenizer.encode(x, bos=True, eos=False) for x in prompts]\n"
    "        generation_tokens = self.generate(\n            prompt_tokens=prompt_tokens,\n            max_gen_len=max_gen_len,\n"
    "            temperature=temperature,\n            top_p=top_p,\n        )\n        return generation_tokens\n"
)
_L3_MODEL = (
    "import torch\nfrom fairscale.nn.model_parallel.layers import ColumnParallelLinear, RowParallelLinear, VocabParallelEmbedding\n"
    "from torch import nn\n\n\nclass Attention(nn.Module):\n    def __init__(self, args):\n        super().__init__()\n"
    "        self.wq = ColumnParallelLinear(args.dim, args.n_heads * 128, bias=False, gather_output=False)\n"
    "        self.wo = RowParallelLinear(args.n_heads * 128, args.dim, bias=False, input_is_parallel=True)\n"
    "        self.cache_k = torch.zeros((args.max_batch_size, args.max_seq_len, 8, 128)).cuda()\n"
)


def _llama3(**extra: str) -> dict[str, str]:
    return {"README.md": _L3_README, "example_text_completion.py": _L3_EXAMPLE, "llama/generation.py": _L3_GENERATION,
            "llama/model.py": _L3_MODEL, "llama/__init__.py": "from .generation import Llama\n",
            "requirements.txt": "torch\nfairscale\nfire\ntiktoken\n", **extra}


def test_an_inference_only_project_has_its_training_checks_out_of_the_score():
    audit = _audit(_llama3())
    assert audit.project.does_inference and not audit.project.does_training
    for cid in ("A1", "A2", "B1", "C1", "C5", "F1", "F6", "G1", "I3"):
        r = _check(audit, cid)
        assert r.status is Status.NA and "only runs inference" in (r.detail or ""), (cid, r.status, r.detail)
    # what speeds up generation is still judged
    for cid in ("A4", "D1", "D2", "J1", "J5"):
        assert _check(audit, cid).status is not Status.NA, cid
    md = render_markdown(audit)
    assert "Workload: inference only" in md and "0.5 / 50" not in md
    zh = render_markdown(audit, lang="zh")
    assert "工作负载：仅推理" in zh and "项目仅做推理（任何路径上都没有训练步）" in zh
    # control: the same repository with a fine-tuning script is judged on training practice
    finetune = ("import torch\nfrom torch.utils.data import DataLoader\n\nfrom llama.model import ModelArgs, Transformer\n\n\n"
                "def main():\n    model = Transformer(ModelArgs())\n    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)\n"
                "    for batch in DataLoader(dataset, batch_size=4):\n        loss = model(batch).loss\n        loss.backward()\n"
                "        optimizer.step()\n        optimizer.zero_grad()\n\n\nif __name__ == '__main__':\n    main()\n")
    readme = _L3_README + "\n## Fine-tuning\n\n```bash\ntorchrun --nproc_per_node 8 finetune.py\n```\n"
    audit = _audit(_llama3(**{"finetune.py": finetune, "README.md": readme}))
    assert audit.project.does_training
    assert _check(audit, "C1").status is not Status.NA and _check(audit, "F1").status is not Status.NA
    assert "Workload:" not in render_markdown(audit)


def test_the_projects_own_generate_with_a_top_p_keyword_is_its_decode_loop_with_a_kv_cache():
    # llama3: ``self.generate(..., top_p=top_p)`` beside ``def generate`` in a file without Hugging Face, and the loop hands
    # the model only the new tokens ``tokens[:, prev_pos:cur_pos]``: its own loop, keeping a KV cache
    audit = _audit(_llama3())
    j1, j5 = _check(audit, "J1"), _check(audit, "J5")
    assert j1.status is Status.PARTIAL and "own decode loop keeps a KV cache" in j1.detail, (j1.status, j1.detail)
    assert "project's own `generate` loop" in j5.detail and "HF" not in j5.detail, j5.detail
    # control: an HF model's ``generate(..., top_p=...)`` in a script that imports transformers is HF's
    hf = ("from transformers import AutoModelForCausalLM\n\nmodel = AutoModelForCausalLM.from_pretrained('gpt2')\n"
          "out = model.generate(input_ids, max_new_tokens=64, top_p=0.9, do_sample=True)\n")
    audit = _audit({"serve.py": hf})
    assert "HF dynamic" in _check(audit, "J1").detail and "HF `generate`" in _check(audit, "J5").detail


def test_fairscale_model_parallel_layers_are_tensor_parallelism():
    a4 = _check(_audit(_llama3()), "A4")
    assert a4.status is Status.USED and "fairscale" in a4.detail, (a4.status, a4.detail)
    assert any(e.path == "llama/model.py" for e in a4.evidence)
    # control: the same layers in a model-parallel group of one: generation on one GPU, no layer split (round 44: out of
    # the score of an inference-only project, see checks.rules.e_comm.one_gpu_generation)
    one = _L3_GENERATION.replace("initialize_model_parallel(model_parallel_size)", "initialize_model_parallel(1)")
    a4 = _check(_audit(_llama3(**{"llama/generation.py": one})), "A4")
    assert a4.status is Status.NA and "no generation spans GPUs" in a4.detail, (a4.status, a4.detail)


# --- QwenLM/Qwen2.5: LLaMA-Factory recipes whose launch lives only in the docs -----------------------------------------------

_Q25_FULL = ("model_name_or_path: Qwen/Qwen2-7B-Instruct\n\nstage: sft\ndo_train: true\nfinetuning_type: full\n"
             "deepspeed: PATH-TO-DS-CONFIG\n\ndataset: identity\ntemplate: qwen\ncutoff_len: 1024\n\n"
             "per_device_train_batch_size: 1\ngradient_accumulation_steps: 2\nlearning_rate: 1.0e-5\nbf16: true\n")
_Q25_DOC = ("# 使用 LLaMA-Factory 微调 Qwen2\n\n### 全参微调\n\n```bash\nFORCE_TORCHRUN=1 llamafactory-cli train qwen2-7b-full-sft.yaml\n```\n")


def test_a_documented_llamafactory_cli_train_is_data_parallel_and_its_communication_is_not_judged():
    files = {"examples/llama-factory/qwen2-7b-full-sft.yaml": _Q25_FULL, "examples/llama-factory/finetune-zh.md": _Q25_DOC}
    audit = _audit(files)
    a1, e2, e3 = (_check(audit, c) for c in ("A1", "E2", "E3"))
    assert a1.status is Status.USED and "llamafactory-cli train" in a1.detail, (a1.status, a1.detail)
    for r in (e2, e3):
        assert r.status is Status.NA and "not judged" in r.detail and "finetune-zh.md:6" in r.detail, (r.id, r.status, r.detail)
        assert "no distributed training found" not in r.detail
    # control: one visible GPU keeps LLaMA-Factory's launcher in one process
    files["examples/llama-factory/finetune-zh.md"] = _Q25_DOC.replace("FORCE_TORCHRUN=1 ", "CUDA_VISIBLE_DEVICES=0 ")
    audit = _audit(files)
    assert _check(audit, "A1").status is Status.UNUSED
    assert "no distributed training found" in _check(audit, "E2").detail


# --- PKU-Alignment/align-anything: the base trainer saves a diffusers LoRA in one branch -----------------------------------

_AA_BASE = (
    "import deepspeed\nimport torch\nfrom diffusers import StableDiffusionPipeline\nfrom diffusers.loaders import LoraLoaderMixin\n\n\n"
    "class SupervisedTrainerBase:\n    def train(self):\n        self.model.train()\n        for epoch in range(self.cfgs.train_cfgs.epochs):\n"
    "            for batch in self.train_dataloader:\n                info = self.train_step(batch)\n"
    "                torch.cuda.empty_cache()\n                self.global_step += 1\n\n"
    "    def save(self):\n        if self.cfgs.model_cfgs.save_lora:\n"
    "            pipeline = StableDiffusionPipeline.from_pretrained(self.cfgs.model_cfgs.model_name_or_path)\n"
    "            LoraLoaderMixin.save_lora_weights(self.cfgs.logger_cfgs.output_dir, unet_lora_layers=self.lora_layers)\n"
)
_AA_INIT = "from align_anything.trainers.base.supervised_trainer import SupervisedTrainerBase\n"
_AA_SFT = (
    "import deepspeed\nfrom transformers import AutoModelForCausalLM\n\nfrom align_anything.trainers.base import SupervisedTrainerBase\n\n\n"
    "class SupervisedTrainer(SupervisedTrainerBase):\n    def train_step(self, batch):\n        loss = self.model(**batch).loss\n"
    "        self.model.backward(loss)\n        self.model.step()\n        return {'train/loss': loss.item()}\n\n\n"
    "def main():\n    trainer = SupervisedTrainer()\n    trainer.train()\n\n\nif __name__ == '__main__':\n    main()\n"
)
_AA_DS = '{\n  "train_micro_batch_size_per_gpu": 16,\n  "zero_optimization": {\n    "stage": 3,\n    "contiguous_gradients": true\n  }\n}\n'


def _align_anything(**extra: str) -> dict[str, str]:
    return {"align_anything/trainers/base/supervised_trainer.py": _AA_BASE, "align_anything/trainers/base/__init__.py": _AA_INIT,
            "align_anything/trainers/text_to_text/sft.py": _AA_SFT, "align_anything/configs/deepspeed/ds_z3_config.json": _AA_DS,
            "scripts/sft.sh": "deepspeed --module align_anything.trainers.text_to_text.sft --model_name_or_path Qwen/Qwen2.5-7B\n",
            **extra}


def test_a_base_trainer_imported_through_its_package_is_training_code_though_it_imports_diffusers():
    audit = _audit(_align_anything())
    assert audit.roles.by_path["align_anything/trainers/base/supervised_trainer.py"] == "training", audit.roles.why
    # control: a diffusion trainer no text trainer imports stays a side project
    sft = _AA_SFT.replace("from align_anything.trainers.base import SupervisedTrainerBase\n", "").replace(
        "(SupervisedTrainerBase)", "")
    audit = _audit(_align_anything(**{"align_anything/trainers/text_to_text/sft.py": sft}))
    assert audit.roles.by_path["align_anything/trainers/base/supervised_trainer.py"] != "training"


def test_empty_cache_every_step_beside_framework_buffers_is_partial():
    c6 = _check(_audit(_align_anything()), "C6")
    assert c6.status is Status.PARTIAL and "empty_cache() runs in the training loop" in c6.detail, (c6.status, c6.detail)
    assert any(e.line == 13 for e in c6.findings)
    # control: the same buffers without the per-step call
    base = _AA_BASE.replace("                torch.cuda.empty_cache()\n", "")
    c6 = _check(_audit(_align_anything(**{"align_anything/trainers/base/supervised_trainer.py": base})), "C6")
    assert c6.status is Status.USED, (c6.status, c6.detail)


# --- deepseek-ai/DeepSeek-V3: its inference code, an MoE of 671B run over two nodes ----------------------------------------

_DS3_CONFIG = ('{\n    "vocab_size": 129280,\n    "dim": 7168,\n    "inter_dim": 18432,\n    "moe_inter_dim": 2048,\n    "n_layers": 61,\n'
               '    "n_dense_layers": 3,\n    "n_heads": 128,\n    "n_routed_experts": 256,\n    "n_shared_experts": 1,\n'
               '    "n_activated_experts": 8,\n    "q_lora_rank": 1536,\n    "kv_lora_rank": 512,\n    "dtype": "fp8"\n}\n')
_DS3_MODEL = (
    "import torch\nimport torch.distributed as dist\nfrom torch import nn\n\nworld_size = 1\n\n\nclass Linear(nn.Module):\n"
    "    def __init__(self, in_features, out_features, bias=False, dtype=None):\n        super().__init__()\n"
    "        self.weight = nn.Parameter(torch.empty(out_features, in_features, dtype=dtype))\n\n\n"
    "class ColumnParallelLinear(Linear):\n    def __init__(self, in_features, out_features, bias=False, dtype=None):\n"
    "        self.part_out_features = out_features // world_size\n        super().__init__(in_features, self.part_out_features, bias, dtype)\n\n\n"
    "class RowParallelLinear(Linear):\n    def __init__(self, in_features, out_features, bias=False, dtype=None):\n"
    "        self.part_in_features = in_features // world_size\n        super().__init__(self.part_in_features, out_features, bias, dtype)\n\n"
    "    def forward(self, x):\n        y = torch.nn.functional.linear(x, self.weight)\n        if world_size > 1:\n"
    "            dist.all_reduce(y)\n        return y\n\n\n"
    "class MLP(nn.Module):\n    def __init__(self, dim, inter_dim):\n        super().__init__()\n"
    "        self.w1 = ColumnParallelLinear(dim, inter_dim)\n        self.w2 = RowParallelLinear(inter_dim, dim)\n"
)
_DS3_GENERATE = (
    "import json\nimport os\n\nimport torch\nimport torch.distributed as dist\n\nfrom model import Transformer, ModelArgs\n\n\n"
    "@torch.inference_mode()\ndef generate(model, prompt_tokens, max_new_tokens, eos_id, temperature=1.0):\n"
    "    tokens = torch.full((len(prompt_tokens), 4096), -1, dtype=torch.long, device='cuda')\n    prev_pos = 0\n"
    "    for cur_pos in range(1, 4096):\n        logits = model.forward(tokens[:, prev_pos:cur_pos], prev_pos)\n"
    "        prev_pos = cur_pos\n    return tokens\n\n\n"
    "def main(ckpt_path, config):\n    world_size = int(os.getenv('WORLD_SIZE', '1'))\n    if world_size > 1:\n"
    "        dist.init_process_group('nccl')\n    with open(config) as f:\n        args = ModelArgs(**json.load(f))\n"
    "    model = Transformer(args)\n    completion_tokens = generate(model, prompt_tokens, 200, -1, 0.7)\n\n\n"
    "if __name__ == '__main__':\n    main('ckpt', 'configs/config_671B.json')\n"
)
_DS3_README = ("# DeepSeek-V3\n\n#### Run\n\n```shell\ntorchrun --nnodes 2 --nproc-per-node 8 --node-rank $RANK --master-addr $ADDR "
               "generate.py --ckpt-path /path/to/DeepSeek-V3-Demo --config configs/config_671B.json --interactive\n```\n")


def _deepseek_v3(**extra: str) -> dict[str, str]:
    return {"inference/configs/config_671B.json": _DS3_CONFIG, "inference/model.py": _DS3_MODEL,
            "inference/generate.py": _DS3_GENERATE, "README.md": _DS3_README, **extra}


def test_a_deepseek_moe_config_counts_its_dense_layers_shared_experts_and_expert_width():
    p = _audit(_deepseek_v3()).project
    assert p.params_billions is not None and 640 <= p.params_billions <= 700, (p.params_billions, p.estimated_params)
    # control: the same config without the MoE expert width is far larger (every expert as wide as the dense FFN)
    wide = _DS3_CONFIG.replace('    "moe_inter_dim": 2048,\n', "")
    p = _audit(_deepseek_v3(**{"inference/configs/config_671B.json": wide})).project
    assert p.params_billions is not None and p.params_billions > 5000, p.params_billions


def test_an_inference_only_moe_reads_its_own_parallel_layers_fp8_weights_and_multi_node_inference():
    audit = _audit(_deepseek_v3())
    assert not audit.project.does_training
    a4, j4 = _check(audit, "A4"), _check(audit, "J4")
    assert a4.status is Status.USED and "own `ColumnParallelLinear`" in a4.detail, (a4.status, a4.detail)
    assert j4.status is Status.USED and "fp8" in j4.detail, (j4.status, j4.detail)
    assert "multi-node inference documented" in render_markdown(audit)
    # controls: layers without a collective are no tensor parallelism; a bf16 config is no quantization
    audit = _audit(_deepseek_v3(**{"inference/model.py": _DS3_MODEL.replace("            dist.all_reduce(y)\n", "            pass\n"),
                                   "inference/configs/config_671B.json": _DS3_CONFIG.replace('"fp8"', '"bf16"')}))
    assert _check(audit, "A4").status is Status.UNUSED and _check(audit, "J4").status is Status.UNUSED


# --- EleutherAI/gpt-neox: a vLLM rollout server behind conda run, ZeRO stage 0, Megatron-style sample index -------------------

_NEOX_TRAIN = ("from megatron.neox_arguments import NeoXArgs\nfrom megatron.training import pretrain\n\n\n"
               "def main():\n    neox_args = NeoXArgs.consume_neox_args()\n    pretrain(neox_args=neox_args)\n\n\n"
               "if __name__ == '__main__':\n    main()\n")
_NEOX_CFG = ('{\n  "pipe_parallel_size": 1,\n  "model_parallel_size": 1,\n  "num_layers": 12,\n  "hidden_size": 768,\n'
             '  "num_attention_heads": 12,\n  "seq_length": 2048,\n  "zero_optimization": {\n    "stage": 0,\n'
             '    "overlap_comm": true\n  },\n  "train_micro_batch_size_per_gpu": 4\n}\n')
_NEOX_ONLINE = (
    "# Launch vllm\nCUDA_VISIBLE_DEVICES=0,1,2,3 conda run --no-capture-output -n vllm python -m vllm.entrypoints.openai.api_server "
    "--model=meta-llama/Meta-Llama-3-8B-Instruct --tensor-parallel-size=4 --enforce-eager --port 8000 &\n\n"
    "# Launch training\nconda run --no-capture-output -n neox python deepy.py train.py configs/125M.yml\n")


def test_a_vllm_server_behind_conda_run_is_no_training_tensor_parallelism():
    files = {"train.py": _NEOX_TRAIN, "configs/125M.yml": _NEOX_CFG, "post-training/online_example.sh": _NEOX_ONLINE}
    a4 = _check(_audit(files), "A4")
    assert a4.status is Status.UNUSED and a4.values.get("tp_size") == 1, (a4.status, a4.detail)
    # control: the same server started directly by a training script's own command line is not hidden either way; the
    # training config's size still counts
    files["configs/125M.yml"] = _NEOX_CFG.replace('"model_parallel_size": 1', '"model_parallel_size": 2')
    a4 = _check(_audit(files), "A4")
    assert a4.status is Status.USED and a4.values.get("tp_size") == 2, (a4.status, a4.detail)


def test_overlap_comm_beside_zero_stage_0_is_not_overlap():
    files = {"train.py": _NEOX_TRAIN + "\nimport deepspeed\nengine, *_ = deepspeed.initialize(model=model, config=cfg)\n",
             "configs/125M.yml": _NEOX_CFG, "run.sh": "deepspeed train.py configs/125M.yml\n"}
    e2 = _check(_audit(files), "E2")
    assert e2.status is Status.PARTIAL and "stage 0" in e2.detail, (e2.status, e2.detail)
    files["configs/125M.yml"] = _NEOX_CFG.replace('"stage": 0', '"stage": 2')
    assert _check(_audit(files), "E2").status is Status.USED


_NEOX_DATASET = (
    "import numpy as np\nimport torch\n\n\nclass GPT2Dataset(torch.utils.data.Dataset):\n"
    "    def __init__(self, name, data_prefix, documents, indexed_dataset, num_samples, seq_length, seed):\n"
    "        self.indexed_dataset = indexed_dataset\n"
    "        self.doc_idx, self.sample_idx, self.shuffle_idx = _build_index_mappings(\n"
    "            name, data_prefix, documents, self.indexed_dataset.sizes, num_samples, seq_length, seed)\n\n"
    "    def __getitem__(self, idx):\n        doc_index_f = self.sample_idx[idx][0]\n"
    "        return self.indexed_dataset.get(self.doc_idx[doc_index_f])\n\n\n"
    "def _build_index_mappings(name, data_prefix, documents, sizes, num_samples, seq_length, seed):\n"
    "    doc_idx = np.arange(len(documents))\n    sample_idx = np.zeros((num_samples + 1, 2))\n"
    "    return doc_idx, sample_idx, np.arange(num_samples)\n"
)
_NEOX_DATA_UTILS = ("from megatron.data.gpt2_dataset import GPT2Dataset\n\n\n"
                    "def build_the_dataset(data_prefix, name, num_samples, seq_length, seed, indexed_dataset, documents):\n"
                    "    dataset = GPT2Dataset(name, data_prefix, documents, indexed_dataset, num_samples, seq_length, seed)\n"
                    "    return dataset\n")


def test_a_dataset_built_on_megatrons_sample_index_packs_documents():
    files = {"train.py": _NEOX_TRAIN + "\nfrom megatron.data.data_utils import build_the_dataset\n",
             "megatron/data/gpt2_dataset.py": _NEOX_DATASET, "megatron/data/data_utils.py": _NEOX_DATA_UTILS,
             "megatron/__init__.py": "", "megatron/data/__init__.py": ""}
    f7 = _check(_audit(files), "F7")
    assert f7.status is Status.USED and any(e.path == "megatron/data/data_utils.py" for e in f7.evidence), (f7.status, f7.detail)
    # control: a per-document dataset without the sample index packs nothing
    plain = _NEOX_DATASET.replace("_build_index_mappings", "_build_doc_list")
    files["megatron/data/gpt2_dataset.py"] = plain
    assert _check(_audit(files), "F7").status is not Status.USED


def test_own_decode_methods_are_cited_in_the_same_order_whatever_the_hash_seed():
    # FlagAI's J1 evidence changed order from one process to the next: the project's own decode method names were a set
    import json
    import subprocess
    import sys

    files = {"gen/engine.py": (
        "import torch\n\n\nclass Engine:\n    def generate_batch(self, ids, past=None):\n        return self.model(ids, past_key_values=past)\n\n"
        "    def generate_stream(self, ids, cache=None):\n        return self.model(ids, cache=cache)\n\n"
        "    def beam_generate(self, ids, cache=None):\n        return self.model(ids, cache=cache)\n"),
        "serve.py": ("from gen.engine import Engine\n\nengine = Engine()\nfor p in prompts:\n    a = engine.beam_generate(p)\n"
                     "    b = engine.generate_stream(p)\n    c = engine.generate_batch(p)\n")}
    code = ("import json, sys\nfrom checks.engine import audit_files\nfiles = json.loads(sys.argv[1])\n"
            "a = audit_files((k, v.encode()) for k, v in files.items())\n"
            "r = next(r for r in a.results if r.id == 'J1')\nprint([(e.path, e.line) for e in r.evidence])\n")
    outs = {subprocess.run([sys.executable, "-c", code, json.dumps(files)], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout for seed in (1, 2, 3, 4)}
    assert len(outs) == 1, outs


# --- mit-han-lab/streaming-llm: a checkpoint loaded for a hand-written decode loop with attention-sink eviction -------------

_SL_RUN = (
    "import torch\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\nfrom streaming_llm.enable_streaming_llm import enable_streaming_llm\n\n\n"
    "@torch.no_grad()\ndef greedy_generate(model, tokenizer, input_ids, past_key_values, max_gen_len):\n"
    "    outputs = model(input_ids=input_ids, past_key_values=past_key_values, use_cache=True)\n"
    "    past_key_values = outputs.past_key_values\n    pred_token_idx = outputs.logits[:, -1, :].argmax(dim=-1).unsqueeze(1)\n"
    "    for _ in range(max_gen_len - 1):\n"
    "        outputs = model(input_ids=pred_token_idx, past_key_values=past_key_values, use_cache=True)\n"
    "        past_key_values = outputs.past_key_values\n        pred_token_idx = outputs.logits[:, -1, :].argmax(dim=-1).unsqueeze(1)\n"
    "    return past_key_values\n\n\n"
    "@torch.no_grad()\ndef streaming_inference(model, tokenizer, prompts, kv_cache=None, max_gen_len=1000):\n"
    "    past_key_values = None\n    for prompt in prompts:\n        input_ids = tokenizer(prompt, return_tensors='pt').input_ids\n"
    "        if kv_cache is not None:\n            space_needed = input_ids.shape[1] + max_gen_len\n"
    "            past_key_values = kv_cache.evict_for_space(past_key_values, space_needed)\n"
    "        past_key_values = greedy_generate(model, tokenizer, input_ids, past_key_values, max_gen_len=max_gen_len)\n\n\n"
    "def main(args):\n    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.float16)\n"
    "    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)\n"
    "    kv_cache = enable_streaming_llm(model, start_size=4, recent_size=2000)\n"
    "    streaming_inference(model, tokenizer, ['hello'], kv_cache)\n\n\n"
    "if __name__ == '__main__':\n    main(parse_args())\n"
)
_SL_README = "# StreamingLLM\n\n```bash\nCUDA_VISIBLE_DEVICES=0 python examples/run_streaming_llama.py --enable_streaming\n```\n"


def _streaming(**extra: str) -> dict[str, str]:
    return {"examples/run_streaming_llama.py": _SL_RUN, "README.md": _SL_README,
            "streaming_llm/enable_streaming_llm.py": "def enable_streaming_llm(model, start_size, recent_size):\n    return None\n",
            **extra}


def test_a_checkpoint_loaded_for_a_hand_written_decode_loop_is_inference_not_fine_tuning():
    audit = _audit(_streaming())
    p = audit.project
    assert p.does_inference and not p.does_training, (p.does_inference, p.does_training)
    assert any("run_streaming_llama.py:" in r for r in p.bottleneck_reasons), p.bottleneck_reasons
    j1 = _check(audit, "J1")
    assert j1.status is Status.USED and "eviction" in j1.detail, (j1.status, j1.detail)
    # ... unless Hugging Face ``generate`` paths with the default cache stand beside it (LongLoRA's inference.py next to its
    # StreamingLLM demo)
    hf = ("from transformers import AutoModelForCausalLM\n\nmodel = AutoModelForCausalLM.from_pretrained('m')\n"
          "out = model.generate(input_ids, max_new_tokens=64, do_sample=False)\n")
    assert _check(_audit(_streaming(**{"inference.py": hf})), "J1").status is Status.PARTIAL
    # control: the same loader beside a fine-tuning loop trains
    tune = ("import torch\nfrom transformers import AutoModelForCausalLM\n\nmodel = AutoModelForCausalLM.from_pretrained('m')\n"
            "for batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n    optimizer.step()\n")
    readme = _SL_README + "\n```bash\npython examples/finetune.py\n```\n"
    assert _audit(_streaming(**{"examples/finetune.py": tune, "README.md": readme})).project.does_training


def test_the_audited_codes_syntax_warnings_are_not_printed():
    # LLaMA-Adapter vendors a tree-sitter grammar example whose ``0x_for`` literals made the scan print SyntaxWarnings
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _audit({"train.py": "import torch\n\nif step is 1:\n    print('first')\nloss.backward()\n", "ex.py": "x = '\\d'\n"})
    assert not [w for w in caught if issubclass(w.category, (SyntaxWarning, DeprecationWarning))], [str(w.message) for w in caught]


def test_a_record_of_a_json_array_is_data_not_a_setting():
    # LLaMA-Adapter's Gorilla: ``data/apizoo/*.json`` describe APIs, one record each; an ``"api_arguments": {"streaming": true}``
    # there is no streaming dataset
    train = ("from datasets import load_dataset\nfrom transformers import Trainer\n\nds = load_dataset('json', data_files='train.json')\n"
             "trainer = Trainer(model=model, train_dataset=ds)\ntrainer.train()\n")
    api = '[\n  {\n    "api_name": "GPT4All Python API",\n    "api_arguments": {\n      "verbose": true,\n      "streaming": true\n    }\n  }\n]\n'
    f9 = _check(_audit({"train.py": train, "data/apizoo/gpt4all.json": api}), "F9")
    assert f9.status is Status.UNUSED, (f9.status, f9.detail)
    # control: the same key in a config object is a setting
    f9 = _check(_audit({"train.py": train, "configs/sft.json": '{\n  "streaming": true,\n  "max_steps": 1000\n}\n'}), "F9")
    assert f9.status is Status.USED, (f9.status, f9.detail)


def test_a_clip_text_towers_context_length_is_not_the_llms_sequence_length():
    # LLaVA-NeXT ships 26 EVA-CLIP model configs (``text_cfg.context_length: 77``) beside its launches' ``--model_max_length``
    clip = '{\n  "embed_dim": 1024,\n  "vision_cfg": {\n    "image_size": 224,\n    "layers": 24\n  },\n  "text_cfg": {\n    "context_length": 77,\n    "vocab_size": 49408\n  }\n}\n'
    files = {f"llava/model/multimodal_encoder/eva_clip/model_configs/EVA-{i}.json": clip for i in range(5)}
    launch = ("deepspeed llava/train/train_mem.py \\\n    --model_name_or_path Qwen/Qwen2-7B-Instruct \\\n    --model_max_length 32768 \\\n"
              "    --bf16 True\n")
    files.update({"scripts/train/finetune_ov.sh": launch, "scripts/train/finetune_si.sh": launch,
                  "llava/train/train_mem.py": "from transformers import Trainer\n\ntrainer = Trainer(model=model)\ntrainer.train()\n"})
    assert _audit(files).project.max_seq_len == 32768
    # control: a project that trains CLIP itself has no other length: its text tower's is the run's
    clip_only = {k: v for k, v in files.items() if k.endswith(".json")}
    clip_only["src/training/main.py"] = "import torch\n\nfor batch in loader:\n    loss = model(batch)\n    loss.backward()\n    optimizer.step()\n"
    assert _audit(clip_only).project.max_seq_len == 77


# --- state-spaces/mamba: a layer library whose forward calls its own decode step, and a loader of released weights ----------

_MAMBA_LAYER = (
    "import torch\nfrom torch import nn\n\n\nclass Mamba(nn.Module):\n    def forward(self, hidden_states, inference_params=None):\n"
    "        if inference_params is not None and inference_params.seqlen_offset > 0:\n"
    "            out, _, _ = self.step(hidden_states, self.conv_state, self.ssm_state)\n            return out\n"
    "        return self.in_proj(hidden_states)\n\n    def step(self, hidden_states, conv_state, ssm_state):\n"
    "        return hidden_states, conv_state, ssm_state\n"
)
_MAMBA_MODEL = (
    "import torch\nfrom torch import nn\n\nfrom mamba_ssm.utils.hf import load_config_hf, load_state_dict_hf\n\n\n"
    "class MambaLMHeadModel(nn.Module):\n    @classmethod\n    def from_pretrained(cls, pretrained_model_name, device=None, dtype=None):\n"
    "        config = load_config_hf(pretrained_model_name)\n        model = cls(config, device=device, dtype=dtype)\n"
    "        model.load_state_dict(load_state_dict_hf(pretrained_model_name, device=device, dtype=dtype))\n        return model\n"
)


def test_a_layer_library_with_a_decode_step_and_a_weights_loader_has_no_training_code():
    files = {"mamba_ssm/modules/mamba_simple.py": _MAMBA_LAYER, "mamba_ssm/models/mixer_seq_simple.py": _MAMBA_MODEL,
             "mamba_ssm/__init__.py": "", "setup.py": "from setuptools import setup\n\nsetup(name='mamba_ssm')\n"}
    audit = _audit(files)
    assert not audit.training_code_found, (audit.project.does_training, audit.project.does_inference)
    # control: a training script beside it trains
    train = ("import torch\n\nfrom mamba_ssm.models.mixer_seq_simple import MambaLMHeadModel\n\n\n"
             "def main():\n    model = MambaLMHeadModel.from_pretrained('state-spaces/mamba-130m')\n"
             "    opt = torch.optim.AdamW(model.parameters())\n    for batch in loader:\n        loss = model(batch).loss\n"
             "        loss.backward()\n        opt.step()\n\n\nif __name__ == '__main__':\n    main()\n")
    assert _audit({**files, "train.py": train}).training_code_found
    # ... and so does a library whose README runs a training script over it (ModelCenter's ``torchrun ... train.py``)
    readme = "# Library\n\n```bash\ntorchrun --nnodes 1 --nproc_per_node 8 train.py --model mamba-130m\n```\n"
    assert _audit({**files, "README.md": readme}).training_code_found
