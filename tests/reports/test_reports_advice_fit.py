"""Advice that fits the project (issue #9): the project's own framework and files, one recommendation per change."""

from __future__ import annotations

from checks.base import REGISTRY, all_checks
from checks.engine import audit_files
from checks.model import Evidence, Priority, Project, Status
from reports.advice import build_plan
from reports.applicability import withhold_reason
from reports.snippets import fit, repo_style

from .helpers import fake_check, make_audit, result

U, P, N = Status.USED, Status.PARTIAL, Status.UNUSED
M, L = Priority.MEDIUM, Priority.LOW


def audit(files: dict[str, str]):
    return audit_files((p, t.encode()) for p, t in files.items())


RAW_LOOP = {
    "train.py": '''import torch
from model import GPT

model = GPT().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(1000):
    x, y = get_batch("train")
    loss = model(x, y)
    loss.backward()
    optimizer.step()
''',
    "model.py": "import torch.nn as nn\n\n\nclass GPT(nn.Module):\n    pass\n",
    "run.sh": "torchrun --standalone --nproc_per_node=8 train.py\n",
    "Dockerfile": "FROM pytorch/pytorch\nRUN pip install numpy\nCMD torchrun --nproc_per_node=8 train.py\n",
}


def test_a_raw_pytorch_loop_gets_pytorch_snippets_not_transformers_or_trl():
    all_checks()
    a = audit(RAW_LOOP)
    style = repo_style(a.facts, a.project, a.roles.by_path)
    assert not style.hf
    g1 = fit(REGISTRY["G1"], style)
    assert g1 is not None and "transformers" not in g1.code and "SequentialLR" in g1.code
    f7 = fit(REGISTRY["F7"], style)
    assert f7 is None or ("trl" not in f7.code and "transformers" not in f7.code)
    assert style.where["python"] == "train.py"


def test_shell_snippets_go_to_the_launch_script_not_the_dockerfile():
    a = audit(RAW_LOOP)
    assert repo_style(a.facts, a.project, a.roles.by_path).where["shell"] == "run.sh"


def test_megatron_flags_go_to_a_current_launcher_not_an_archived_paper_script():
    cmd = ("torchrun --nproc_per_node 8 pretrain_gpt.py \\\n    --tensor-model-parallel-size 2 \\\n"
           "    --micro-batch-size 1 \\\n    --global-batch-size 256 \\\n    --num-workers 0\n")
    files = {
        "examples/academic_paper_scripts/sc21/run_gpt.sh": cmd,
        "examples/gpt3/train_gpt3_175b_distributed.sh": cmd,
        "pretrain_gpt.py": "from megatron.training import pretrain\n\npretrain(train_valid_test_datasets_provider, model_provider)\n",
    }
    a = audit(files)
    style = repo_style(a.facts, a.project, a.roles.by_path)
    assert style.dialect == "megatron"
    assert style.where["megatron-flags"].startswith("examples/gpt3/")


def test_liger_is_not_advised_to_megatron_even_with_transformers_for_tokenizers():
    p = Project(frameworks=["megatron", "transformer-engine", "transformers"])
    assert withhold_reason(result("D5", N, M), p, {}, None) is not None
    p = Project(frameworks=["transformers", "trl"])
    assert withhold_reason(result("D5", N, M), p, {}, None) is None


def test_offline_tokenization_and_binary_format_are_one_recommendation():
    checks = {c: fake_check(c, priority=M) for c in ("F6", "F10", "F1", "F2", "D2", "D4")}
    results = [result(c, N, M) for c in checks]
    plan = build_plan(make_audit(results, Project(frameworks=["transformers"])), checks)
    got = [r.check for r in plan.recommendations]
    assert got.count("F6") + got.count("F10") == 1 and "F6" in got
    assert "F2" not in got and "F1" in got and "D4" not in got and "D2" in got
    assert {w.check for w in plan.withheld} >= {"F10", "F2", "D4"}
    plan = build_plan(make_audit(results, Project(frameworks=["megatron"])), checks)
    assert "F10" in [r.check for r in plan.recommendations] and "F6" not in [r.check for r in plan.recommendations]


def test_one_of_a_pair_alone_is_still_recommended():
    checks = {c: fake_check(c, priority=L) for c in ("D2", "D4")}
    plan = build_plan(make_audit([result("D2", U, None), result("D4", N, L)], Project()), checks)
    assert [r.check for r in plan.recommendations] == ["D4"]


