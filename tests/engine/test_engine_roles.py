"""File roles: tests, CI, vendored packages, archived runs and benchmarks never change a status or step zero.

The fixtures are shaped like real repositories: a nanoGPT-style training script with a tests/ folder
that exercises other settings, a modded-nanogpt-style ``records/<date>_<name>/train_gpt2.py`` archive,
a bundled upstream package with its own ``setup.py`` (as a repository that copies AutoGPTQ with its
examples), a GitHub Actions workflow and a dev Makefile.
"""

from __future__ import annotations

import json

from accel_audit.cli import main
from checks.engine import AuditOptions, audit_files
from checks.facts import extract_file
from checks.model import Status
from checks.roles import classify_roles
from checks.rules.c_memory import ALPACA_README, ALPACA_TRAIN

TRAIN = """\
import torch
from torch.utils.data import DataLoader
from model import GPT

model = GPT()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
loader = DataLoader(dataset, batch_size=8)
for step, (x, y) in enumerate(loader):
    loss = model(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
"""
MODEL = """\
import torch.nn as nn

class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.h = nn.ModuleList([nn.Linear(768, 768) for _ in range(12)])
"""
RUN = "torchrun --standalone --nproc_per_node=8 train.py\n"

# out of scope, each using practices the training path does not use
TESTS = {
    "tests/test_train.py": (
        "import torch\nfrom torch.utils.data import DataLoader\n\n"
        "def test_step():\n"
        "    model = torch.compile(GPT())\n"
        "    dl = DataLoader(ds, num_workers=8, pin_memory=True, prefetch_factor=4)\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "        loss = model(x)\n"
        "    loss.backward()\n"
    ),
    "tests/conftest.py": "import pytest\n",
}
RECORDS = {
    "records/track_1_short/2024-10-14_ModernArch/train_gpt2.py": (
        "import torch\nimport torch.nn.functional as F\n"
        "model = torch.compile(model)\n"
        "y = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
        "with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n"
        "    loss = model(x)\nloss.backward()\n"
    ),
}
VENDORED = {
    "auto_gptq/setup.py": "from setuptools import setup\nsetup(name='auto_gptq', install_requires=['accelerate', 'peft'])\n",
    "auto_gptq/auto_gptq/__init__.py": "",
    "auto_gptq/examples/peft/peft_lora_clm_instruction_tuning.py": (
        "from peft import LoraConfig, get_peft_model\nfrom transformers import TrainingArguments, Trainer\n"
        "args = TrainingArguments(output_dir='o', bf16=True, gradient_checkpointing=True, dataloader_num_workers=4)\n"
        "model = get_peft_model(model, LoraConfig(r=8))\nTrainer(model=model, args=args).train()\n"
    ),
}
CI = {
    ".github/workflows/gpu.yml": (
        "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: deepspeed --num_gpus 2 tests/train_tiny.py --deepspeed ds.json --bf16\n"
    ),
    "Makefile": "lint:\n\truff check .\ntest:\n\tpytest -q tests\n",
    "benchmarks/bench_attention.py": "from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, causal=True)\n",
}


def _audit(files: dict[str, str], **opts):
    return audit_files(((p, t.encode()) for p, t in files.items()), options=AuditOptions(**opts))


def _statuses(audit) -> dict[str, Status]:
    return {r.id: r.status for r in audit.results}


BASE = {"train.py": TRAIN, "model.py": MODEL, "run.sh": RUN}


def test_roles_of_a_real_shaped_repository():
    files = {**BASE, **TESTS, **RECORDS, **VENDORED, **CI}
    roles = classify_roles({p: extract_file(p, t.encode()) for p, t in files.items()})
    assert roles.role("train.py") == "training" and roles.role("model.py") == "training"
    assert roles.role("run.sh") == "launch"
    assert roles.role("tests/test_train.py") == "test" and roles.role("tests/conftest.py") == "test"
    assert roles.role("records/track_1_short/2024-10-14_ModernArch/train_gpt2.py") == "archive"
    assert roles.role("auto_gptq/examples/peft/peft_lora_clm_instruction_tuning.py") == "vendored"
    assert roles.role(".github/workflows/gpu.yml") == "ci"
    assert roles.role("Makefile") == "dev"
    assert roles.role("benchmarks/bench_attention.py") == "benchmark"
    assert roles.entry_points == ["train.py"]


def test_out_of_scope_files_change_no_status_and_no_step_zero():
    alone = _audit(BASE)
    crowded = _audit({**BASE, **TESTS, **RECORDS, **VENDORED, **CI})
    assert _statuses(crowded) == _statuses(alone)
    assert crowded.project.bottleneck == alone.project.bottleneck
    assert crowded.project.bottleneck_reasons == alone.project.bottleneck_reasons
    assert crowded.project.frameworks == alone.project.frameworks  # no peft/transformers/flash-attn/deepspeed from context
    assert not crowded.project.finetunes
    for r in crowded.results:
        for e in r.evidence + r.findings:
            assert e.role in ("training", "code", "config", "launch", "build"), (r.id, e)


