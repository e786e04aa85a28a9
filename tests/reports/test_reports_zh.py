"""The Chinese report is Chinese throughout: status details, benefits and triggers, in the seed's wording."""

from __future__ import annotations

import re

from checks.model import Status
from reports.i18n import na_reason_zh, status_detail_zh

from .golden_cases import CASES, outputs

ENGLISH_PHRASE = re.compile(r"[A-Za-z]+[ ,]+[A-Za-z]+ [A-Za-z]+ [A-Za-z]+")  # four English words in a row


def _prose(md: str) -> list[str]:
    """The report's lines outside code blocks, with inline code removed."""
    out, fenced = [], False
    for line in md.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


def test_zh_reports_have_no_english_sentences():
    for case in CASES:
        md = outputs(case)[f"{case.repo}.zh.md"]
        english = [line for line in _prose(md) if ENGLISH_PHRASE.search(line)]
        assert not english, f"{case.repo}: " + "\n".join(english[:5])
        assert "未检测到。建议：" in md


def test_status_wording_follows_the_seed():
    assert status_detail_zh(Status.USED, True, "x") == "已使用"
    assert status_detail_zh(Status.UNUSED, False, "启用 FSDP。其余说明") == "未检测到。建议：启用 FSDP。"
    assert status_detail_zh(Status.UNUSED, True, None) == "未启用。"
    long = "在 `" + "a" * 120 + "` 中启用"
    assert status_detail_zh(Status.UNUSED, False, long).count("`") % 2 == 0
    assert na_reason_zh("text-only project (no vision encoder)") == "纯文本项目（无视觉编码器）"
    assert na_reason_zh("something else entirely") == ""


def test_skipped_files_are_explained_in_chinese():
    from reports.i18n import skip_reason

    assert skip_reason("symlink (not followed)", "zh") == "符号链接，未跟随"
    assert skip_reason("larger than 1048576 bytes", "zh") == "大于 1048576 字节"
    assert skip_reason("data: 40 of the first 50 keys are step/row numbers (golden values or metrics)", "zh") == \
        "数据：前 50 个键中有 40 个是步数/行号（基准值或指标）"
    assert skip_reason("data: a top-level JSON array of records or values (a dataset)", "zh").startswith("数据：")
    assert skip_reason("binary", "en") == "binary"
    assert skip_reason("something new", "zh") == "something new"  # an unknown reason is shown as it is, never dropped