def test_a_hand_written_pinned_token_loader_gets_no_dataloader_advice():
    ev = [Evidence("train.py", 5, "data = np.memmap(path, dtype=np.uint16, mode='r')")]
    results = {"F1": result("F1", N, M), "F10": result("F10", U, None, evidence=ev), "F3": result("F3", U, None, evidence=ev)}
    for cid in ("F1", "F2", "F8", "F11"):
        assert withhold_reason(result(cid, N, M), Project(), results, None) is not None
    with_loader = dict(results, F1=result("F1", N, M, evidence=[Evidence("train.py", 9, "DataLoader(ds, num_workers=0)")]))
    assert withhold_reason(result("F1", N, M), Project(), with_loader, None) is None


def test_entry_points_of_different_small_sizes_get_no_sharding_advice():
    p = Project(num_gpus=8)
    p.notes["params_range_billions"] = (0.155, 0.304)
    assert withhold_reason(result("A2", N, M), p, {}, None) is not None
    p.notes["params_range_billions"] = (0.155, 70.0)
    assert withhold_reason(result("A2", N, M), p, {}, None) is None


def test_a_recipe_driven_project_gets_no_python_file_to_edit_and_no_megatron_command():
    all_checks()
    files = {
        "examples/llama3_lora_sft.yaml": "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\nfinetuning_type: lora\n"
                                         "template: llama3\ncutoff_len: 2048\nlearning_rate: 1.0e-4\nbf16: true\nlogging_steps: 10\n",
        "src/llamafactory/model/checkpointing.py": "def backward_hook(loss):\n    loss.backward()\n",
    }
    a = audit(files)
    style = repo_style(a.facts, a.project, a.roles.by_path)
    assert style.dialect == "llamafactory" and "python" not in style.where
    f10 = fit(REGISTRY["F10"], style)
    assert f10 is None or not f10.fitted or "preprocess_data.py" not in f10.code


def test_a_sampling_demo_of_a_training_project_gets_no_serving_advice():
    ev = [Evidence("sample.py", 87, "y = model.generate(x, max_new_tokens, temperature=temperature, top_k=top_k)")]
    results = {"J5": result("J5", N, Priority.HIGH, evidence=ev), "J1": result("J1", N, Priority.HIGH, evidence=ev)}
    p = Project(does_training=True, does_inference=True)
    assert withhold_reason(results["J5"], p, results, None) is not None
    served = {"J5": result("J5", N, Priority.HIGH, evidence=[Evidence("serve/app.py", 12, "out = model.generate(**batch)")])}
    assert withhold_reason(served["J5"], p, served, None) is None
    assert withhold_reason(results["J5"], Project(does_training=True, does_inference=True, frameworks=["vllm"]), results, None) is None


def test_axolotl_pads_its_vocabulary_with_its_own_key():
    all_checks()
    files = {"examples/llama-3/lora-8b.yml": "base_model: NousResearch/Meta-Llama-3-8B\nsequence_len: 4096\nmicro_batch_size: 2\n"
                                             "gradient_accumulation_steps: 4\nlearning_rate: 0.0002\nbf16: auto\nlogging_steps: 1\n"}
    a = audit(files)
    style = repo_style(a.facts, a.project, a.roles.by_path)
    assert style.dialect == "axolotl"
    d7 = fit(REGISTRY["D7"], style)
    assert d7 is not None and "resize_token_embeddings_to_32x: true" in d7.code and "vocab_size" not in d7.code
    f10 = fit(REGISTRY["F10"], style)
    assert f10 is None or "preprocess_data.py" not in f10.code


def test_multi_node_advice_goes_to_the_launch_that_spans_nodes():
    """E1's NCCL/InfiniBand exports belong in the 2-node launch, not in the single-node script ranked first."""
    all_checks()
    files = dict(RAW_LOOP)
    files["scripts/multi_node.sh"] = "torchrun --nnodes 2 --nproc_per_node 8 --rdzv_endpoint $MASTER:29500 train.py\n"
    a = audit(files)
    style = repo_style(a.facts, a.project, a.roles.by_path)
    assert style.where["shell"] == "run.sh"
    e1 = fit(REGISTRY["E1"], style)
    assert e1 is not None and e1.target == "shell" and e1.where == "scripts/multi_node.sh"
    a3 = fit(REGISTRY["F1"], style)
    assert a3 is None or a3.where != "scripts/multi_node.sh"