def test_out_of_scope_use_is_shown_as_context():
    crowded = _audit({**BASE, **TESTS, **RECORDS})
    d2 = crowded.result("D2")
    assert d2.status == Status.UNUSED
    assert {e.role for e in d2.context} <= {"test", "archive"} and d2.context
    assert "context" in d2.to_json() and d2.to_json()["context"][0]["role"] in ("test", "archive")


AMP = "import torch\ndef fwd(m, x):\n    with torch.autocast('cuda', dtype=torch.bfloat16):\n        return m(x)\n"


def test_a_package_the_training_path_imports_is_in_scope_even_when_packaged_apart():
    """Megatron-LM's ``megatron/core/distributed/fsdp/src`` has its own pyproject.toml and is imported by training."""
    files = {**BASE, "train.py": "from fsdp.src.amp import fwd\n" + TRAIN, "fsdp/src/pyproject.toml": "[project]\nname = 'x'\n",
             "fsdp/src/amp.py": AMP}
    audit = _audit(files)
    assert audit.roles.role("fsdp/src/amp.py") == "training"
    assert audit.result("C1").status != Status.UNUSED


def test_an_eval_harness_the_training_script_imports_stays_context():
    """modded-nanogpt's train_gpt.py imports evals/hellaswag.py: it runs beside training, it is not the input pipeline."""
    files = {**BASE, "train.py": "from evals.hellaswag import fwd\n" + TRAIN, "evals/hellaswag.py": AMP}
    audit = _audit(files)
    assert audit.roles.role("evals/hellaswag.py") == "eval"
    assert audit.result("C1").status == _audit(BASE).result("C1").status


def test_a_launch_script_names_the_entry_point_even_under_an_archive_folder():
    files = {"run.sh": "torchrun --nproc_per_node=8 records/2024-11-03_Final/train_gpt.py\n",
             "records/2024-11-03_Final/train_gpt.py": TRAIN}
    audit = _audit(files)
    assert audit.roles.role("records/2024-11-03_Final/train_gpt.py") == "training"
    assert audit.training_code_found


def test_examples_and_scripts_stay_in_scope():
    files = {"examples/sft/train_sft.py": TRAIN, "scripts/launch.sh": "accelerate launch examples/sft/train_sft.py\n"}
    audit = _audit(files)
    assert audit.roles.role("examples/sft/train_sft.py") == "training"
    assert audit.training_code_found
    assert audit.project.does_training


def test_paths_training_puts_files_back_in_scope():
    files = {"tests/e2e/train_tiny.py": TRAIN}
    assert not _audit(files).training_code_found
    forced = _audit(files, training=("tests/e2e/**",))
    assert forced.roles.role("tests/e2e/train_tiny.py") == "training"
    assert forced.training_code_found


def test_separately_packaged_code_is_the_project_when_it_is_all_there_is():
    files = {"pkg/setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/pkg/train.py": TRAIN}
    audit = _audit(files)
    assert audit.roles.role("pkg/pkg/train.py") == "training"


def test_scan_reads_the_repository_config_and_exclude_flag(tmp_path, capsys):
    for p, t in {**BASE, **TESTS, "legacy/train_old.py": TRAIN.replace("batch_size=8", "batch_size=8, num_workers=0")}.items():
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p).write_text(t)
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/accel-audit.yml").write_text("ignore: [H*]\npaths:\n  training: ['tests/**']\n")
    assert main(["scan", str(tmp_path), "--format", "json", "--exclude", "legacy/**"]) == 0
    doc = json.loads(capsys.readouterr().out)
    roles = {f["path"]: f["role"] for f in doc["files"]}
    assert "legacy/train_old.py" not in roles  # --exclude: not read at all
    assert roles["tests/test_train.py"] == "training"  # paths.training
    assert doc["scan"]["ignored_checks"][:1] == ["H1"]
    d2 = next(c for c in doc["checks"] if c["id"] == "D2")
    assert d2["status"] == "used" and d2["evidence"][0]["role"] == "training"


def test_scan_rejects_an_invalid_repository_config(tmp_path, capsys):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/accel-audit.yml").write_text("paths:\n  include: ['x']\n")
    assert main(["scan", str(tmp_path)]) == 2
    assert "paths: unknown key 'include'" in capsys.readouterr().err
    assert main(["scan", str(tmp_path), "--no-repo-config", "--format", "json"]) == 0


