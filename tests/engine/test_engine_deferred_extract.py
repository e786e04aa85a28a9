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