def test_multi_node_advice_without_a_multi_node_script_names_no_file():
    """LLaMA-Factory: the only multi-node setting is an accelerate config that no launch names (a documented option, not
    a configured run); a single-node QLoRA script is no place for NCCL InfiniBand exports, so the snippet is shown without a
    file."""
    all_checks()
    files = dict(RAW_LOOP)
    files["configs/accelerate_multi_node.yaml"] = ("compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\n"
                                                   "machine_rank: 0\nmain_process_ip: 192.168.0.1\nnum_machines: 2\nnum_processes: 16\n")
    a = audit(files)
    assert not a.project.multi_node and "accelerate_multi_node.yaml" in a.project.notes.get("multi_node_documented", "")
    style = repo_style(a.facts, a.project, a.roles.by_path)
    e1 = fit(REGISTRY["E1"], style)
    assert e1 is not None and e1.target == "shell" and e1.where is None


def test_expert_parallel_for_one_recipes_moe_model_is_low_priority():
    """alignment-handbook: Mixtral-8x22B in 1 of 22 model settings made A7 the first, High recommendation."""
    all_checks()
    files = {f"recipes/r{i}.yaml": f"model_name_or_path: mistralai/Mistral-7B-v0.{i}\nlearning_rate: 2.0e-05\n" for i in range(4)}
    files["recipes/big.yaml"] = "model_name_or_path: mistral-community/Mixtral-8x22B-v0.1\nlearning_rate: 5.0e-06\n"
    files["scripts/run_sft.py"] = "from trl import SFTTrainer\ntrainer = SFTTrainer(model=model)\ntrainer.train()\n"
    files["recipes/launch.sh"] = "accelerate launch --num_processes 8 scripts/run_sft.py recipes/r0.yaml\n"
    a = audit(files)
    assert a.project.moe and a.project.notes["moe_minority"][:2] == (1, 5)
    r = a.result("A7")
    assert "only 1 of 5 model settings or configs" in (r.detail or "")
    assert r.priority == Priority.LOW
    only = audit({**files, **{f"recipes/r{i}.yaml": "model_name_or_path: mistral-community/Mixtral-8x22B-v0.1\n" for i in range(4)}})
    assert "moe_minority" not in only.project.notes and only.result("A7").priority != Priority.LOW


def test_rdma_advice_for_multi_node_documented_only_is_medium():
    """nanoGPT: a 2-node torchrun example in the README made E1 a High must-do; the repository's launches are single-node."""
    all_checks()
    files = dict(RAW_LOOP)
    files["README.md"] = ("# tiny\n\nTrain on two nodes:\n\n```sh\ntorchrun --nproc_per_node=8 --nnodes=2 --node_rank=0 "
                          "--master_addr=123.456.123.456 --master_port=1234 train.py\n```\n")
    a = audit(files)
    r = a.result("E1")
    assert r.status == N and r.values.get("multi_node_documented") and r.priority == M


def test_liger_available_but_off_says_so_and_cites_the_option():
    """OpenRLHF: '--ds.use_liger_kernel' (default False) exists; 'no Liger Kernel found' was not true."""
    files = {"cli/train_sft.py": ("import argparse\nfrom transformers import AutoModelForCausalLM\n\nparser = argparse.ArgumentParser()\n"
                                  "parser.add_argument('--use_liger_kernel', action='store_true', default=False)\n"
                                  "args = parser.parse_args()\nmodel = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.1-8B')\n"
                                  "loss.backward()\n")}
    r = audit(files).result("D5")
    assert r.status == N and "available but off by default (use_liger_kernel=False at cli/train_sft.py:5)" in r.detail
    assert [e.line for e in r.evidence] == [5]


def test_experts_set_by_one_recipe_config_of_many_are_an_option():
    """GPT-NeoX: moe_num_experts in configs/125M-dmoe.yml, 1 of ~57 model configs: A7 was its second High recommendation."""
    all_checks()
    files = {f"configs/{n}.yml": f'{{\n  "num_layers": {n},\n  "hidden_size": 768,\n}}\n' for n in (12, 24, 32)}
    files["configs/125M-dmoe.yml"] = '{\n  "num_layers": 12,\n  "hidden_size": 768,\n  "moe_num_experts": 8,\n}\n'
    files["train.py"] = "import torch\nloss = model(x)\nloss.backward()\n"
    a = audit(files)
    assert a.project.moe and a.project.notes["moe_minority"][:2] == (1, 4)
    assert a.result("A7").priority == Priority.LOW


