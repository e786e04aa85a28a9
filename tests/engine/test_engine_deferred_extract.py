"""A cold parallel audit extracts the files out of scope by their path last, while the checks run (checks.deferred):
the report is the one a single-process audit makes, and the files the roles must read are read."""

from __future__ import annotations

import json
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from checks.deferred import Deferred, Pending
from checks.engine import AuditOptions, audit_path, defer_context
from checks.facts import extract_file
from checks.parallel import LOCAL_FIRST_BYTES, _extract_batch
from checks.roles import Roles, classify_roles
from reports.json_report import to_json

_MODULE = '''"""Layer {n} of the model."""
import torch
from torch import nn


class Block{n}(nn.Module):
    def __init__(self, hidden_size: int = 1024, heads: int = 16) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(hidden_size, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, 4 * hidden_size), nn.GELU(), nn.Linear(4 * hidden_size, hidden_size))
        self.norm1 = nn.LayerNorm(hidden_size)
        self.norm2 = nn.LayerNorm(hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))
'''

_TEST = '''import torch
from torch.utils.data import DataLoader, TensorDataset

from pkg.layers.block_{n} import Block{n}


def test_block_{n}_runs():
    loader = DataLoader(TensorDataset(torch.randn(8, 4, 1024)), batch_size=2, num_workers=4, pin_memory=True)
    block = torch.compile(Block{n}())
    for (x,) in loader:
        assert block(x).shape == x.shape
'''

_TRAIN = '''import torch
from torch.utils.data import DataLoader, TensorDataset

from pkg.layers.block_0 import Block0


def main():
    model = Block0().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    loader = DataLoader(TensorDataset(torch.randn(64, 16, 1024)), batch_size=8)
    for step, (x,) in enumerate(loader):
        loss = model(x.cuda()).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
'''

# a test-folder script that a shipped launch runs: on the training path, so the roles read it before the checks
_SMOKE = '''import torch

from pkg.layers.block_1 import Block1

model = Block1().cuda().to(torch.bfloat16)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for _ in range(10):
    loss = model(torch.randn(2, 16, 1024, device="cuda", dtype=torch.bfloat16)).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
'''


def _tree(root: Path, layers: int = 160) -> Path:
    """A repository over the size at which workers start: a package, a training script, a launch, and many tests."""
    for n in range(layers):
        p = root / "pkg" / "layers" / f"block_{n}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(_MODULE.format(n=n) * 16)
        t = root / "tests" / "unit" / f"test_block_{n}.py"
        t.parent.mkdir(parents=True, exist_ok=True)
        t.write_text(_TEST.format(n=n) * 11)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "layers" / "__init__.py").write_text("")
    (root / "train.py").write_text(_TRAIN)
    (root / "scripts").mkdir()
    (root / "scripts" / "smoke.sh").write_text("#!/bin/bash\nset -e\npython tests/smoke_train.py\ntorchrun --nproc_per_node 8 train.py\n")
    (root / "tests" / "smoke_train.py").write_text(_SMOKE)
    (root / "tests" / "test_configs.py").write_text("from mmengine import Config\n\ncfg = Config.fromfile('configs/base.py')\n")
    (root / "configs").mkdir()
    (root / "configs" / "base.py").write_text("lr = 1e-4\nbatch_size = 8\nmax_epochs = 3\nwarmup_ratio = 0.03\n")
    return root


def _report(root: Path, jobs: int) -> tuple[str, Any]:
    audit = audit_path(str(root), AuditOptions(jobs=jobs))
    return json.dumps(to_json(audit), indent=1, sort_keys=True), audit


