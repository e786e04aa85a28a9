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


_SCHED_CFG = ("from dataclasses import dataclass\n\n@dataclass\nclass OptimizerConfig:\n    lr_scheduler_type: str = 'constant'\n"
              "    warmup_steps_proportion: float = 0.001\n")
_SCHED_UTILS = ("import math\nfrom torch.optim.lr_scheduler import LambdaLR\n\n"
                "def get_cosine_schedule_with_warmup(optimizer, warmup, total):\n    def lr_lambda(step):\n"
                "        return 0.5 * (1.0 + math.cos(math.pi * step / total))\n    return LambdaLR(optimizer, lr_lambda)\n")
_SCHED_ENGINE = ("from transformers import get_constant_schedule_with_warmup\nfrom pkg.utils import get_cosine_schedule_with_warmup\n\n"
                 "class Engine:\n    def build(self, cfg, total):\n        warmup = int(cfg.warmup_steps_proportion * total)\n"
                 "        if cfg.lr_scheduler_type == 'cosine':\n"
                 "            self.sched = get_cosine_schedule_with_warmup(self.optimizer, warmup, total)\n"
                 "        elif cfg.lr_scheduler_type == 'constant':\n"
                 "            self.sched = get_constant_schedule_with_warmup(self.optimizer, warmup)\n")


def test_a_schedule_in_a_branch_the_default_name_does_not_select_is_an_alternative() -> None:
    files = {"pkg/cli_args.py": _SCHED_CFG, "pkg/utils.py": _SCHED_UTILS, "pkg/engine.py": _SCHED_ENGINE}
    result, _ = audit(files, "G1")
    assert result.status.value == "partial" and "without a decay" in result.detail
    cosine = {**files, "pkg/cli_args.py": _SCHED_CFG.replace("'constant'", "'cosine'")}
    assert audit(cosine, "G1")[0].status.value == "used"


def test_a_state_dict_gathered_to_cpu_is_not_offload() -> None:
    ckpt = ("from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict\n\n"
            "def state_for_save(model):\n    return get_model_state_dict(model, options=StateDictOptions(cpu_offload=True))\n")
    assert audit({"pkg/checkpoint.py": ckpt}, "C4")[0].status.value == "unused"
    fsdp = "from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel as FSDP\nmodel = FSDP(model, cpu_offload=CPUOffload(offload_params=True))\n"
    assert audit({"pkg/checkpoint.py": ckpt, "train.py": fsdp}, "C4")[0].status.value == "used"


def test_a_hydra_override_of_the_node_count_documents_multi_node() -> None:
    readme = ("```bash\npython3 examples/math/gsm8k_rl.py --config examples/math/gsm8k_grpo.yaml \\\n"
              "  cluster.n_nodes=2 cluster.n_gpus_per_node=8 scheduler.type=ray\n```\n")
    result, _ = audit({"README.md": readme, "pkg/trainer.py": "import torch\nloss.backward()\n"}, "E1")
    assert result.status.value == "unused" and "README.md:3" in result.detail
    one = readme.replace("cluster.n_nodes=2", "cluster.n_nodes=1")
    assert audit({"README.md": one, "pkg/trainer.py": "import torch\nloss.backward()\n"}, "E1")[0].status.value == "n/a"


def test_the_projects_own_unpadding_helper_is_padding_removal() -> None:
    data = ("import torch\n\ndef pack_tensor_dict(data):\n    lens = data['attention_mask'].sum(-1)\n"
            "    cu_seqlens = torch.cumsum(lens, dim=0, dtype=torch.int32)\n    return cu_seqlens\n")
    engine = "from pkg.data import pack_tensor_dict\n\ndef step(model, mb):\n    return model(**pack_tensor_dict(mb))\n"
    result, _ = audit({"pkg/data.py": data, "pkg/engine.py": engine}, "F7")
    assert result.status.value == "partial" and ("pkg/data.py", 5) in {(e.path, e.line) for e in result.evidence}
    assert audit({"pkg/data.py": data}, "F7")[0].status.value == "unused"  # never called: not in effect


def test_default_is_not_a_model_name() -> None:
    cfg = "from dataclasses import dataclass\n\n@dataclass\nclass Cfg:\n    model_name: str = 'default'\n    lr: float = 1e-5\n"
    _, project = audit({"pkg/cfg.py": cfg, "train.py": "import torch\nloss.backward()\n"}, "G1")
    assert "default" not in project.model_names


def test_operations_on_a_tokenizer_object_are_not_tokenization() -> None:
    from checks.engine import build_facts
    from checks.rules.f_data import _tokenizer_calls

    ser = ("class SerializedTokenizer:\n    @classmethod\n    def from_tokenizer(cls, tokenizer):\n"
           "        blob = cls._archive_tokenizer(tokenizer)\n        return blob\n\n"
           "def serialize_value(value):\n    if SerializedTokenizer._is_tokenizer(value):\n"
           "        return SerializedTokenizer.from_tokenizer(value)\n    return value\n\n"
           "def process(sample, tokenizer):\n    return tokenizer.tokenize(sample['text'])\n")
    facts = build_facts([("pkg/rpc/serialization.py", ser.encode())])
    assert [c.short for c in _tokenizer_calls(facts)] == ["tokenize"]


def _rl_files() -> dict[str, str]:
    from checks.rules.i_infra import _PPO_FILES

    return dict(_PPO_FILES)


def test_an_rl_update_loop_logs_every_step_through_a_stats_object_in_another_file() -> None:
    result, _ = audit(_rl_files(), "I4")
    assert result.status.value == "unused"
    assert ("pkg/utils/stats_logger.py", 7) in {(e.path, e.line) for e in result.evidence}


def test_a_guarded_commit_is_not_every_step() -> None:
    files = _rl_files()
    files["pkg/trainer/rl_trainer.py"] = files["pkg/trainer/rl_trainer.py"].replace(
        "            self._export_and_commit_stats(global_step)\n",
        "            if global_step % 100 == 0:\n                self._export_and_commit_stats(global_step)\n")
    assert audit(files, "I4")[0].status.value != "unused"


def test_a_self_paced_saver_and_a_tracer_flush_are_not_per_step_checkpoints() -> None:
    files = _rl_files()
    files["pkg/engine.py"] = "import torch\n\nclass Engine:\n    def save(self, path):\n        torch.save(self.model.state_dict(), path)\n"
    files["pkg/trainer/rl_trainer.py"] = files["pkg/trainer/rl_trainer.py"].replace(
        "            self.actor.ppo_update(batch)\n",
        "            loss = self.model(batch).loss\n            loss.backward()\n            self.optimizer.step()\n"
        "            perf_tracer.save(step=global_step)\n")
    result, _ = audit(files, "I3")
    assert result.status.value == "n/a" and "every step" not in (result.detail or "")