def test_unfused_alignment_loss_cites_the_run_that_selects_it():
    """G6 said 'the alignment loss materialises the full logits' with no site (Megatron-LM, GPT-NeoX)."""
    files = {"post-training/configs/llama3-8b-dpo.yml": '{\n  "train_impl": "dpo",\n  "dpo_beta": 0.01,\n  "num_layers": 32,\n}\n',
             "post-training/dpo_data.py": 'rows = [{"task": "dpo", "prompt": p} for p in prompts]\n',
             "train.py": "from trl import DPOTrainer\ntrainer = DPOTrainer(model=model, ref_model=None, args=args)\ntrainer.train()\n"}
    r = audit(files).result("G6")
    assert r.status == N and r.evidence and r.evidence[0].path == "train.py"
    assert "selected at train.py:2" in r.detail


def test_overview_adapter_training_agrees_with_g4():
    """verl: get_peft_model behind _is_lora = lora_rank > 0 (lora_rank: 0): G4 full fine-tuning, so no adapter training."""
    files = {"config/model.yaml": "path: Qwen/Qwen2.5-7B\nlora_rank: 0\n",
             "engine.py": ("from peft import LoraConfig, get_peft_model\n\n\nclass Engine:\n    def __init__(self, model_config):\n"
                           "        self.model_config = model_config\n        self._is_lora = self.model_config.lora_rank > 0\n\n"
                           "    def _build_lora(self, module):\n        return get_peft_model(module, LoraConfig(r=8))\n\n"
                           "    def build(self, module):\n        if self._is_lora:\n            module = self._build_lora(module)\n"
                           "        loss = module(x)\n        loss.backward()\n        return module\n")}
    a = audit(files)
    assert a.result("G4").status == N and a.project.adapter_training is False


NANOCHAT_LIKE = {
    "nanochat/engine.py": ("import torch\n\n\nclass KVCache:\n    def __init__(self, batch_size, num_heads, seq_len, head_dim, num_layers):\n"
                           "        self.kv_cache = torch.zeros(num_layers, 2, batch_size, num_heads, seq_len, head_dim)\n\n\n"
                           "class Engine:\n    def generate(self, tokens, num_samples=1, max_tokens=None, temperature=1.0):\n"
                           "        kv_cache = KVCache(num_samples, 8, 2048, 64, 12)\n        logits = self.model.forward(tokens, kv_cache=kv_cache)\n"
                           "        yield logits\n\n    def generate_batch(self, tokens, num_samples=1, **kwargs):\n"
                           "        for token_column in self.generate(tokens, num_samples, **kwargs):\n            yield token_column\n"),
    "scripts/chat_web.py": "from nanochat.engine import Engine\nengine = Engine(model, tokenizer)\nresults = engine.generate_batch(tokens, num_samples=4)\n",
    "scripts/chat_cli.py": ("from nanochat.engine import Engine\nengine = Engine(model, tokenizer)\n"
                            "for token_column in engine.generate(conversation_tokens, num_samples=1, max_tokens=256):\n"
                            "    print(token_column)\n"),
    "scripts/base_train.py": ("import torch\nmodel = torch.compile(model)\nfor step in range(num_iterations):\n"
                              "    loss = model(x, y)\n    loss.backward()\n    optimizer.step()\n"),
}


def test_a_repositorys_own_engine_is_neither_hf_generate_nor_continuous_batching():
    """nanochat: Engine.generate_batch is its own (not HF's continuous batching); its KV cache is its own, not HF's."""
    a = audit(NANOCHAT_LIKE)
    assert a.project.does_inference  # the chat scripts make J apply: the statuses below are judged, not n/a
    assert a.result("J2").status == N
    j1 = a.result("J1")
    assert j1.status == P and "own decode loop keeps a KV cache" in j1.detail and "HF dynamic" not in j1.detail


def test_inference_advice_in_a_training_repository_follows_training_advice():
    plan = build_plan(audit(NANOCHAT_LIKE))
    cats = [r.category for r in plan.recommendations]
    assert "J" in cats and any(c != "J" for c in cats)  # both kinds present, or the order below proves nothing
    assert all(r.priority != Priority.HIGH for r in plan.recommendations if r.category == "J")
    for prio in {r.priority for r in plan.recommendations}:
        same = [r.category for r in plan.recommendations if r.priority == prio]
        if "J" in same:
            assert same[same.index("J"):] == ["J"] * (len(same) - same.index("J")), cats


