"""Confining findings to the run: a library of many model and recipe families whose README quickstart builds one run.

The fixture is megatron-bridge's shape (``models/<family>/``, ``recipes/<family>/``, a README quickstart calling
``llama32_1b_pretrain_config()`` and ``pretrain(cfg, forward_step)``): the other families' code is context (role
``other``), never the run's setting; without a documented run nothing moves.
"""

from __future__ import annotations

from checks.engine import audit_files
from checks.facts import extract_file
from checks.model import Status
from checks.roles import OTHER, OUT_OF_SCOPE, classify_roles
from checks.rules.c_memory import model_zoo_library


def _roles(files: dict[str, str]):
    return classify_roles({p: extract_file(p, t.encode()) for p, t in files.items()})


def _audit(files: dict[str, str]):
    return audit_files((p, t.encode()) for p, t in files.items())


def test_other_families_are_context_when_the_readme_runs_one_recipe() -> None:
    roles = _roles(model_zoo_library())
    assert OTHER in OUT_OF_SCOPE
    for p in ("mylib/models/flux/flux_model.py", "mylib/models/qwen_omni/thinker_model.py", "mylib/recipes/flux/flux.py",
              "mylib/recipes/gemma/gemma2.py", "mylib/models/gemma/gemma_provider.py"):
        assert roles.role(p) == OTHER, p
        assert "llama" in roles.why[p] and "README.md" in roles.why[p]
    # the run's family and the code outside the family folders stay in scope
    for p in ("mylib/recipes/llama/llama3.py", "mylib/models/llama/llama_provider.py", "mylib/models/gpt_provider.py",
              "mylib/training/pretrain.py"):
        assert roles.role(p) not in OUT_OF_SCOPE, p


def test_nothing_moves_without_a_documented_run() -> None:
    roles = _roles(model_zoo_library(readme=False))
    assert OTHER not in roles.by_path.values()


def test_a_family_file_the_run_imports_stays() -> None:
    # the run's recipe uses a helper of another family's folder: the run may use it, so it is not another run's
    files = model_zoo_library()
    files["mylib/recipes/llama/llama3.py"] = "from mylib.models.gemma.gemma_provider import Gemma2ModelProvider\n" + \
        files["mylib/recipes/llama/llama3.py"]
    roles = _roles(files)
    assert roles.role("mylib/models/gemma/gemma_provider.py") not in OUT_OF_SCOPE
    assert roles.role("mylib/models/flux/flux_model.py") == OTHER


def test_a_reexport_through_a_package_init_counts_only_for_the_name_it_binds() -> None:
    # ``from mylib.models import AutoBridge`` reaches models/conversion/auto_bridge.py through models/__init__.py, which
    # also re-exports every family: the bridge stays, FLUX does not
    files = {**model_zoo_library(),
             "mylib/models/__init__.py": ("from mylib.models.conversion.auto_bridge import AutoBridge\n"
                                         "from mylib.models.flux.flux_model import Flux\n"),
             "mylib/models/conversion/auto_bridge.py": "class AutoBridge:\n    def to_megatron_provider(self):\n        return self.provider()\n"}
    files["mylib/recipes/llama/llama3.py"] = "from mylib.models import AutoBridge\n" + files["mylib/recipes/llama/llama3.py"]
    roles = _roles(files)
    assert roles.role("mylib/models/conversion/auto_bridge.py") not in OUT_OF_SCOPE
    assert roles.role("mylib/models/flux/flux_model.py") == OTHER


def test_other_models_practices_are_context_not_status() -> None:
    lib = _audit(model_zoo_library(readme=False))
    run = _audit(model_zoo_library())
    by_lib = {r.id: r for r in lib.results}
    by_run = {r.id: r for r in run.results}
    # the previous rule read FLUX's FP8 context and Qwen-Omni's checkpointing call as the run's
    assert by_lib["C2"].status is Status.USED and by_lib["C3"].status is Status.USED
    assert by_run["C2"].status is not Status.USED and by_run["C3"].status is not Status.USED
    # ... and shows them as context, with the role that says why
    ctx = {(e.path, e.role) for e in by_run["C2"].context}
    assert ("mylib/models/flux/flux_model.py", OTHER) in ctx
    assert all(e.path != "mylib/models/flux/flux_model.py" for e in by_run["C2"].evidence)


def test_te_layer_spec_counts_only_where_training_sets_it() -> None:
    recipe = {
        "mylib/recipes/llama3.py": (
            "from mylib.training.config import ConfigContainer\n\n\ndef llama32_1b_pretrain_config():\n"
            "    cfg = ConfigContainer()\n    cfg.model.transformer_impl = \"transformer_engine\"\n    return cfg\n"),
        "mylib/training/pretrain.py": "def pretrain(config, step):\n    for b in config.loader():\n        step(b).backward()\n",
    }
    d1 = {r.id: r for r in _audit(recipe).results}["D1"]
    assert d1.status is Status.USED and "transformer-engine" in (d1.detail or "")
    # LLaMA-Factory's scripts/megatron_merge.py hard-codes TE to convert a checkpoint: not the training attention
    merge = {
        "scripts/megatron_merge.py": (
            "from mcore_adapter.models import AutoConfig\n\n\ndef convert(path):\n"
            "    return AutoConfig.from_pretrained(path, transformer_impl=\"transformer_engine\")\n"),
        "src/train.py": (
            "from transformers import AutoModelForCausalLM, Trainer\n\n"
            "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-7B')\nTrainer(model=model).train()\n"),
        "requirements.txt": "transformers>=4.45\n",
    }
    d1 = {r.id: r for r in _audit(merge).results}["D1"]
    assert d1.status is Status.PARTIAL and "transformer-engine" not in (d1.detail or "")
