"""Round 11 (held-out NeMo AutoModel): branches a library runs only when a run's config names a key.

``if recipe_cfg.get("draft_gradient_checkpointing", False):`` and ``if "offload_policy" in strategy_kwargs:`` are off when
nothing in the repository sets the key; ``activation_checkpointing=setup.activation_checkpointing`` hands the same switch on
from an object that is not a recognised config holder, so its state is the switch's own (a dataclass default False)."""

from __future__ import annotations

from checks.engine import build_facts
from checks.rules._helpers import _reads_same_name, flag_state, guard_off


def _facts(files: dict[str, str]):
    return build_facts((p, t.encode()) for p, t in files.items())


def _guarded(files: dict[str, str], callee: str):
    f = _facts(files)
    [call] = f.calls(callee)
    return f, call


def test_same_name_read_from_any_holder_is_a_hand_on():
    assert _reads_same_name("mesh_context.activation_checkpointing", "activation_checkpointing")
    assert _reads_same_name('parsed["activation_checkpointing"]', "activation_checkpointing")
    assert _reads_same_name('getattr(config, "activation_checkpointing", False)', "activation_checkpointing")
    assert not _reads_same_name("mesh_context.activation_checkpointing_scope", "activation_checkpointing")
    assert not _reads_same_name("build(activation_checkpointing)", "activation_checkpointing")


_SETUP = ("from dataclasses import dataclass\n\n\n@dataclass\nclass DistributedSetup:\n    activation_checkpointing: bool = False\n\n\n"
          "def mesh_for(setup):\n    return MeshContext(activation_checkpointing=setup.activation_checkpointing)\n")


def test_a_handed_on_switch_takes_its_dataclass_default():
    assert flag_state(_facts({"pkg/setup.py": _SETUP}), "activation_checkpointing") is False


def test_a_handed_on_switch_follows_a_recipe_that_turns_it_on():
    f = _facts({"pkg/setup.py": _SETUP, "examples/run.yaml": "distributed:\n  activation_checkpointing: true\n"})
    assert flag_state(f, "activation_checkpointing") is not False


_GET = ("class Recipe:\n    def setup(self, recipe_cfg):\n        if recipe_cfg.get(\"draft_gradient_checkpointing\", False):\n"
        "            self.draft.gradient_checkpointing_enable()\n")


def test_a_get_with_a_false_default_of_a_key_nothing_sets_is_off():
    f, call = _guarded({"pkg/recipe.py": _GET}, "gradient_checkpointing_enable")
    assert guard_off(f, call)


def test_a_get_of_a_key_a_recipe_sets_is_not_off():
    f, call = _guarded({"pkg/recipe.py": _GET, "examples/run.yaml": "recipe_args:\n  draft_gradient_checkpointing: true\n"},
                       "gradient_checkpointing_enable")
    assert not guard_off(f, call)


def test_a_get_with_a_true_default_is_not_off():
    f, call = _guarded({"pkg/recipe.py": _GET.replace('", False)', '", True)')}, "gradient_checkpointing_enable")
    assert not guard_off(f, call)


_CFG = ("from dataclasses import dataclass\n\n\n@dataclass\nclass FSDP2Config:\n    offload_policy: object = None\n")
_PARSE = ("from torch.distributed.fsdp import CPUOffloadPolicy\n\n\ndef parse(cfg):\n    kw = dict(cfg)\n"
          "    if \"offload_policy\" in kw:\n        kw[\"offload_policy\"] = CPUOffloadPolicy(**kw[\"offload_policy\"])\n    return kw\n")


def test_membership_of_a_key_that_defaults_to_none_is_off():
    f, call = _guarded({"pkg/config.py": _CFG, "pkg/parse.py": _PARSE}, "CPUOffloadPolicy")
    assert guard_off(f, call)


def test_membership_of_a_key_a_recipe_names_is_not_off():
    files = {"pkg/config.py": _CFG, "pkg/parse.py": _PARSE, "examples/run.yaml": "distributed:\n  offload_policy:\n    pin_memory: true\n"}
    f, call = _guarded(files, "CPUOffloadPolicy")
    assert not guard_off(f, call)


def test_membership_in_a_calls_result_is_not_a_config_key():
    # ms-swift: ``if 'task' in inspect.signature(PoolingParams).parameters:`` asks about an API, not a run's config
    code = ("import inspect\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass Args:\n    task: str = None\n\n\n"
            "def params(PoolingParams):\n    if 'task' in inspect.signature(PoolingParams).parameters:\n"
            "        return PoolingParams(task='embed')\n    return PoolingParams()\n")
    f = _facts({"pkg/engine.py": code})
    call = next(c for c in f.calls("PoolingParams") if c.kwargs)
    assert not guard_off(f, call)


def test_membership_of_a_key_without_a_code_default_is_unknown():
    # nothing says the key is a config field that defaults off: a plain dict lookup says nothing
    f, call = _guarded({"pkg/parse.py": _PARSE}, "CPUOffloadPolicy")
    assert not guard_off(f, call)
