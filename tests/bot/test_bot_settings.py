"""Settings: one clear line naming a missing or invalid variable; secrets never in repr or logs."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from bot import logsafe
from bot.settings import SettingsError, load_settings

from .helpers import SECRET


@pytest.fixture
def good(rsa_key, tmp_path: Path) -> dict[str, str]:
    return {"ACCEL_APP_ID": "4242", "ACCEL_PRIVATE_KEY": rsa_key[0], "ACCEL_WEBHOOK_SECRET": SECRET, "ACCEL_DATA_DIR": str(tmp_path / "d")}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"ACCEL_APP_ID": None}, "ACCEL_APP_ID is not set"),
        ({"ACCEL_APP_ID": "my-app"}, "ACCEL_APP_ID: must be a positive integer, got 'my-app'"),
        ({"ACCEL_PRIVATE_KEY": None}, "ACCEL_PRIVATE_KEY_PATH is not set"),
        ({"ACCEL_PRIVATE_KEY": "-----BEGIN RSA PRIVATE KEY-----\nnope\n-----END RSA PRIVATE KEY-----"}, "ACCEL_PRIVATE_KEY: not a PEM-encoded private key"),
        ({"ACCEL_PRIVATE_KEY": None, "ACCEL_PRIVATE_KEY_PATH": "/no/such/key.pem"}, "ACCEL_PRIVATE_KEY_PATH: no such file: /no/such/key.pem"),
        ({"ACCEL_WEBHOOK_SECRET": None}, "ACCEL_WEBHOOK_SECRET is not set"),
        ({"ACCEL_WEBHOOK_SECRET": "short"}, "ACCEL_WEBHOOK_SECRET: too short"),
        ({"ACCEL_GITHUB_API_URL": "github.example.com/api/v3"}, "ACCEL_GITHUB_API_URL: not an http(s) URL"),
        ({"ACCEL_REDIS_URL": "http://redis:6379"}, "ACCEL_REDIS_URL: not a redis://"),
        ({"ACCEL_DATA_DIR": "/proc/accel-audit"}, "ACCEL_DATA_DIR: cannot create /proc/accel-audit"),
        ({"ACCEL_AUDIT_TIMEOUT": "five minutes"}, "ACCEL_AUDIT_TIMEOUT: expected a number from 5 to 86400"),
        ({"ACCEL_AUDIT_MEMORY_MB": "64"}, "ACCEL_AUDIT_MEMORY_MB: expected a number from 256"),
        ({"ACCEL_GITHUB_RETRY_HOURS": "-1"}, "ACCEL_GITHUB_RETRY_HOURS: expected a number from 0 to 168"),
        ({"ACCEL_METRICS_TOKEN": "abc"}, "ACCEL_METRICS_TOKEN: too short"),
    ],
)
def test_bad_settings_name_the_variable(good, change, message) -> None:
    env = dict(good)
    for k, v in change.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    with pytest.raises(SettingsError) as info:
        load_settings(env)
    text = str(info.value)
    assert text.startswith(message) and "\n" not in text
    assert SECRET not in text and "PRIVATE KEY-----\n" not in text


def test_good_settings_and_ghes_and_key_file(good, rsa_key, tmp_path: Path) -> None:
    key = tmp_path / "app.pem"
    key.write_text(rsa_key[0])
    env = dict(good, ACCEL_PRIVATE_KEY_PATH=str(key), ACCEL_GITHUB_API_URL="https://ghe.example.com/api/v3/")
    del env["ACCEL_PRIVATE_KEY"]
    s = load_settings(env)
    assert s.app_id == 4242 and s.github_api_url == "https://ghe.example.com/api/v3" and s.redis_url is None
    assert SECRET not in repr(s) and "PRIVATE" not in repr(s)
    # a PEM with literal \n (as some secret stores pass it) is accepted
    assert load_settings(dict(good, ACCEL_PRIVATE_KEY=rsa_key[0].replace("\n", "\\n"))).private_key == rsa_key[0]


def test_cli_stops_with_one_line(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "accel_audit.cli", "serve"], cwd=root, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "ACCEL_DATA_DIR": str(tmp_path)}, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["accel-audit: ACCEL_APP_ID is not set (the GitHub App's numeric ID, on the App's settings page)"]
    proc = subprocess.run([sys.executable, "-m", "accel_audit.cli", "worker"], cwd=root, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "ACCEL_APP_ID": "x"}, timeout=60)
    assert proc.returncode == 2 and proc.stderr.strip() == "accel-audit: ACCEL_APP_ID: must be a positive integer, got 'x'"


def test_log_records_are_redacted(rsa_key, caplog) -> None:
    logsafe.install([SECRET, rsa_key[0]])
    caplog.set_level(logging.INFO)
    log = logging.getLogger("bot.test")
    log.info("secret %s and key %s", SECRET, rsa_key[0])
    log.info("Authorization: token ghs_16C7e42F292c6912E7710c838347Ae178B4a and jwt eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI0MjQyIn0.c2lnbmF0dXJl")
    log.info("redis at redis://:hunter2password@redis:6379/0")
    try:
        raise ValueError(f"boom {SECRET}")
    except ValueError:
        log.exception("failed")
    text = caplog.text
    for leaked in (SECRET, "MII", "ghs_16C7e42F", "eyJhbGciOiJSUzI1NiJ9", "hunter2password"):
        assert leaked not in text, leaked
    assert text.count("[redacted]") >= 6


def test_limits_and_retry_defaults(good) -> None:
    s = load_settings(good)
    assert (s.audit_timeout, s.audit_memory_mb, s.github_retry_hours, s.metrics_token) == (300.0, 2048, 6.0, None)
    s = load_settings(dict(good, ACCEL_AUDIT_TIMEOUT="600", ACCEL_AUDIT_MEMORY_MB="4096", ACCEL_METRICS_TOKEN="t" * 20))
    assert (s.audit_timeout, s.audit_memory_mb) == (600.0, 4096)
    assert "t" * 20 in s.secrets and "t" * 20 not in repr(s)
