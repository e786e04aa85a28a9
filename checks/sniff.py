"""Tell data files from configs by a bounded look at their first bytes, before they are read whole.

Training repositories carry megabytes of JSON and YAML that no check reads: golden values of
test runs (``{"lm loss": {"values": {"1": 10.8, "2": 10.7, ...}}}``), datasets (arrays of
records), large numeric arrays. Parsing them cost Megatron-LM's scan 12 of its 30 seconds and
200 MB. The sniff looks at the first :data:`HEAD_BYTES` only and decides by shape, never by the
file's name; a file whose head looks like a config (named keys with scalar settings) is always
read. The reason is reported with the file as skipped.
"""

from __future__ import annotations

import re

from .lazyre import lazy_compile

__all__ = ["HEAD_BYTES", "VERSION", "data_reason"]

#: bump when the sniff's verdicts change: a facts cache's directory index (which remembers them) is then ignored
VERSION = 4

#: bytes of a file's start that the sniff reads
HEAD_BYTES = 8192
#: JSON/YAML up to this size are always parsed: small files cost little, and a small file is rarely data
SMALL_BYTES = 2048

_JSON_KEY = lazy_compile(rb'"(?:[^"\\\n]|\\.){0,200}"\s*:')
_JSON_INT_KEY = lazy_compile(rb'"\s*-?\d+\s*"\s*:')
# The patterns start with a literal or a character set, so that the regex engine skips to the places where a match can start
# instead of trying one at each of a head's 8,192 positions: a key pattern's line start is the line break before it (the
# head is searched with a line break put before it; no match takes a line break, so none is taken from the next match),
# and a number's "not after a word character" is tested behind its first character, a sign or a digit (the ``.`` is
# that character: never a line break). The same counts as ``^...`` with ``re.M`` and ``(?<![\w.\"'])-?\d+``.
_YAML_KEY = lazy_compile(rb"\n[ \t-]*(?:\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'|[^\s:#'\"{}\[\],&*!|>%@`-][^:\n#]{0,200}?):(?:[ \t]|$)", re.M)
_YAML_INT_KEY = lazy_compile(rb"\n[ \t-]*(?:\"-?\d+\"|'-?\d+'|-?\d+)[ \t]*:(?:[ \t]|$)", re.M)
#: a key whose value is a bare integer (``"Ġthe": 262,``): a vocabulary's token -> id entry
_JSON_ID_ENTRY = lazy_compile(rb'"(?:[^"\\\n]|\\.){0,200}"\s*:\s*-?\d+\s*[,}]')
#: the opening of a Hugging Face ``tokenizer.json`` (its vocabulary and merges follow the added tokens)
_TOKENIZER_JSON = lazy_compile(rb'^\s*\{\s*"version"\s*:\s*"[^"]*"\s*,\s*"truncation"\s*:')
_NUMBER = lazy_compile(rb"[-\d](?<![\w.\"'].)(?:(?<=-)\d+|(?<=\d)\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.\"'])")


def _shape(head: bytes, key: re.Pattern[bytes], int_key: re.Pattern[bytes]) -> str | None:
    """The data shape of a head (counted by regular expressions, no list of keys built), or None for config-like."""
    keys = len(key.findall(head))
    if keys >= 16:
        int_keys = len(int_key.findall(head))
        if int_keys * 2 >= keys:
            return f"data: {int_keys} of the first {keys} keys are step/row numbers (golden values or metrics)"
    # each number holds a digit of its own: with fewer digits than the verdict needs numbers, they are not counted
    if len(head) - len(head.translate(None, b"0123456789")) < max(256, 10 * max(keys, 1)):
        return None
    numbers = len(_NUMBER.findall(head))
    if numbers >= 256 and numbers >= 10 * max(keys, 1):
        return f"data: {numbers} numbers against {keys} keys in the first {HEAD_BYTES} bytes (numeric arrays)"
    return None


def _json_lines(head: bytes) -> bool:
    """Whether the head holds two whole lines that are each one JSON object or array: JSON Lines, whatever the file's
    extension (octopack's QuixBugs ``json_testcases/bitcount.json``: ``[[127], 7]`` on each line).

    A ``.json`` file holds one value, so a second top-level object on the next line is never a config.
    """
    lines = head.lstrip().split(b"\n", 2)
    if len(lines) < 3:
        return False
    return all(((line := raw.rstrip()).startswith(b"{") and line.endswith(b"}")) or (line.startswith(b"[") and line.endswith(b"]"))
               for raw in lines[:2])


def data_reason(kind: str, size: int, head: bytes) -> str | None:
    """Why a ``json``/``yaml`` file of ``size`` bytes that starts with ``head`` is data no check reads, or None to read it.

    ``head`` is at most the first :data:`HEAD_BYTES` of the file (more is ignored).
    """
    if kind not in {"json", "yaml"}:
        return None
    head = head[:HEAD_BYTES]
    if kind == "json" and head.lstrip()[:1] in (b"{", b"[") and _json_lines(head):
        # (at any size: a small one fails the JSON parse and would be listed as a file that could not be parsed)
        return "data: JSON Lines (one record per line)"
    if size <= SMALL_BYTES:
        return None
    if kind == "json":
        start = head.lstrip()[:1]
        if start == b"[" and size > 16 * SMALL_BYTES:
            body = head.lstrip()[1:].lstrip()[:1]
            if body in {b"{", b"[", b'"'} or body[:1].isdigit() or body == b"-":
                return "data: a top-level JSON array of records or values (a dataset)"
        if _TOKENIZER_JSON.match(head):
            return "data: a tokenizer (vocabulary and merges)"
        keys, ids = len(_JSON_KEY.findall(head)), len(_JSON_ID_ENTRY.findall(head))
        if keys >= 64 and ids * 10 >= keys * 9:
            return f"data: a vocabulary ({ids} of the first {keys} keys map to integer token ids)"
        return _shape(head, _JSON_KEY, _JSON_INT_KEY)
    return _shape(b"\n" + head, _YAML_KEY, _YAML_INT_KEY)  # the line break before the first line (see _YAML_KEY)
