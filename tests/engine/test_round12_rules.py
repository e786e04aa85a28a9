"""Rules of round 12 of issue #9 (realhf): each test fails on the rule before it."""

from __future__ import annotations

from .claims import audit as _audit


def test_a_keyword_that_reads_a_field_does_not_resolve_to_locals_of_another_files_function():
    # ``pipeline_parallel_size=self.n_nodes`` reads the config's field ``n_nodes: int = 1``; ``n_nodes = 8`` inside a cost
    # model's ``example()`` in another file is a local of that function (it was taken as "pipeline parallel size 8")
    files = {
        "pkg/experiments/common.py": (
            "import dataclasses\n\nfrom pkg.model import ParallelismConfig\n\n\n@dataclasses.dataclass\nclass ExperimentConfig:\n"
            "    n_nodes: int = 1\n\n    def allocation(self):\n"
            "        return ParallelismConfig(data_parallel_size=2, pipeline_parallel_size=self.n_nodes)\n"),
        "pkg/model.py": "import dataclasses\n\n\n@dataclasses.dataclass\nclass ParallelismConfig:\n    pipeline_parallel_size: int = 1\n",
        "pkg/estimate.py": "def example(size):\n    if size == 70:\n        n_nodes = 8\n    else:\n        n_nodes = 1\n    return n_nodes\n",
        "pkg/train.py": "def step(model, batch, optim):\n    model(batch).loss.backward()\n    optim.step()\n",
    }
    a = _audit(files)
    values = {(s.path, s.value) for s in a.facts.effective("pipeline_parallel_size")}
    assert ("pkg/estimate.py", 8) not in values
    assert a.result("A5").status.value == "unused"


def test_a_local_of_the_reading_files_own_function_still_resolves():
    files = {
        "pkg/launch.py": (
            "from pkg.model import ParallelismConfig\n\n\ndef layout():\n    pp = 4\n"
            "    return ParallelismConfig(pipeline_parallel_size=pp)\n"),
        "pkg/model.py": "import dataclasses\n\n\n@dataclasses.dataclass\nclass ParallelismConfig:\n    pipeline_parallel_size: int = 1\n",
        "pkg/train.py": "def step(model, batch, optim):\n    model(batch).loss.backward()\n    optim.step()\n",
    }
    a = _audit(files)
    assert ("pkg/launch.py", 4) in {(s.path, s.value) for s in a.facts.effective("pipeline_parallel_size")}
    assert a.result("A5").status.value == "used"


def _graph_files(default: str) -> dict[str, str]:
    return {
        "pkg/api.py": ("import dataclasses\n\n\n@dataclasses.dataclass\nclass GenerationHyperparameters:\n"
                       f"    use_cuda_graph: bool = {default}\n"),
        "pkg/cuda_graph.py": "import torch\n\n\ndef capture_func(func, buf):\n    graph = torch.cuda.CUDAGraph()\n    return graph\n",
        "pkg/generate.py": ("from pkg import cuda_graph\n\n\ndef maybe_capture(model, x):\n    return cuda_graph.capture_func(model, x)\n\n\n"
                            "def generate(model, gconfig, x):\n    if gconfig.use_cuda_graph:\n        maybe_capture(model, x)\n"),
        "pkg/train.py": "def step(model, batch, optim):\n    model(batch).loss.backward()\n    optim.step()\n",
    }


def test_a_graph_capture_helper_reached_only_behind_an_off_switch_is_not_use():
    r = _audit(_graph_files("False")).result("D4")
    assert r.status.value == "unused"
    assert "use_cuda_graph = False at pkg/api.py:6" in (r.detail or "")


def test_the_same_helper_with_the_switch_on_by_default_is_use():
    assert _audit(_graph_files("True")).result("D4").status.value == "used"


FACTORY = (
    "import torch\n\n\ndef PackedDataLoader(dataset, *args, **kwargs):\n"
    "    return torch.utils.data.DataLoader(dataset, *args, batch_size=512, shuffle=True, **kwargs)\n\n\n"
    "def make_dataloader(cfg, dataset):\n    return PackedDataLoader(dataset, **cfg.args)\n"
)
STEP = "def step(model, loader, optim):\n    for batch in loader:\n        model(batch).loss.backward()\n        optim.step()\n"