def test_hf_attention_is_judged_by_the_training_paths_loads():
    """llama-cookbook: D1 cited a RAG labelling script and an H2O inference experiment, not finetuning.py."""
    files = {"src/finetuning.py": ("from transformers import LlamaForCausalLM, Trainer\n"
                                   "model = LlamaForCausalLM.from_pretrained(name)\n"
                                   "trainer = Trainer(model=model)\ntrainer.train()\n"),
             "use-cases/rag/label_script.py": "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained(n)\n",
             "tools/merge_lora_weights.py": "from transformers import LlamaForCausalLM\nm = LlamaForCausalLM.from_pretrained(n)\n"}
    r = audit(files).result("D1")
    assert r.status == P and [e.path for e in r.evidence] == ["src/finetuning.py"]


def test_a_grain_pipeline_gets_grains_worker_advice_at_its_own_file():
    # torchtitan HEAD: the input pipeline is Grain (no DataLoader, no num_workers); the advice names mp_prefetch and the
    # snippet goes where the pipeline is built, not into a DataLoader of the trainer
    files = {
        "torchtitan/components/data/loader.py": (
            "import grain.python as grain\nfrom grain import experimental as grain_experimental\n\n\n"
            "def build(dataset, collator):\n    dataset = dataset.batch(8, batch_fn=collator)\n"
            "    return grain_experimental.ThreadPrefetchIterDataset(dataset, prefetch_buffer_size=2)\n"),
        "torchtitan/train.py": ("import torch\n\nfrom torchtitan.components.data.loader import build\n\n\ndef main(model, opt, ds, collator):\n"
                                "    for batch in build(ds, collator):\n        loss = model(batch)\n        loss.backward()\n        opt.step()\n"),
    }
    plan = build_plan(audit(files))
    f1 = next(r for r in plan.recommendations if r.check == "F1")
    assert "mp_prefetch" in f1.text and "num_workers" not in f1.text.split("MultiprocessingOptions")[0], f1.text
    assert "mp_prefetch" in f1.text_zh
    assert f1.snippet is not None and f1.snippet.where == "torchtitan/components/data/loader.py:7", f1.snippet
    assert "grain.MultiprocessingOptions" in f1.snippet.code


NEOX_CFG = ('{\n  "pipe_parallel_size": 1,\n  "model_parallel_size": 1,\n  "num_layers": 12,\n  "hidden_size": 768,\n'
            '  "pos_emb": "rotary",\n  "no_weight_tying": true,\n  "gpt_j_residual": false,\n  "output_layer_parallelism": "column",\n'
            '  "attention_config": [[["global"], 12]],\n  "train_micro_batch_size_per_gpu": 4,\n  "num_workers": 1,\n'
            '  "zero_optimization": {"stage": 1},\n  "checkpoint_factor": 10000\n}\n')


def test_a_gpt_neox_config_gets_neox_keys_or_no_fitted_snippet():
    # GPT-NeoX: configs/*.yml hold NeoXArgs (num_workers, train_micro_batch_size_per_gpu), read by deepy.py; an HF key there
    # (dataloader_num_workers, per_device_train_batch_size) is silently ignored
    files = {
        "configs/125M.yml": NEOX_CFG,
        "post-training/configs/llama3-8b-sft.yml": NEOX_CFG.replace('"num_workers": 1', '"num_workers": 1,\n  "bf16": {"enabled": true}'),
        "megatron/training.py": ("import deepspeed\nfrom megatron import mpu\n\n\ndef train(model, opt, data_iterator):\n"
                                 "    for batch in data_iterator:\n        loss = model(batch)\n        model.backward(loss)\n        model.step()\n"),
        "train.py": "from megatron.training import pretrain\n\npretrain(neox_args)\n",
    }
    a = audit(files)
    style = repo_style(a.facts, a.project, a.roles.by_path)
    assert style.dialect == "neox" and style.where["hf-yaml"] == "configs/125M.yml", style
    f1 = fit(REGISTRY["F1"], style)
    assert f1 is not None and f1.target == "neox" and f1.code.strip() == "num_workers: 8", f1
    c5 = fit(REGISTRY["C5"], style)
    assert c5 is not None and "train_micro_batch_size_per_gpu: 4" in c5.code and "per_device" not in c5.code, c5
    d2 = fit(REGISTRY["D2"], style)  # torch_compile has no NeoX setting: never the HF key in a NeoX config
    assert d2 is None or d2.target != "neox", d2
