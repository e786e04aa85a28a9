"""Lead round 23 (C-family overclaims): an ``or`` of switches that are all off closes its branch (Composer 0.32's
``apply_ac``), and checkpoint calls in helpers only such branches call are not use. Each test names the rule it pins."""

from __future__ import annotations

from checks.engine import audit_files
from checks.rules._helpers import guard_off, or_guard_off

_CONFIG = (
    "from dataclasses import dataclass\n\n\n@dataclass\nclass FSDPConfig:\n"
    "    activation_checkpointing: bool = False\n    activation_cpu_offload: bool = {offload}\n"
    "    sync_module_states: bool = False\n"
)
_PREPARE = (
    "import torch\n\n\ndef prepare_fsdp_module(model, config):\n"
    "    if config.activation_checkpointing or config.activation_cpu_offload:\n"
    "        model = torch.compile(model)\n"
    "    return model\n"
)


def _audit(offload: str = "False", extra: dict[str, str] | None = None):
    files = {"pkg/config.py": _CONFIG.format(offload=offload), "pkg/prepare.py": _PREPARE, **(extra or {})}
    return audit_files((k, v.encode()) for k, v in files.items())


def _site(a):
    [c] = [c for c in a.facts.calls("torch.compile") if c.path == "pkg/prepare.py"]
    return c


def test_an_or_of_two_switches_both_off_by_default_is_off():
    # fails with the rule reverted: ``guard_flags`` leaves ``or`` out, so the branch was unknown (read as on)
    a = _audit()
    c = _site(a)
    gates = or_guard_off(a.facts, c)
    assert {(g.key, g.value) for g in gates} == {("FSDPConfig.activation_checkpointing", False),
                                                 ("FSDPConfig.activation_cpu_offload", False)}
    assert guard_off(a.facts, c) == gates
    assert a.result("D2").status.value == "unused"


def test_one_alternative_on_keeps_the_branch():
    a = _audit(offload="True")
    assert or_guard_off(a.facts, _site(a)) == []
    assert a.result("D2").status.value == "used"


def test_an_undecided_alternative_keeps_the_branch():
    # a run's launch passing a value the audit cannot read: the ``or`` is not decided
    a = _audit(extra={"pkg/run.py": ("from pkg.config import FSDPConfig\n\n\n"
                                     "cfg = FSDPConfig(activation_cpu_offload=os.environ.get('OFFLOAD'))\n")})
    assert or_guard_off(a.facts, _site(a)) == []