def test_a_kwargs_loader_factory_gets_pytorchs_default_when_nothing_names_num_workers():
    a = _audit({"pkg/data_api.py": FACTORY, "pkg/train.py": STEP})
    assert a.result("F1").status.value == "unused"
    assert a.result("F2").status.value == "unused"


def test_a_config_that_names_num_workers_keeps_the_factory_unknown():
    cfg = "loader:\n  type: packed\n  args:\n    num_workers: 8\n"
    a = _audit({"pkg/data_api.py": FACTORY, "pkg/train.py": STEP, "configs/run.yaml": cfg})
    assert a.result("F1").status.value != "unused"


def test_weights_streamed_on_a_side_stream_in_a_forward_are_no_batch_prefetch():
    model = ("import torch\n\n\nclass M(torch.nn.Module):\n    def __overlapped_load_forward(self, x):\n"
             "        stream = torch.cuda.Stream()\n        with torch.cuda.stream(stream):\n"
             "            for k, v in self.layer.named_parameters():\n"
             "                v.data.copy_(self._offload_buffer[k], non_blocking=True)\n        return self.layer(x)\n")
    r = _audit({"pkg/model_api.py": model, "pkg/train.py": STEP}).result("F11")
    assert r.status.value == "unused"


def test_a_side_stream_batch_prefetcher_is_still_use():
    pre = ("import torch\n\n\nclass DataPrefetcher:\n    def __init__(self, loader):\n        self.loader = iter(loader)\n"
           "        self.stream = torch.cuda.Stream()\n\n    def preload(self):\n        batch = next(self.loader)\n"
           "        with torch.cuda.stream(self.stream):\n            self.batch = batch.cuda(non_blocking=True)\n")
    assert _audit({"pkg/data/prefetch.py": pre, "pkg/train.py": STEP}).result("F11").status.value == "used"


CTL_FIELDS = ("import dataclasses\nfrom typing import Optional\n\n\n@dataclasses.dataclass\nclass Control:\n"
              "    {p}_freq_epochs: Optional[int] = None\n    {p}_freq_steps: Optional[int] = None\n")
CTL = ("from pkg import timeutil\n\n\nclass Master:\n    def setup(self, cfg):\n"
       "        self.__{p}_ctl = timeutil.EpochStepTimeFreqCtl(freq_epoch=cfg.ctl.{p}_freq_epochs, freq_step=cfg.ctl.{p}_freq_steps)\n")


def test_a_save_control_whose_frequencies_all_default_to_none_saves_no_periodic_checkpoint():
    a = _audit({"pkg/api.py": CTL_FIELDS.format(p="save"), "pkg/master.py": CTL.format(p="save"), "pkg/train.py": STEP})
    r = a.result("I3")
    assert r.status.value == "used"
    assert "no periodic checkpoint: save_freq_epochs is None" in (r.detail or "")


def test_an_eval_control_says_nothing_about_checkpoints():
    a = _audit({"pkg/api.py": CTL_FIELDS.format(p="eval"), "pkg/master.py": CTL.format(p="eval"), "pkg/train.py": STEP})
    assert a.result("I3").status.value == "n/a"


WANDB_OFF = "import dataclasses\n\n\n@dataclasses.dataclass\nclass Config:\n    wandb_mode: str = 'disabled'\n"


def test_a_disabled_tracker_and_no_tracker_code_reports_nothing():
    r = _audit({"pkg/train.py": STEP, "pkg/config.py": WANDB_OFF}).result("I5")
    assert r.status.value == "used"
    assert "Config.wandb_mode is 'disabled' (pkg/config.py:6)" in (r.detail or "")


def test_no_tracker_and_no_setting_stays_not_judged():
    assert _audit({"pkg/train.py": STEP}).result("I5").status.value == "n/a"


def test_an_imported_tracker_is_not_read_as_none():
    helper = "import wandb\n\n\ndef report(metrics):\n    wandb.log(metrics)\n"
    r = _audit({"pkg/train.py": STEP, "pkg/config.py": WANDB_OFF, "pkg/track.py": helper}).result("I5")
    assert "nothing in the project imports or creates a tracker" not in (r.detail or "")
