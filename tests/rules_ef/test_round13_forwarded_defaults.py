"""Round 13 (held-out Colossal-AI): a loader keyword that hands on a parameter of the enclosing helper, and pinned parameter
shards.

colossalai 0.5.0's plugins build their loader in ``prepare_dataloader(self, dataset, batch_size, ..., pin_memory=False,
num_workers=0, **kwargs)`` with ``DataLoader(..., pin_memory=pin_memory, num_workers=num_workers)``, and nothing in the package
calls it with either keyword. The facts recorded no parameter defaults, so F1 said "num_workers is set from a value that is
not static" (used) and F3 resolved ``pin_memory`` to every same-named keyword in the package (Gemini's ``Chunk(...,
pin_memory=...)``) and took a ZeRO chunk's pinned ``self.cpu_shard = torch.empty(self.shard_size, ...)`` for a token shard:
"training batches are pinned". The extractor now records, for each keyword that forwards a parameter unchanged, the
parameter's position and constant default (FACTS_VERSION 38); when no call outside tests passes it, the loader gets the
default. A pinned buffer named like a shard counts only where a file is read into it.
"""

from __future__ import annotations

from checks.facts.extract import extract_file
from checks.rules.f_data import _MODDED_READER, _PLUGIN_LOADER, _PLUGIN_LOADER_CALL
from tests.rules_ghj.ghj_util import audit


def test_the_extractor_records_forwarded_parameters_with_their_defaults():
    ff = extract_file("pkg/plugin.py", _PLUGIN_LOADER["mylib/booster/plugin/dp_plugin.py"].encode())
    loader = next(c for c in ff.calls if c.short == "DataLoader")
    assert loader.forwarded is not None
    pos, has_default, default, line, text = loader.forwarded["num_workers"]
    assert (pos, has_default, default, line) == (5, True, 0, 10)  # ``self`` is not passed by callers
    assert "num_workers=0" in text
    assert loader.forwarded["pin_memory"][:3] == (4, True, False)
    assert "batch_size" in loader.forwarded and loader.forwarded["batch_size"][1] is False  # no default


def test_a_rebound_parameter_is_not_forwarded():
    src = ("from torch.utils.data import DataLoader\n\n\ndef build(ds, num_workers=0):\n"
           "    num_workers = max(4, num_workers)\n    return DataLoader(ds, num_workers=num_workers)\n")
    loader = next(c for c in extract_file("pkg/data.py", src.encode()).calls if c.short == "DataLoader")
    assert not (loader.forwarded or {}).get("num_workers")


def test_an_uncalled_helpers_defaults_are_the_loaders_settings():
    f1, _ = audit(_PLUGIN_LOADER, "F1")
    assert f1.status.value == "unused"  # was used: "num_workers is set from a value that is not static"
    assert [(e.path, e.line) for e in f1.evidence] == [("mylib/booster/plugin/dp_plugin.py", 10)]
    f3, _ = audit(_PLUGIN_LOADER, "F3")
    assert f3.status.value == "unused"  # was used: the chunk's pinned shard and Chunk(pin_memory=True)
    assert all(e.path not in ("mylib/zero/chunk.py", "mylib/checkpoint_io/utils.py") for e in f3.evidence)


def test_a_caller_that_passes_the_setting_still_decides():
    files = {**_PLUGIN_LOADER, "train.py": _PLUGIN_LOADER_CALL}
    f1, _ = audit(files, "F1")
    assert f1.status.value == "used" and ("train.py", 6) in [(e.path, e.line) for e in f1.evidence]
    assert audit(files, "F3")[0].status.value == "used"


def test_a_positional_caller_keeps_the_old_reading():
    call = "from mylib.booster.plugin.dp_plugin import DPPlugin\nloader = DPPlugin().prepare_dataloader(ds, 8, True, False, True, 8)\n"
    f1, _ = audit({**_PLUGIN_LOADER, "train.py": call}, "F1")
    assert f1.status.value != "unused"  # the default is not the value: a caller passes num_workers by position


def test_a_token_buffer_read_from_a_file_is_still_pinned():
    assert audit({"train_gpt.py": _MODDED_READER}, "F3")[0].status.value == "used"
