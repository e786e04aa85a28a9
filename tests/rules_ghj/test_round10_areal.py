"""Round 10 (held-out AReaL): settings read from config dataclasses whose names or owners say what they are for."""

from __future__ import annotations

from tests.rules_ghj.ghj_util import audit

_TRACER = ("from dataclasses import dataclass, field\n\n@dataclass\nclass PerfTracerConfig:\n    enabled: bool = False\n"
           "    save_interval: int = field(default=1, metadata={'help': 'Flush trace events to disk every N calls.'})\n")


def test_a_tracer_flush_interval_is_not_a_checkpoint_interval() -> None:
    result, _ = audit({"pkg/api/cli_args.py": _TRACER}, "I3")
    assert result.status.value == "n/a"
    assert "every step" not in (result.detail or "")


def test_a_checkpoint_config_save_interval_still_counts() -> None:
    files = {"pkg/api/cli_args.py": _TRACER + "\n\n@dataclass\nclass CheckpointConfig:\n    save_interval: int = 5\n"}
    result, _ = audit(files, "I3")
    assert result.status.value == "unused"
    assert [(e.path, e.line) for e in result.evidence] == [("pkg/api/cli_args.py", 11)]


_STORE = ("import os\n\nclass FileRecordStore:\n    def get(self, name):\n"
          "        with open(os.path.join(self.root, name)) as f:\n            return f.read().strip()\n")
_RDATASET = ("from torch.utils.data import Dataset\n\nclass _Buffer:\n    def get(self, idx):\n        return self._cache.pop(idx)\n\n"
             "class RemoteDataset(Dataset):\n    def __init__(self):\n        self._buffer = _Buffer()\n"
             "    def __getitem__(self, idx):\n        return self._buffer.get(idx)\n")


def test_a_method_call_to_the_files_own_get_does_not_reach_another_modules_get() -> None:
    result, _ = audit({"pkg/store.py": _STORE, "pkg/rdataset.py": _RDATASET}, "F4")
    assert "one file at a time" not in (result.detail or "")
    assert all(e.path != "pkg/store.py" for e in result.evidence)


def test_a_get_defined_elsewhere_is_still_followed_from_getitem() -> None:
    ds = ("from torch.utils.data import Dataset\nfrom pkg.store import FileRecordStore\n\nclass RecordDataset(Dataset):\n"
          "    def __getitem__(self, idx):\n        return self.store.get(self.names[idx])\n")
    result, _ = audit({"pkg/store.py": _STORE, "pkg/ds.py": ds}, "F4")
    assert result.status.value == "unused" and "one file at a time" in (result.detail or "")


def test_pinned_optimizer_states_are_not_pinned_batches() -> None:
    opt = ("class PerLayerOptimWrapper:\n    def _pin_states(self):\n        for p in self.params:\n"
           "            state = self.optimizer.state[p]\n            state['exp_avg'] = state['exp_avg'].pin_memory()\n")
    loader = "from torch.utils.data import DataLoader\nloader = DataLoader(dataset, batch_size=8, num_workers=4)\n"
    result, _ = audit({"pkg/engine/optimizer.py": opt, "train.py": loader}, "F3")
    assert result.status.value == "unused"


def test_peft_type_beside_a_switched_off_use_lora_is_not_lora() -> None:
    cfg = ("from dataclasses import dataclass\n\n@dataclass\nclass EngineConfig:\n    use_lora: bool = False\n"
           "    peft_type: str = 'lora'\n")
    engine = ("from peft import LoraConfig, get_peft_model\n\nclass Engine:\n    def initialize(self):\n"
              "        if self.config.use_lora:\n            self.model = get_peft_model(self.model, LoraConfig(r=8))\n")
    assert audit({"pkg/cli_args.py": cfg, "pkg/engine.py": engine}, "G4")[0].status.value == "unused"
    on = cfg.replace("use_lora: bool = False", "use_lora: bool = True")
    assert audit({"pkg/cli_args.py": on, "pkg/engine.py": engine}, "G4")[0].status.value == "used"


def test_a_recompute_granularity_default_is_a_mode_while_the_switch_is_off() -> None:
    cfg = ("from dataclasses import dataclass\n\n@dataclass\nclass MegatronConfig:\n    recompute_granularity: str | None = 'full'\n\n"
           "@dataclass\nclass EngineConfig:\n    gradient_checkpointing: bool = False\n")
    assert audit({"pkg/cli_args.py": cfg}, "C3")[0].status.value == "unused"
    launch = "torchrun --nproc_per_node 8 pretrain_gpt.py --recompute-granularity full --recompute-method uniform\n"
    assert audit({"pkg/cli_args.py": cfg, "run.sh": launch}, "C3")[0].status.value == "used"


def test_num_workers_of_a_config_argument_named_after_its_class() -> None:
    cfg = ("from dataclasses import dataclass, field\n\n@dataclass\nclass _DatasetConfig:\n"
           "    num_workers: int = field(default=0)\n\n@dataclass\nclass ServiceConfig:\n    dataloader_num_workers: int = 4\n")
    dl = ("from torch.utils.data import DataLoader\n\ndef create_dataloader(dataset, dataset_config):\n"
          "    return DataLoader(dataset, batch_size=8, num_workers=dataset_config.num_workers)\n")
    result, _ = audit({"pkg/cli_args.py": cfg, "pkg/dataloader.py": dl}, "F1")
    assert result.status.value == "unused"
    assert ("pkg/cli_args.py", 5) in {(e.path, e.line) for e in result.evidence}
    assert audit({"pkg/cli_args.py": cfg, "pkg/dataloader.py": dl}, "F2")[0].status.value == "unused"
