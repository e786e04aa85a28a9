"""``.github/accel-audit.yml`` validation: exact errors, defaults, inheritance."""

from __future__ import annotations

import pytest

from bot.gate import decide
from bot.pacing import LocalPacer, PacedThrottler, RedisPacer
from bot.repo_config import ConfigError, Gate, load_yaml, merge, parse_config, parse_extends, validate


def test_full_config() -> None:
    cfg = validate(load_yaml(
        "language: zh\nignore: [h*, C2]\npaths:\n  exclude: ['examples/**']\nhardware: H100\n"
        "projects:\n  - llm\n  - path: vlm/\n    name: Vision\ngate:\n  min_score: 60\n  fail_on_regression: true\n"
        "  conclusion: action_required\ncomments:\n  max_inline: 5\n  event: request_changes\n"
    ))
    assert cfg.language == "zh" and cfg.ignore == ("H*", "C2") and cfg.exclude == ("examples/**",) and cfg.hardware == "h100"
    assert [(p.path, p.check_name) for p in cfg.projects] == [("llm", "Accel Audit (llm)"), ("vlm", "Accel Audit (Vision)")]
    assert cfg.gate == Gate(60.0, True, "action_required") and cfg.max_inline == 5 and cfg.review_event == "REQUEST_CHANGES"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("langauge: en\n", "unknown key 'langauge'"),
        ("language: fr\n", "language: expected 'en' or 'zh', got 'fr'"),
        ("ignore: [X9]\n", "ignore: 'X9' matches no check ID"),
        ("hardware: potato\n", "hardware: unknown GPU 'potato'"),
        ("gate:\n  conclusion: neutral\n", "gate.conclusion: expected 'failure' or 'action_required', got 'neutral' (neutral passes a required check"),
        ("gate:\n  min_score: 120\n", "gate.min_score: expected a number from 0 to 100 (percent), got 120"),
        ("gate:\n  fail_on_regression: yes please\n", "gate.fail_on_regression: expected true or false, got 'yes please'"),
        ("projects: [../outside]\n", "projects[0]: must be a folder inside the repository"),
        ("projects: [a, a]\n", "projects[1]: 'a' is listed twice"),
        ("comments:\n  max_inline: 500\n", "comments.max_inline: expected an integer from 0 to 50, got 500"),
        ("- just a list\n", "the top level must be a mapping, got a list"),
        ("_extends: 'a/b/c'\n", "_extends: expected 'repo', 'owner/repo' or 'repo:path'"),
    ],
)
def test_errors_are_exact_and_defaults_apply(text: str, error: str) -> None:
    loaded = parse_config(text)
    assert loaded.errors and loaded.errors[0].startswith(".github/accel-audit.yml: " + error)
    assert loaded.config == parse_config(None).config


def test_yaml_error_position() -> None:
    with pytest.raises(ConfigError, match=r"invalid YAML at line 2, column 7: mapping values are not allowed here"):
        load_yaml("gate:\n  a: b: c\n")


def test_merge_and_extends() -> None:
    assert merge({"gate": {"min_score": 50, "conclusion": "failure"}, "ignore": ["H*"]}, {"gate": {"min_score": 70}, "ignore": ["C2"]}) == {
        "gate": {"min_score": 70, "conclusion": "failure"}, "ignore": ["C2"]}
    assert parse_extends(".github", "octo") == ("octo", ".github", ".github/accel-audit.yml")
    assert parse_extends("other/shared:cfg/accel.yml", "octo") == ("other", "shared", "cfg/accel.yml")


def test_gate_policy() -> None:
    assert decide(Gate(), 10.0, False).conclusion == "success"
    assert decide(Gate(), 10.0, True).conclusion == "neutral"  # visible, never blocks without a gate
    assert decide(Gate(min_score=50), 49.9, False).conclusion == "failure"
    v = decide(Gate(fail_on_regression=True, conclusion="action_required"), 90.0, True)
    assert v.conclusion == "action_required" and v.blocks


def test_local_pacer_spaces_writes_per_key() -> None:
    t = [100.0]
    pacer = LocalPacer(1.0, clock=lambda: t[0])
    assert [pacer.reserve("i1") for _ in range(3)] == [0.0, 1.0, 2.0]
    assert pacer.reserve("i2") == 0.0  # another installation has its own pace
    t[0] = 105.0
    assert pacer.reserve("i1") == 0.0


def test_throttler_paces_writes_not_reads() -> None:
    import httpx

    slept: list[float] = []
    t = [0.0]
    th = PacedThrottler("inst:test-throttler", LocalPacer(1.0, clock=lambda: t[0]), sleep=slept.append)
    for method, url in [("POST", "https://api.github.com/repos/o/r/check-runs"), ("GET", "https://api.github.com/repos/o/r"),
                        ("PATCH", "https://api.github.com/repos/o/r/check-runs/1"),
                        ("POST", "https://api.github.com/graphql")]:
        with th.acquire(httpx.Request(method, url, json={"query": "query { viewer { login } }"} if "graphql" in url else None)):
            pass
    assert slept == [1.0]  # the PATCH waited for the POST; the GET and the GraphQL query did not count


def test_redis_pacer_shares_slots_across_processes(redis_server) -> None:
    import redis

    client = redis.Redis.from_url(redis_server)
    client.delete("accel:pace:k")
    a, b = RedisPacer(client, 100.0), RedisPacer(client, 100.0)
    assert a.reserve("k") == 0.0
    assert 99.0 < b.reserve("k") <= 100.0  # the second writer, in another process, gets the next slot


def test_paths_training() -> None:
    cfg = validate(load_yaml("paths:\n  exclude: [legacy/**]\n  training: ['recipes/**', tests/e2e/train_tiny.py]\n"))
    assert cfg.exclude == ("legacy/**",) and cfg.training == ("recipes/**", "tests/e2e/train_tiny.py")
    for text, error in (("paths:\n  training: ['../x']\n", "paths.training: must be a folder inside the repository"),
                        ("paths:\n  include: [x]\n", "paths: unknown key 'include' (allowed: exclude, training)")):
        loaded = parse_config(text)
        assert loaded.errors and error in loaded.errors[0] and loaded.config.training == ()
