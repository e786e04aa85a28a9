"""The shipped deployments: Redis needs a password that the App's URL carries; Kubernetes admits only the App's
pods to Redis (whoever can write to Redis steers the queue and the facts cache)."""

from __future__ import annotations

from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_compose_redis_requires_the_password_the_url_carries() -> None:
    doc = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    redis = doc["services"]["redis"]
    cmd = redis["command"]
    assert "--requirepass" in cmd and cmd[cmd.index("--requirepass") + 1].startswith("${ACCEL_REDIS_PASSWORD:?")
    assert "ports" not in redis  # not published on the host
    assert "REDISCLI_AUTH" in redis["environment"]  # the health check authenticates
    url = doc["x-settings"]["ACCEL_REDIS_URL"]
    assert url.startswith("redis://:${ACCEL_REDIS_PASSWORD:?") and url.endswith("@redis:6379/0")
    for name in ("app", "worker"):
        assert doc["services"][name]["environment"]["ACCEL_REDIS_URL"] == url


def test_kubernetes_redis_password_and_network_policy() -> None:
    docs = [d for d in yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()) if d]
    by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    assert "ACCEL_REDIS_URL" not in by[("ConfigMap", "accel-audit")]["data"]
    redis = by[("StatefulSet", "accel-audit-redis")]["spec"]["template"]["spec"]["containers"][0]
    assert redis["args"][-2:] == ["--requirepass", "$(REDIS_PASSWORD)"]
    app_labels = []
    for name in ("accel-audit-web", "accel-audit-worker"):
        pod = by[("Deployment", name)]["spec"]["template"]
        env = {e["name"]: e for e in pod["spec"]["containers"][0]["env"]}
        names = list(env)
        assert env["ACCEL_REDIS_URL"]["value"] == "redis://:$(REDIS_PASSWORD)@accel-audit-redis:6379/0"
        assert names.index("REDIS_PASSWORD") < names.index("ACCEL_REDIS_URL")  # $(VAR) expands only earlier vars
        assert env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]["key"] == "redis-password"
        app_labels.append(pod["metadata"]["labels"])
    policy = by[("NetworkPolicy", "accel-audit-redis")]["spec"]
    assert policy["podSelector"]["matchLabels"] == {"app": "accel-audit-redis"} and policy["policyTypes"] == ["Ingress"]
    [rule] = policy["ingress"]
    [source] = rule["from"]
    wanted = source["podSelector"]["matchLabels"]
    assert set(source) == {"podSelector"}  # pods of this namespace only, no ipBlock or other namespaces
    assert all(wanted.items() <= labels.items() for labels in app_labels)  # the App's pods are admitted
    assert not wanted.items() <= {"app": "accel-audit-redis"}.items()  # and a label every pod has is not the key
    assert rule["ports"] == [{"protocol": "TCP", "port": 6379}]


def test_the_app_runs_against_a_redis_that_requires_a_password(tmp_path: Path, rsa_key) -> None:
    import shutil
    import subprocess
    import time

    import pytest
    import redis as redis_lib

    from bot.runtime import build_runtime
    from bot.settings import load_settings

    from .conftest import free_port
    from .helpers import APP_ID, SECRET, TEST_TUNING

    exe = shutil.which("redis-server")
    if exe is None:
        pytest.fail("redis-server is not installed")
    port, password = free_port(), "0123456789abcdef" * 4
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(tmp_path), "--requirepass", password], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"redis://:{password}@127.0.0.1:{port}/0"
        for _ in range(100):
            try:
                if redis_lib.Redis.from_url(url).ping():
                    break
            except redis_lib.ConnectionError:
                time.sleep(0.05)
        with pytest.raises(redis_lib.AuthenticationError):
            redis_lib.Redis(port=port).set("x", "1")  # without the password: refused
        env = {"ACCEL_APP_ID": str(APP_ID), "ACCEL_PRIVATE_KEY": rsa_key[0], "ACCEL_WEBHOOK_SECRET": SECRET,
               "ACCEL_DATA_DIR": str(tmp_path / "d"), "ACCEL_REDIS_URL": url}
        settings = load_settings(env)
        assert password in settings.secrets and password not in repr(settings)
        rt = build_runtime(settings, TEST_TUNING)
        try:
            assert rt.store.ping() and rt.queue_ok()
        finally:
            rt.close()
    finally:
        proc.terminate()
        proc.wait(10)


def test_kubernetes_worker_memory_limit_holds_its_audits() -> None:
    docs = [d for d in yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()) if d]
    by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    per_audit = int(by[("ConfigMap", "accel-audit")]["data"]["ACCEL_AUDIT_MEMORY_MB"])
    worker = by[("Deployment", "accel-audit-worker")]["spec"]["template"]["spec"]["containers"][0]
    threads = int(worker["args"][worker["args"].index("--workers") + 1])
    limit = worker["resources"]["limits"]["memory"]
    assert limit.endswith("Gi") and threads * per_audit + 256 <= int(limit[:-2]) * 1024
