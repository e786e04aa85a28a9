"""Issue #9, round 12 follow-up: a distributed strategy chosen by name through a registry. The FSDP/DeepSpeed code of a
strategy class that every lookup in the project passes another constant name ("local") is an alternative, not the run;
a lookup that takes its name from the run's config keeps it in effect. Each ``unused`` assertion fails on the rule before
(A1/A2/A3/B1/B5 all read the plugins as used)."""

from __future__ import annotations

from checks.engine import audit_files
from checks.rules._helpers import backend_unselected
from checks.rules.a_parallelism import strategy_registry


def _results(files: dict[str, str]):
    audit = audit_files((p, t.encode()) for p, t in files.items())
    return {r.id: r for r in audit.results}, audit.facts


def test_strategy_class_every_lookup_skips_is_not_the_run():
    res, facts = _results(strategy_registry())
    for cid in ("A1", "A2", "A3", "B1", "B5"):
        assert res[cid].status.value == "unused", (cid, res[cid].detail)
    sel = backend_unselected(facts, "fsdp")
    assert [(s.name, s.value, s.path, s.line) for s in sel] == [("STRATEGIES", "local", "mylib/backend/base.py", 6)]
    assert res["A2"].detail == "FSDP is an option of `STRATEGIES` that no run picks: runs use 'local' (mylib/backend/base.py:6)"
    assert "`STRATEGIES` is 'local' (mylib/backend/base.py:6)" in res["A3"].detail
    assert res["A3"].detail.startswith("ZeRO is configured only for the deepspeed backend (DeepSpeedPlugin(zero_stage=) at "
                                       "mylib/distributed/accelerate.py:")
    assert "mylib/backend/base.py" in {e.path for e in res["B1"].evidence}


def test_a_lookup_naming_the_backend_keeps_it():
    res, facts = _results(strategy_registry('"fsdp"'))
    assert res["A2"].status.value == "used", res["A2"].detail
    assert backend_unselected(facts, "fsdp") == []
    # "fsdp" and "deepspeed" load the same class: the lookup reaches the DeepSpeed plugin's class too, which stays in effect
    assert res["A3"].status.value == "used" and backend_unselected(facts, "deepspeed") == []
    res, _ = _results(strategy_registry('"accelerate"'))  # another name for the class that holds both plugins
    assert res["A2"].status.value == "used" and res["A3"].status.value == "used", (res["A2"].detail, res["A3"].detail)


def test_a_lookup_from_config_or_cli_stays_used():
    res, _ = _results(strategy_registry("config.strategy"))
    assert res["A2"].status.value == "used", res["A2"].detail
    assert res["B1"].status.value == "used", res["B1"].detail
    # a constant lookup beside a CLI default that names a backend entry: the run may pick it
    cli = {"mylib/cli.py": "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--dist', default='deepspeed')\n"}
    res, _ = _results(strategy_registry(extra=cli))
    assert res["B1"].status.value == "used", res["B1"].detail


def test_registering_decorator_registry():
    files = {
        "mylib/strategies/registry.py": (
            "_STRATEGIES = {}\n\n\ndef register_strategy(name):\n    def wrap(cls):\n        _STRATEGIES[name] = cls\n"
            "        return cls\n    return wrap\n\n\ndef get_strategy(name):\n    return _STRATEGIES[name]\n"),
        "mylib/strategies/ddp.py": (
            "from torch.nn.parallel import DistributedDataParallel\n\nfrom mylib.strategies.registry import register_strategy\n\n\n"
            "@register_strategy(\"ddp\")\nclass DDPStrategy:\n    def wrap(self, model):\n        return DistributedDataParallel(model)\n"),
        "mylib/strategies/fsdp.py": (
            "from torch.distributed.fsdp import FullyShardedDataParallel\n\nfrom mylib.strategies.registry import register_strategy\n\n\n"
            "@register_strategy(\"fsdp\")\nclass FSDPStrategy:\n    def wrap(self, model):\n        return FullyShardedDataParallel(model)\n"),
    }
    const = {**files, "mylib/train.py": "from mylib.strategies.registry import get_strategy\n\nstrategy_cls = get_strategy(\"ddp\")\nmodel = strategy_cls().wrap(model)\n"}
    res, facts = _results(const)
    assert res["A2"].status.value == "unused", res["A2"].detail
    assert [(s.name, s.value) for s in backend_unselected(facts, "fsdp")] == [("register_strategy", "ddp")]
    assert backend_unselected(facts, "ddp") == []
    chosen = {**files, "mylib/train.py": "from mylib.strategies.registry import get_strategy\n\nstrategy_cls = get_strategy(cfg.strategy)\nmodel = strategy_cls().wrap(model)\n"}
    res, _ = _results(chosen)
    assert res["A2"].status.value == "used", res["A2"].detail
