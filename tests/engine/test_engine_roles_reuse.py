"""A full warm audit takes the last recorded audit's roles when ``classify_roles`` would make them again: every file is
where it was, and none of what the roles read of the changed files (their imports, kinds, ...) has another answer.

Every report here is a cold ``-j1`` scan's of the edited tree; each test names the mutation of the reuse it catches.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import checks.engine as engine

from .test_engine_check_reuse import ROOT, Scanner, _lr


class RolesSpy:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[bool] = []  # per audit with a prior log: whether the roles were reused
        real = engine._roles_reused

        def spy(*a: Any, **k: Any) -> Any:
            out = real(*a, **k)
            self.calls.append(out is not None)
            return out

        monkeypatch.setattr(engine, "_roles_reused", spy)


@pytest.fixture
def s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Scanner, RolesSpy]:
    s = Scanner(tmp_path, monkeypatch)
    spy = RolesSpy(monkeypatch)
    first, _ = s.warm()
    assert first == s.cold()
    return s, spy


def _role(report: str, path: str) -> str:
    return next(f["role"] for f in json.loads(report)["files"] if f["path"] == path)


def _unimport(t: str) -> str:
    return t.replace("from model import GPT, GPTConfig\n", "")


def test_an_edit_the_roles_did_not_read_reuses_them(s: tuple[Scanner, RolesSpy]) -> None:
    """The learning rate changed: no import, kind or anything else the roles read changed, so they are reused.
    Catches: the roles classified again on every full warm audit (not reused)."""
    scanner, spy = s
    scanner.edit("train.py", _lr)
    report, _ = scanner.warm()
    assert spy.calls[-1] is True
    assert report == scanner.cold()


def test_an_edit_the_roles_read_reclassifies(s: tuple[Scanner, RolesSpy]) -> None:
    """train.py no longer imports model.py, which leaves the training path: the roles are made again. Catches: the
    roles' reads not compared (model.py would keep the role "training")."""
    scanner, spy = s
    before = scanner.cold()
    scanner.edit("train.py", _unimport)
    report, _ = scanner.warm()
    assert spy.calls[-1] is False
    cold = scanner.cold()
    assert report == cold and _role(cold, "model.py") != _role(before, "model.py")


def test_reused_roles_keep_their_reads_for_the_next_edit(s: tuple[Scanner, RolesSpy]) -> None:
    """After an audit that reused the roles, its log still holds what they read: removing the import next is seen.
    Catches: reused roles carrying no reads into the new log (they would be reused again, wrongly)."""
    scanner, spy = s
    scanner.edit("train.py", _lr)
    report, _ = scanner.warm()
    assert spy.calls[-1] is True and report == scanner.cold()
    scanner.edit("train.py", _unimport)
    report, _ = scanner.warm()
    assert spy.calls[-1] is False
    assert report == scanner.cold()


def test_an_added_file_reclassifies(s: tuple[Scanner, RolesSpy]) -> None:
    """A file added (the paths changed): the roles are made again. Catches: comparing only the changed files' reads."""
    scanner, spy = s
    (scanner.repo / "helpers.py").write_text("import torch\n\n\ndef fast(model):\n    return torch.compile(model)\n")
    report, _ = scanner.warm()
    assert spy.calls[-1] is False and report == scanner.cold()


ROLE_FILES = {
    # a setup.py's console script, a recipe registry naming its files (torchtune), a config loader reading Python configs
    "setup.py": 'from setuptools import setup\nsetup(name="pkg", entry_points={"console_scripts": ["pkg-train = pkg.cli:main"]})\n',
    "pkg/cli.py": "from pkg.train import run\n\n\ndef main():\n    run()\n",
    "pkg/train.py": "import torch\n\n\ndef run():\n    loss = torch.zeros(1, requires_grad=True)\n    loss.backward()\n",
    "pkg/_registry.py": 'Recipe(name="lora_finetune", file_path="lora_finetune.py", supports_distributed=False)\n',
    "recipes/lora_finetune.py": "import torch\n\n\ndef recipe_main(cfg):\n    loss = torch.ones(1)\n    loss.backward()\n",
    "tools/train_cfg.py": "from mmengine import Config\n\n\ndef main(path):\n    cfg = Config.fromfile(path)\n    return cfg\n",
    "configs/small.py": "lr = 0.1\nepochs = 3\nbatch_size = 8\nmodel = dict(type='GPT')\n",
    "app.py": "import gradio\nimport transformers\n\n\ndef serve():\n    gradio.Interface(fn=print).launch()\n",
}


@pytest.mark.parametrize("fixture", [*sorted(p.name for p in (ROOT / "fixtures" / "repos").iterdir() if p.is_dir()), "role_files"])
def test_the_roles_read_only_what_their_view_of_the_calls_keeps(fixture: str) -> None:
    """The roles made through the recording's view of the calls (``checks.roles.role_calls``: reading any field it does
    not keep raises) are the roles made from the calls themselves, on every fixture and on files that exercise each read
    of the calls (entry points, named recipe files, config loaders, step calls). Catches: a field the roles read that
    the view drops (a read of the roles that the log would not see)."""
    from checks.facts import extract_file
    from checks.query_log import Recorder
    from checks.roles import classify_roles

    if fixture == "role_files":
        files = {p: t.encode() for p, t in ROLE_FILES.items()}
    else:
        base = ROOT / "fixtures" / "repos" / fixture
        files = {str(f.relative_to(base)): f.read_bytes() for f in sorted(base.rglob("*")) if f.is_file()}
    by_path = {p: extract_file(p, data) for p, data in files.items()}
    rec = Recorder()
    rec.begin("roles")
    viewed = classify_roles(rec.files(by_path, {"calls": "calls@roles"}))
    assert rec.unsound is None
    assert viewed == classify_roles(by_path)