def test_no_training_code_found(tmp_path, capsys):
    assert main(["scan", str(tmp_path), "--fail-under", "10"]) == 2
    out, err = capsys.readouterr()
    assert "No training code found" in out and "no training code found" in err
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_x.py").write_text(TESTS["tests/test_train.py"])
    assert main(["scan", str(tmp_path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["project"]["training_code_found"] is False and doc["recommendations"] == []
    assert main(["scan", str(tmp_path), "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "未找到训练代码" in out and "测试代码 1" in out


def _recipe(workers: int, model: str = "meta-llama/Meta-Llama-3-8B-Instruct") -> str:
    return (f"model_name_or_path: {model}\nstage: sft\ndo_train: true\nfinetuning_type: lora\ntemplate: llama3\n"
            f"cutoff_len: 2048\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 8\nbf16: true\n"
            f"dataloader_num_workers: {workers}\n")


def test_recipes_that_disagree_are_judged_by_the_majority():
    files = {f"examples/train_lora/recipe_{i}.yaml": _recipe(4) for i in range(5)}
    files["examples/train_lora/debug_cpu.yaml"] = _recipe(0)
    files["src/train.py"] = "from transformers import Trainer\nTrainer(model=m, args=a).train()\n"
    audit = _audit(files)
    f1 = audit.result("F1")
    assert f1.status == Status.USED, f1.detail
    assert "dataloader_num_workers: 4 in 5 recipes, 0 in 1 recipe (judged by the majority)" in f1.detail
    # no majority: nothing is left out, the worst value stands
    split = {f"r{i}.yaml": _recipe(4 if i < 2 else 0) for i in range(4)} | {"train.py": files["src/train.py"]}
    f1 = _audit(split).result("F1")
    assert f1.status == Status.UNUSED and "no majority" in f1.detail


def test_model_size_comes_from_the_majority_of_recipes_not_the_largest():
    files = {f"examples/r{i}.yaml": _recipe(4) for i in range(4)}
    files["examples/big.yaml"] = _recipe(4, "meta-llama/Meta-Llama-3-70B-Instruct")
    files["train.py"] = "from transformers import Trainer\nTrainer(model=m, args=a).train()\n"
    p = _audit(files).project
    assert p.estimated_params == "8B" and p.notes["params_distribution"] == {"8B": 4, "70B": 1}
    assert p.adapter_training


def test_size_is_never_read_from_token_counts_or_registries():
    from checks.project import size_in_name

    assert size_in_name("allenai/OLMo-1B-0724-hf-step477000-tokens2000B") == 1.0
    assert size_in_name("checkpoints/tokens503b") is None
    registry = "MODELS = [\n" + "".join(f"    dict(name='Llama-{s}B', model_name='meta-llama/Llama-2-{s}b-hf'),\n" for s in (7, 13, 34, 70)) + "]\n"
    files = {"litgpt/config.py": registry, "train.py": "from transformers import Trainer\nTrainer(model=m, args=a).train()\n"}
    assert _audit(files).project.estimated_params is None


def test_step_zero_cites_the_training_path_not_other_project_code():
    """LLaMA-Factory's scripts/stat_utils/cal_lr.py builds a DataLoader(num_workers=0) to count tokens: not training input."""
    files = {**BASE, "scripts/stat_utils/cal_lr.py": (
        "from torch.utils.data import DataLoader\n"
        "def calculate_lr(dataset):\n    loader = DataLoader(dataset, batch_size=4, num_workers=0)\n    for batch in loader:\n        n += batch.numel()\n")}
    audit = _audit(files)
    assert audit.roles.role("scripts/stat_utils/cal_lr.py") == "code"
    assert not any("cal_lr.py" in r for r in audit.project.bottleneck_reasons)


def test_feature_switches_are_not_judged_by_the_majority():
    """axolotl: 14 of 81 recipes use FSDP, the rest leave ``fsdp:`` empty; FSDP is still a practice the project uses."""
    files = {f"examples/r{i}.yaml": _recipe(4) + "fsdp:\n" for i in range(5)}
    files["examples/fsdp.yaml"] = _recipe(4) + "fsdp:\n  - full_shard\n  - auto_wrap\nfsdp_config:\n  fsdp_offload_params: false\n"
    files["train.py"] = "from transformers import Trainer\nTrainer(model=m, args=a).train()\n"
    audit = _audit(files)
    assert audit.result("A2").status == _audit({k: v for k, v in files.items() if k != "examples/r0.yaml"}).result("A2").status
    assert "recipes" not in (audit.result("A2").detail or "")


def test_dev_requirements_name_no_framework():
    files = {**BASE, "requirements.txt": "torch>=2.3\n", "requirements-dev.txt": "pytest\ndeepspeed\n"}
    audit = _audit(files)
    assert audit.roles.role("requirements-dev.txt") == "dev" and "deepspeed" not in audit.project.frameworks


# -- documented commands are entry points; side projects and tutorial notebooks are context ----------------------

README = """\
# tiny-sft

Fine-tune on one node:

```bash
torchrun --nproc_per_node 8 scripts/sft.py --config recipes/sft_8b.yaml
```

or with the CLI of a launcher:

    accelerate launch --config_file configs/fsdp.yaml scripts/sft.py

```python
from tiny_sft import train  # a Python example is not a command
```
"""
SFT = "from tiny_sft.data import build_loader\nloader = build_loader()\n"
DATA = "from torch.utils.data import DataLoader\ndef build_loader():\n    return DataLoader(ds, batch_size=8, num_workers=4, pin_memory=True)\n"


def _roles(files: dict[str, str]):
    return classify_roles({p: extract_file(p, t.encode()) for p, t in files.items()})


def test_readme_commands_name_the_entry_points_and_their_recipes():
    files = {"README.md": README, "scripts/sft.py": SFT, "tiny_sft/data.py": DATA, "tiny_sft/__init__.py": "",
             "recipes/sft_8b.yaml": "lr: 2.0e-5\n", "configs/fsdp.yaml": "distributed_type: FSDP\n", "tools/convert.py": "import torch\n"}
    roles = _roles(files)
    assert roles.entry_points == ["scripts/sft.py"]
    assert roles.role("tiny_sft/data.py") == "training"  # what the documented entry point imports
    assert roles.why["scripts/sft.py"] == "run by the documented command at README.md:6"
    assert roles.why["recipes/sft_8b.yaml"].startswith("run by the documented command") and roles.role("recipes/sft_8b.yaml") == "config"
    assert roles.role("tools/convert.py") == "code"  # not named by any command


def test_a_documented_command_is_not_use_where_the_repository_ships_a_launch():
    """A README is not use where the repository runs its own launch: the flags of a documented command turn no check used."""
    ff = extract_file("README.md", b"```bash\ndeepspeed train.py --deepspeed ds.json --bf16 --gradient_checkpointing\n```\n")
    assert ff.launches == [] and [(h.kind, h.value) for h in ff.doc_hints] == [
        ("command", "train.py"), ("command_flag", "deepspeed"), ("command_file", "ds.json")]
    assert [(x.launcher, x.script) for x in ff.doc_launches] == [("deepspeed", "train.py")]
    without = _audit(BASE)
    documented = _audit({**BASE, "README.md": "```bash\ndeepspeed train.py --bf16 --gradient_checkpointing\n```\n"})
    assert _statuses(documented) == _statuses(without)


def _result(audit, check_id: str):
    return next(r for r in audit.results if r.id == check_id)


def test_the_documented_command_is_the_run_of_a_repository_that_ships_no_launch():
    """Stanford Alpaca configures its run only in the README's torchrun command: its flags are the run's settings, each
    cited at the line that holds it; the same README next to a shipped launch, or naming a script the repository does not
    ship, changes nothing."""
    alone = _audit({"train.py": ALPACA_TRAIN})
    run = _audit({"train.py": ALPACA_TRAIN, "README.md": ALPACA_README})
    assert _statuses(alone)["C1"] == Status.UNUSED and _statuses(run)["C1"] == Status.USED
    assert [(e.path, e.line) for e in _result(run, "C1").evidence] == [("README.md", 7)]
    assert _statuses(run)["C5"] == Status.USED and "8 micro-batches" in (_result(run, "C5").detail or "")
    assert _statuses(run)["A2"] == Status.USED and ("README.md", 11) in [(e.path, e.line) for e in _result(run, "A2").evidence]
    assert _statuses(run)["I4"] == Status.UNUSED and "every step" in (_result(run, "I4").detail or "")  # --logging_steps 1
    assert _statuses(alone)["I4"] != Status.UNUSED
    # step zero names the README's data path instead of denying that any was seen
    assert any("./alpaca_data.json" in r for r in run.project.bottleneck_reasons if r.startswith("storage"))
    shipped = _audit({"train.py": ALPACA_TRAIN, "README.md": ALPACA_README, "run.sh": "torchrun --nproc_per_node=4 train.py --output_dir o\n"})
    assert _statuses(shipped)["C1"] == Status.UNUSED
    elsewhere = _audit({"src/finetune.py": ALPACA_TRAIN, "README.md": ALPACA_README})  # README names train.py, which is not shipped
    assert _statuses(elsewhere)["C1"] == Status.UNUSED


def test_commands_in_rst_and_in_a_docs_guide_relative_to_the_guide():
    rst = "Training\n========\n\n.. code-block:: bash\n\n   torchrun --nnodes 1 --nproc_per_node 4 run_lora.py --enable_fsdp\n"
    files = {"recipes/lora/multigpu.rst": rst, "recipes/lora/run_lora.py": "import torch\n", "src/pkg/run_lora.py": "import torch\n"}
    roles = _roles(files)
    assert roles.why["recipes/lora/run_lora.py"] == "run by the documented command at recipes/lora/multigpu.rst:6"
    assert roles.entry_points == ["recipes/lora/run_lora.py"] and roles.role("src/pkg/run_lora.py") == "code"


DDPO = (  # trl's DDPO trainer: reinforcement learning of a Stable Diffusion UNet
    "from diffusers import StableDiffusionPipeline, DDIMScheduler\nfrom .sd_utils import lora_layers\n\n"
    "class DDPOTrainer:\n    def step(self, batch):\n        self.sd_pipeline.unet.train()\n"
    "        loss = self.loss(batch)\n        self.accelerator.backward(loss)\n"
    "        self.accelerator.log({'reward': batch['reward'].mean()}, step=self.global_step)\n"
)
SD_UTILS = "import torch\ndef lora_layers(unet):\n    return [m for m in unet.modules()]\n"
APP = "import gradio as gr\nfrom transformers import pipeline\nchat = pipeline('text-generation')\ngr.ChatInterface(chat).launch()\n"


def test_side_projects_are_context_and_change_no_status():
    side = {"pkg/ddpo_trainer.py": DDPO, "pkg/sd_utils.py": SD_UTILS, "demo/app.py": APP,
            "envs/cartpole.py": "import gymnasium as gym\nenv = gym.make('CartPole-v1')\n",
            "apps/rag/main.py": "from langchain_community.vectorstores import FAISS\nfrom langchain_groq import ChatGroq\nchain = FAISS.load_local('idx').as_retriever()\n"}
    roles = _roles({**BASE, **side})
    assert {p: roles.role(p) for p in side} == dict.fromkeys(side, "side")
    assert roles.why["pkg/sd_utils.py"] == "imported only by side-project code (pkg/ddpo_trainer.py)"
    assert roles.role("train.py") == "training"
    assert _statuses(_audit({**BASE, **side})) == _statuses(_audit(BASE))


def test_what_is_not_a_side_project():
    files = {**BASE, "train.py": "from agent.env import SearchEnv\n" + TRAIN,
             "agent/env.py": "import gymnasium as gym\nclass SearchEnv(gym.Env): ...\n",  # the training's own environment
             "pkg/__init__.py": "from .ddpo_trainer import DDPOTrainer\n", "pkg/ddpo_trainer.py": DDPO, "pkg/sd_utils.py": SD_UTILS,
             # DeepSpeed's kernel injection: a diffusers container in a library, no training of a diffusion model
             "inject/replace_module.py": "def replace(model):\n    import diffusers\n    return diffusers.models.attention.BasicTransformerBlock\n",
             "webui/train.py": "import gradio as gr\nfrom transformers import TrainingArguments\n"}
    roles = _roles(files)
    assert roles.role("agent/env.py") == "training"
    assert roles.role("pkg/ddpo_trainer.py") == "side"  # a package __init__ re-exporting it does not make it shared
    assert roles.role("pkg/sd_utils.py") == "side"
    assert roles.role("inject/replace_module.py") == "code"
    assert roles.role("webui/train.py") != "side"  # a train*.py is never a demo app


def test_a_repository_that_is_all_diffusion_is_still_judged():
    files = {"train_unet.py": "from diffusers import UNet2DModel, DDPMScheduler\nmodel = UNet2DModel()\n", "data.py": "from diffusers import DDPMScheduler\n"}
    roles = _roles(files)
    assert "side" not in roles.counts()


def test_notebooks_beside_training_entry_points_are_tutorials():
    nb = json.dumps({"cells": [{"cell_type": "code", "source": ["from torch.utils.data import DataLoader\n", "dl = DataLoader(ds)\n"]}]})
    roles = _roles({**BASE, "tutorials/quickstart.ipynb": nb})
    assert roles.role("tutorials/quickstart.ipynb") == "docs"
    assert _roles({"notebooks/finetune.ipynb": nb}).role("notebooks/finetune.ipynb") == "code"  # the notebook is the project


def test_documented_commands_that_do_not_train_name_no_entry_point():
    readme = (
        "```bash\n"
        "torchrun --nproc_per_node 8 tools/convert_hf_to_mcore.py --load hf/\n"  # a conversion on a training launcher
        "litgpt chat microsoft/phi-2\n"  # a console script's subcommand is not a module path
        "python scripts/generate.py --prompt hi\n"
        "python pretrain_gpt.py config/eval_gpt2.py\n"  # the training script in an evaluation-only run
        "```\n"
    )
    files = {"README.md": readme, "tools/convert_hf_to_mcore.py": "import torch\n", "chat/__init__.py": "",
             "scripts/generate.py": "import torch\n", "pretrain_gpt.py": "import torch\n", "config/eval_gpt2.py": "eval_only = True\n"}
    roles = _roles(files)
    assert roles.entry_points == ["pretrain_gpt.py"]
    assert roles.role("README.md") == "guide"
    # the evaluation-only run's config is no recipe of the documented command (its name makes it evaluation)
    assert "documented command" not in roles.why.get("config/eval_gpt2.py", "")
    assert roles.role("config/eval_gpt2.py") == "eval"


def test_console_scripts_a_setup_py_builds_in_a_helper_are_entry_points():
    """LLaMA-Factory's setup.py: ``entry_points={"console_scripts": get_console_scripts()}``."""
    setup = (
        "from setuptools import setup\n\ndef get_console_scripts():\n"
        "    console_scripts = [\"llamafactory-cli = llamafactory.cli:main\"]\n    return console_scripts\n\n"
        "setup(name='llamafactory', entry_points={'console_scripts': get_console_scripts()})\n"
    )
    files = {"setup.py": setup, "src/llamafactory/cli.py": "from .data import get_dataset\n",
             "src/llamafactory/data/__init__.py": "from .loader import get_dataset\n", "src/llamafactory/data/loader.py": "import datasets\n"}
    roles = _roles(files)
    assert roles.entry_points == ["src/llamafactory/cli.py"]
    assert roles.role("src/llamafactory/data/loader.py") == "training"


def test_preference_training_scripts_are_entry_points():
    """TRL's ``trl/commands/scripts/kto.py`` / ``orpo.py`` / ``reward_modeling.py`` train as sft.py and dpo.py do."""
    files = {"scripts/kto.py": "from trl import KTOTrainer\n", "scripts/reward_modeling.py": "from trl import RewardTrainer\n",
             "scripts/chat.py": "import torch\n"}
    roles = _roles(files)
    assert roles.entry_points == ["scripts/kto.py", "scripts/reward_modeling.py"]


def test_model_names_most_named_first_and_placeholders_dropped():
    """LLaMA-Factory's overview showed `/path/to/DeepSeek-V3.1-source` first (alphabetical order of every name)."""
    from checks.engine import audit_files

    files = {f"examples/train_{i}.yaml": "model_name_or_path: Qwen/Qwen3-4B\nstage: sft\nbf16: true\n" for i in range(3)}
    files["examples/convert.yaml"] = "model_name_or_path: /path/to/DeepSeek-V3.1-source\n"
    files["examples/other.yaml"] = "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\n"
    files["train.py"] = "from transformers import Trainer\ntrainer = Trainer(model=model)\ntrainer.train()\n"
    names = audit_files((p, t.encode()) for p, t in files.items()).project.model_names
    assert names[0] == "Qwen/Qwen3-4B" and "meta-llama/Meta-Llama-3-8B-Instruct" in names
    assert not any("path/to" in n for n in names)
    files["examples/debug.yaml"] = "model_name_or_path: ./tests/assets/tokenizer\n"
    files["examples/generic.yaml"] = "model_name_or_path: model\n"
    names = audit_files((p, t.encode()) for p, t in files.items()).project.model_names
    assert "./tests/assets/tokenizer" not in names and "model" not in names and names[0] == "Qwen/Qwen3-4B"


def test_model_names_of_training_recipes_before_judge_or_inference_ones():
    """oumi: judge configs name gpt-4o more often than any trained model; the overview leads with a trained one. (A hosted
    model is no model name at all now, so the judge here is an open one served by vLLM.)"""
    from checks.engine import audit_files

    files = {f"configs/judges/j{i}.yaml": "model:\n  model_name: Qwen/Qwen2.5-72B-Instruct\ninference_engine: VLLM\n" for i in range(4)}
    files["configs/recipes/sft/train.yaml"] = ("model:\n  model_name: meta-llama/Llama-3.1-8B-Instruct\n"
                                               "training:\n  learning_rate: 2.0e-05\n  num_train_epochs: 3\n")
    files["train.py"] = "from transformers import Trainer\ntrainer = Trainer(model=model)\ntrainer.train()\n"
    names = audit_files((p, t.encode()) for p, t in files.items()).project.model_names
    assert names[:2] == ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-72B-Instruct"]


def test_a_keyword_of_an_arbitrary_call_is_not_the_context_length():
    """verl: padding_utils.py's meta.update(seq_len=128) read as max_seq_len 128; a config object's keyword still counts."""
    from checks.engine import audit_files

    files = {"trainer/padding_utils.py": "def pad(tag):\n    tag.update(is_padding=True, seq_len=128)\n",
             "trainer/train.py": "from trainer.padding_utils import pad\nfrom trl import SFTConfig, SFTTrainer\nargs = SFTConfig(max_seq_length=4096)\n"
                                 "trainer = SFTTrainer(model=model, args=args)\ntrainer.train()\n"}
    assert audit_files((p, t.encode()) for p, t in files.items()).project.max_seq_len == 4096


def test_a_plain_python_launch_of_a_script_that_does_not_train_is_no_entry_point():
    """llama-cookbook: H2O's 'python -u run_streaming.py' (long-context inference) made it and its utils 'training'."""
    from checks.engine import audit_files

    files = {
        "use-cases/H2O/src/streaming.sh": "python -u run_streaming.py --model-name meta-llama/Llama-2-7b-hf --enable_h2o_generation\n",
        "use-cases/H2O/run_streaming.py": ("from transformers import AutoModelForCausalLM\nfrom utils.cache import Cache\n"
                                           "model = AutoModelForCausalLM.from_pretrained(name)\nout = model.generate(**inputs)\n"),
        "use-cases/H2O/utils/cache.py": "class Cache:\n    pass\n",
        "scripts/run_sft.sh": "python -u main.py --lr 2e-5\n",
        "main.py": "from transformers import Trainer\ntrainer = Trainer(model=model, args=args)\ntrainer.train()\n",
    }
    roles = audit_files((p, t.encode()) for p, t in files.items()).roles
    assert roles.by_path["use-cases/H2O/run_streaming.py"] != "training"
    assert roles.by_path["main.py"] == "training"  # a script that trains itself keeps its launch


def test_triton_tile_sizes_are_not_the_context_length():
    """megatron-core: BLOCK_SIZE = 1024 beside a Triton kernel read as max_seq_len 1024; nanoGPT's block_size stays."""
    from checks.engine import audit_files

    files = {"core/kernels.py": "import triton\nBLOCK_SIZE = 1024\nblock_size = 1024\n",
             "train.py": "from core.kernels import BLOCK_SIZE\nimport torch\nloss = model(x)\nloss.backward()\n"}
    assert audit_files((p, t.encode()) for p, t in files.items()).project.max_seq_len is None
    nano = {"train.py": "import torch\nblock_size = 1024\nloss = model(x)\nloss.backward()\n"}  # nanoGPT's context length
    assert audit_files((p, t.encode()) for p, t in nano.items()).project.max_seq_len == 1024


def test_a_classical_estimator_is_not_a_model_name():
    """A tabular trainer's ``model: str = Field("xgboost")`` names a library, not a checkpoint the overview should list."""
    from checks.engine import audit_files

    files = {
        "trainers/tabular/params.py": "from pydantic import BaseModel, Field\n\nclass TabularParams(BaseModel):\n"
                                      "    model: str = Field('xgboost', title='Model name')\n",
        "trainers/clm/params.py": "from pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                                  "    model: str = Field('gpt2', title='Model name')\n    lr: float = Field(3e-5)\n",
        "trainers/clm/train.py": "from transformers import Trainer\ntrainer = Trainer(model=model)\ntrainer.train()\n",
    }
    names = audit_files((p, t.encode()) for p, t in files.items()).project.model_names
    assert "xgboost" not in names and "gpt2" in names, names


def test_a_papers_reproduction_scripts_are_archived_runs():
    # Megatron-LM ``examples/academic_paper_scripts/sc21/run_table_1.sh`` asks for 384 nodes to reproduce a 2021 paper's table
    paper = {"examples/academic_paper_scripts/sc21/run_table_1.sh": (
        "#SBATCH --nodes=384\nsrun torchrun --nnodes 384 --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 "
        "--pipeline-model-parallel-size 16 --fp16\n")}
    roles = classify_roles({p: extract_file(p, t.encode()) for p, t in {**BASE, **paper}.items()})
    assert roles.role("examples/academic_paper_scripts/sc21/run_table_1.sh") == "archive"
    alone, crowded = _audit(BASE), _audit({**BASE, **paper})
    assert _statuses(crowded) == _statuses(alone)
    assert crowded.project.num_nodes == alone.project.num_nodes
    from checks.roles import path_role
    assert path_role("examples/paperspace/run.sh", "shell")[0] is None and path_role("src/newspaper/train.py", "python")[0] is None


def test_ci_test_configs_and_dev_scripts_are_context():
    # xtuner at HEAD: tensor-parallel sizes of its CI configs (``autotest/config/*.py``) and the expert-parallel size of
    # a checkpoint conversion script (``.dev_scripts/dcp_to_hf.py``) were reported as the project's
    files = {**BASE,
             "autotest/config/npu_qwen3_recompute.py": "fsdp_cfg = FSDPConfig(tp_size=4, recompute_ratio=1.0)\n",
             ".dev_scripts/dcp_to_hf.py": "fsdp_cfg = FSDPConfig(ep_size=16)\n"}
    roles = classify_roles({p: extract_file(p, t.encode()) for p, t in files.items()})
    assert roles.role("autotest/config/npu_qwen3_recompute.py") == "test"
    assert roles.role(".dev_scripts/dcp_to_hf.py") == "dev"
    audit = _audit(files)
    assert audit.result("A4").status is not Status.USED and audit.result("A7").status is not Status.USED


def test_a_launch_of_an_evaluation_script_is_evaluation():
    # Megatron-DeepSpeed: ``examples_deepspeed/MoE/ds_evalharness.sh`` runs ``tasks/eval_harness/evaluate.py`` with
    # ``--moe-expert-parallel-size 1``; A7 read that as the project's expert-parallel layout
    files = {**BASE,
             "tasks/eval_harness/evaluate.py": "import argparse\nparser = argparse.ArgumentParser()\nmodel.eval()\n",
             "examples/MoE/ds_evalharness.sh": (
                 "deepspeed --num_gpus 8 ../../tasks/eval_harness/evaluate.py --moe-expert-parallel-size 1 --num-experts 128\n")}
    roles = classify_roles({p: extract_file(p, t.encode()) for p, t in files.items()})
    assert roles.role("examples/MoE/ds_evalharness.sh") == "eval"
    assert roles.role("tasks/eval_harness/evaluate.py") == "eval"
    assert roles.role("run.sh") == "launch" and roles.role("train.py") == "training"


def _chat_app(root: str) -> dict[str, str]:
    """DeepSpeedExamples ``applications/DeepSpeed-Chat``: its own setup.py, its steps' ``main.py`` run by their launchers."""
    return {
        f"{root}/setup.py": "from setuptools import setup\nsetup(name='deepspeed-chat', packages=['dschat'])\n",
        f"{root}/dschat/utils/data_utils.py": "from torch.utils.data import DataLoader\n",
        f"{root}/training/step1_supervised_finetuning/main.py": (
            "from dschat.utils.data_utils import DataLoader\nimport deepspeed\n"
            "model, *_ = deepspeed.initialize(model=model, config=ds_config)\nmodel.backward(loss)\nmodel.step()\n"),
        f"{root}/training/step1_supervised_finetuning/training_scripts/llama2/run_llama2_7b.sh": (
            "deepspeed main.py --model_name_or_path meta-llama/Llama-2-7b-hf --zero_stage 3 --gradient_checkpointing\n"),
    }


def test_a_launch_runs_the_script_of_its_own_folder_whatever_the_hash_order():
    # DeepSpeedExamples holds 20 files named main.py; ``deepspeed main.py`` in an application's training_scripts/ ran
    # any three of them, picked in the set's order, so roles (and the report) changed from one run to the next
    files = {**_chat_app("applications/DeepSpeed-Chat"),
             "applications/DeepSpeed-VisualChat/training/main.py": TRAIN,
             "applications/DeepSpeed-VisualChat/training/training_scripts/run_7b.sh": "deepspeed ../training/main.py --lr 1e-3\n",
             "compression/cifar/main.py": "import torch\n", "benchmarks/communication/main.py": "import torch\n",
             "training/cifar/main.py": "import torch\nloss.backward()\n"}
    ff = {p: extract_file(p, t.encode()) for p, t in files.items()}
    for _ in range(3):
        roles = classify_roles(dict(sorted(ff.items(), key=lambda kv: hash(kv[0]))))
        assert roles.role("applications/DeepSpeed-Chat/training/step1_supervised_finetuning/main.py") == "training"
        assert roles.role("compression/cifar/main.py") != "training" and roles.role("training/cifar/main.py") != "training"


def test_a_packaged_application_of_the_repository_is_not_vendored():
    files = {**_chat_app("applications/DeepSpeed-Chat"), **BASE}
    roles = classify_roles({p: extract_file(p, t.encode()) for p, t in files.items()})
    assert roles.role("applications/DeepSpeed-Chat/training/step1_supervised_finetuning/main.py") == "training"
    assert roles.role("applications/DeepSpeed-Chat/dschat/utils/data_utils.py") == "training"
    # control: a bundled library (its distribution is AutoGPTQ's) stays vendored, launch scripts or not
    lib = {**VENDORED, **BASE, "auto_gptq/examples/run.sh": "deepspeed examples/peft/peft_lora_clm_instruction_tuning.py\n"}
    roles = classify_roles({p: extract_file(p, t.encode()) for p, t in lib.items()})
    assert roles.role("auto_gptq/examples/peft/peft_lora_clm_instruction_tuning.py") == "vendored"
