"""Components of a config-driven registry (round 8 of issue #9, modalities): a factory registered as
``ComponentEntity("model", "compiled", maybe_model_list(ModelFactory.get_compiled_model), CompiledModelConfig)`` runs
only when a YAML names ``variant_key: compiled``; with no such config, the code it reaches is not in effect."""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status

REGISTRY = (
    "from pkg.models.model_factory import ModelFactory\n\n"
    "COMPONENTS = [\n"
    '    ComponentEntity("model", "gpt2", GPT2ModelFactory.get_gpt2_model, GPT2LLMConfig),\n'
    '    ComponentEntity("model", "fsdp2_wrapped", ModelFactory.get_fsdp2_wrapped_model, FSDP2WrappedModelConfig),\n'
    '    ComponentEntity("model", "compiled", maybe_model_list(ModelFactory.get_compiled_model), CompiledModelConfig),\n'
    "    ComponentEntity(\n"
    '        "model",\n'
    '        "activation_checkpointed",\n'
    "        maybe_model_list(ModelFactory.get_activation_checkpointed_model_),\n"
    "        ActivationCheckpointedModelConfig,\n"
    "    ),\n"
    '    ComponentEntity("optimizer", "adam_w", OptimizerFactory.get_adam_w, AdamWOptimizerConfig),\n'
    "]\n"
)
FACTORY = (
    "import torch\n"
    "from pkg.training.activation_checkpointing import ActivationCheckpointing\n\n\n"
    "class ModelFactory:\n"
    "    @staticmethod\n"
    "    def get_compiled_model(model, block_names, fullgraph):\n"
    "        for _, module in model.named_modules():\n"
    "            if type(module).__name__ in block_names:\n"
    "                compiled = torch.compile(module, fullgraph=fullgraph)\n"
    "        return model\n\n"
    "    @staticmethod\n"
    "    def get_activation_checkpointed_model_(ac_variant, layers_fqn, model):\n"
    "        ActivationCheckpointing.apply_activation_checkpointing_(model=model, layers_fqn=layers_fqn, ac_variant=ac_variant)\n"
    "        return model\n"
)
# the wrapper is picked by reference (``fn = Cls._apply_full_ac``), so no call names it: its module decides
AC_MODULE = (
    "from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper as ptd_checkpoint_wrapper\n\n\n"
    "class ActivationCheckpointing:\n"
    "    @staticmethod\n"
    "    def apply_activation_checkpointing_(model, layers_fqn, ac_variant):\n"
    "        apply_ac_fun = ActivationCheckpointing._apply_full_ac\n"
    "        layers = model.get_submodule(layers_fqn)\n"
    "        for layer_id, block in layers.named_children():\n"
    "            layers.register_module(layer_id, apply_ac_fun(block))\n\n"
    "    @staticmethod\n"
    "    def _apply_full_ac(module):\n"
    "        return ptd_checkpoint_wrapper(module, preserve_rng_state=False)\n"
)
FILES = {
    "pkg/registry/components.py": REGISTRY,
    "pkg/models/model_factory.py": FACTORY,
    "pkg/training/activation_checkpointing.py": AC_MODULE,
}


def _statuses(files: dict[str, str]) -> dict[str, tuple[Status, str]]:
    audit = audit_files((p, t.encode()) for p, t in files.items())
    return {r.id: (r.status, r.detail) for r in audit.results}


def test_registered_components_no_config_selects_are_not_in_effect():
    got = _statuses(FILES)
    assert got["D2"] == (Status.UNUSED, "torch.compile is present only in a registered component that no config selects")
    assert got["C3"] == (Status.UNUSED, "activation checkpointing exists only as a registered component that no config selects")


def test_a_config_that_names_the_variant_puts_the_component_in_effect():
    files = dict(FILES)
    files["configs/pretrain.yaml"] = (
        "compiled_model:\n  component_key: model\n  variant_key: compiled\n"
        "checkpointed_model:\n  component_key: model\n  variant_key: activation_checkpointed\n"
    )
    got = _statuses(files)
    assert got["D2"][0] == Status.USED
    assert got["C3"][0] == Status.USED


def test_the_component_kind_alone_selects_nothing():
    # ``component_key: model`` names the kind every model entry shares, not the compile or checkpointing variant
    files = dict(FILES)
    files["configs/pretrain.yaml"] = "model_raw:\n  component_key: model\n  variant_key: gpt2\n"
    got = _statuses(files)
    assert got["D2"][0] == Status.UNUSED
    assert got["C3"][0] == Status.UNUSED


def test_a_helper_behind_a_flag_that_is_off_is_not_called_a_registered_component():
    # torchtune: compile_loss() runs only under ``if cfg.compile:`` with ``compile: False``: switched off, no registry involved
    files = {
        "recipes/full_finetune.py": (
            "from torchtune import training\n\n\nclass Recipe:\n    def setup(self, cfg):\n"
            "        if cfg.compile:\n            training.compile_loss(self._loss_fn)\n"),
        "torchtune/training/_compile.py": "import torch\n\n\ndef compile_loss(loss):\n    return torch.compile(loss)\n",
        "recipes/configs/llama3/8B_full.yaml": "compile: False\nbatch_size: 2\n",
    }
    status, detail = _statuses(files)["D2"]
    assert status == Status.UNUSED
    assert "registered component" not in detail