def test_a_parallel_audit_defers_context_files_and_reports_the_same(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    assert sum(p.stat().st_size for p in root.rglob("*.py")) > LOCAL_FIRST_BYTES  # workers start
    one, _ = _report(root, 1)
    two, audit = _report(root, 2)
    assert two == one
    pending = [ff for ff in audit.context._files if isinstance(ff, Pending)]
    assert len(pending) >= 150  # the tests were deferred, and taken in for the context pass and the report
    assert not any(isinstance(ff, Pending) for ff in audit.facts.files.values())
    report = json.loads(two)
    roles = {f["path"]: f["role"] for f in report["files"]}
    assert roles["tests/smoke_train.py"] == "training"  # read alone, before the checks: a launch runs it
    assert roles["tests/unit/test_block_3.py"] == "test"
    # a config module a loader reads is a recipe of the run; the only loader call is in a deferred test, read alone
    assert roles["configs/base.py"] == "training"


def test_defer_context_takes_out_of_scope_python_only() -> None:
    kind = defer_context(("tests/e2e/**",))
    assert kind("tests/unit/test_x.py") == "python"
    assert kind(".github/scripts/notify.py") == "python"
    assert kind("benchmarks/bench_attn.py") == "python"
    assert kind("tests/e2e/run.py") is None  # a paths.training glob takes it in
    assert kind("tests/data/config.yaml") is None  # not Python
    assert kind("docs/conf.py") is None  # docs: their hints join the training path
    assert kind("third_party/apex/setup.py") is None  # vendored: the training path may import it
    assert kind("src/train.py") is None


def _files() -> list[tuple[str, bytes]]:
    return [(f"tests/test_{i}.py", (_TEST.format(n=i) * 40).encode()) for i in range(12)]


def _deferred(files: list[tuple[str, bytes]]) -> tuple[Deferred, list[Pending]]:
    d = Deferred(defer_context())
    d.bind(lambda p, b: extract_file(p, b, strings={}))
    return d, [d.add(p, b, "python") for p, b in files]


def test_deferred_facts_from_a_pool_are_the_facts_made_here() -> None:
    files = _files()
    d, stand_ins = _deferred(files)
    assert not stand_ins[0].lacks(b"DataLoader") and stand_ins[0].lacks(b"Config.fromfile")
    with ThreadPoolExecutor(1) as pool:
        d.start(pool, _extract_batch)
        got = [repr(s.load()) for s in stand_ins]
    assert got == [repr(extract_file(p, b)) for p, b in files]
    d.close()


def test_one_file_read_alone_is_the_same_as_its_batchs_copy() -> None:
    files = _files()
    d, stand_ins = _deferred(files)
    alone = stand_ins[5].alone()  # before the batches are started: made here
    assert stand_ins[5].kind == "python" and stand_ins[5].path == files[5][0]
    assert stand_ins[5].calls == alone.calls  # attributes are read from the facts
    d.start(None)
    assert stand_ins[5].load() is alone  # one object per file
    assert repr(stand_ins[6].load()) == repr(extract_file(*files[6]))


class _BrokenPool(Executor):
    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        fut.set_exception(BrokenProcessPool("a worker died"))
        return fut


def test_a_broken_pool_leaves_the_deferred_files_to_this_process() -> None:
    files = _files()
    d, stand_ins = _deferred(files)
    d.start(_BrokenPool(), _extract_batch)
    assert [repr(s.load()) for s in stand_ins] == [repr(extract_file(p, b)) for p, b in files]


def test_a_closed_deferred_still_answers() -> None:
    files = _files()
    d, stand_ins = _deferred(files)
    with ThreadPoolExecutor(1) as pool:
        d.start(pool, _extract_batch)
        d.close()  # an audit that ended early: what was not started is cancelled
        assert repr(stand_ins[-1].load()) == repr(extract_file(*files[-1]))


_ALT_DOC = "## Train\n\n```bash\ntorchrun --nproc_per_node=4 pkg/train/train_mem.py --bf16 True\n```\n"
_ALT_MEM = "from pkg.train.train import train\n\nif __name__ == '__main__':\n    train()\n"
_ALT_TRAIN = _TRAIN.replace("def main():", "def train():")
_ALT_LORA = ("from peft import LoraConfig, get_peft_model\nfrom pkg.train.xformers_patch import replace_attn\n"
             "from pkg.train.train import train\n\n\ndef main():\n    replace_attn()\n    train()\n")
_ALT_PATCH = "import xformers.ops\n\n\ndef replace_attn():\n    return xformers.ops.memory_efficient_attention\n"


def _alternatives(root: Path, test_imports_patch: bool) -> Path:
    """FastChat's shape beside many tests: a documented run, an alternative entry point, a module only it imports."""
    _tree(root)
    (root / "scripts" / "smoke.sh").unlink()
    (root / "README.md").write_text(_ALT_DOC)
    train = root / "pkg" / "train"
    train.mkdir()
    (train / "__init__.py").write_text("")
    (train / "train_mem.py").write_text(_ALT_MEM)
    (train / "train.py").write_text(_ALT_TRAIN)
    (train / "train_lora.py").write_text(_ALT_LORA)
    (train / "xformers_patch.py").write_text(_ALT_PATCH)
    if test_imports_patch:
        (root / "tests" / "unit" / "test_block_7.py").write_text(
            "from pkg.train.xformers_patch import replace_attn\n\n\ndef test_patch():\n    assert replace_attn()\n")
    return root


def _roles_with_deferred_tests(root: Path) -> tuple[Roles, Deferred]:
    """The roles of ``root`` with its tests held as stand-ins of a Deferred no worker takes (each read is made here)."""
    d = Deferred(defer_context())
    d.bind(lambda p, b: extract_file(p, b, strings={}))
    files: dict[str, Any] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel, data = path.relative_to(root).as_posix(), path.read_bytes()
        kind = defer_context()(rel)
        files[rel] = d.add(rel, data, kind) if kind is not None else extract_file(rel, data)
    d.start(None)
    return classify_roles(files), d


def test_modules_of_alternative_entry_points_are_found_without_reading_every_deferred_test(tmp_path: Path) -> None:
    """The roles look for an import of an alternative's module in every file; a deferred test whose source does not
    name the module is skipped on its held bytes (on Megatron-LM this kept 580 tests from being extracted one by one
    in this process while the worker sat idle), and one that names it is read as before."""
    roles, d = _roles_with_deferred_tests(_alternatives(tmp_path / "repo", test_imports_patch=False))
    assert roles.role("pkg/train/train_lora.py") == "other" and roles.role("pkg/train/xformers_patch.py") == "other"
    read = sorted(d._batches[i][j][0] for i, j in d._one)
    assert read == ["tests/test_configs.py"]  # only the test calling a config loader was extracted for the roles
    roles, d = _roles_with_deferred_tests(_alternatives(tmp_path / "repo2", test_imports_patch=True))
    assert roles.role("pkg/train/train_lora.py") == "other" and roles.role("pkg/train/xformers_patch.py") != "other"
    read = sorted(d._batches[i][j][0] for i, j in d._one)
    assert read == ["tests/test_configs.py", "tests/unit/test_block_7.py"]  # it names the module: read
    # and a parallel audit reports what a single-process one does
    root = tmp_path / "repo2"
    assert _report(root, 2)[0] == _report(root, 1)[0]
