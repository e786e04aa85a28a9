"""Python config registries (checks/rules/_registry.py): recipes written as functions, their inheritance and debug recipes."""

from __future__ import annotations

import re

from checks.engine import build_facts
from checks.rules._registry import debug_recipe, recipe_of, recipes, recipes_calling, recipes_on, total_recipes

REGISTRY = (
    "from torchtitan.config import CompileConfig, ParallelismConfig, TrainingConfig\n"
    "from torchtitan.components.quantization import Float8LinearConverter\n"
    "from torchtitan.trainer import Trainer\n\n"
    "def _dataloader(name):\n    return HFDataLoader.Config(dataset=name)\n\n"
    "def llama3_debugmodel():\n    return Trainer.Config(training=TrainingConfig(seq_len=512, steps=10),\n"
    "                          parallelism=ParallelismConfig(pipeline_parallel_degree=2))\n\n"
    "def llama3_8b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192))\n\n"
    "def llama3_405b():\n    return Trainer.Config(training=TrainingConfig(seq_len=8192),\n"
    "                          compile=CompileConfig(enable=True),\n"
    "                          converters=[Float8LinearConverter.Config()])\n\n"
    "def llama3_405b_long():\n    config = llama3_405b()\n    config.training = TrainingConfig(seq_len=131072)\n    return config\n"
)


def _facts(files: dict[str, str]):
    return build_facts((p, t.encode()) for p, t in files.items())


def test_recipe_functions_of_a_registry_file() -> None:
    f = _facts({"torchtitan/models/llama3/config_registry.py": REGISTRY})
    assert recipes(f) == {"torchtitan/models/llama3/config_registry.py": frozenset(
        {"llama3_debugmodel", "llama3_8b", "llama3_405b", "llama3_405b_long"})}  # the private helper is not a recipe
    assert total_recipes(f) == 4


def test_a_module_with_two_config_builders_or_a_utils_file_is_not_a_registry() -> None:
    two = "def a():\n    return Trainer.Config()\n\ndef b():\n    return Trainer.Config()\n"
    f = _facts({"pkg/config_registry.py": two, "pkg/config_utils.py": REGISTRY})
    assert recipes(f) == {} and total_recipes(f) == 0


def test_debug_recipe_and_inheritance() -> None:
    f = _facts({"torchtitan/models/llama3/config_registry.py": REGISTRY})
    pp = [s for s in f.settings("pipeline_parallel_degree") if s.source == "call"]
    assert len(pp) == 1 and recipe_of(f, pp[0])[1] == "llama3_debugmodel" and debug_recipe(f, pp[0])
    on, cited = recipes_on(f, [s for s in f.settings("enable") if s.source == "call"])
    assert [fn for _, fn in on] == ["llama3_405b", "llama3_405b_long"]  # the long-context recipe starts from 405B
    assert [c.line for c in cited] == [17]  # the keyword's own line
    fp8, calls = recipes_calling(f, re.compile(r"(?i)float8"))
    assert [fn for _, fn in fp8] == ["llama3_405b", "llama3_405b_long"] and len(calls) == 1


def test_settings_outside_a_registry_have_no_recipe() -> None:
    f = _facts({"train.py": "model = ParallelismConfig(pipeline_parallel_degree=2)\n"})
    s = [x for x in f.settings("pipeline_parallel_degree") if x.source == "call"]
    assert s and recipe_of(f, s[0]) is None and not debug_recipe(f, s[0])
