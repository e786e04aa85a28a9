"""Fixtures of the bot's tests: an App key, a real redis-server, the fake GitHub behind respx, runtimes."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import respx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi.testclient import TestClient

from bot.app import create_app
from bot.runtime import Runtime, build_runtime
from bot.settings import Settings, load_settings

from .fakegh import API_HOST, CODELOAD_HOST, FakeGitHub, make_tarball
from .helpers import APP_ID, BASE_SHA, HEAD_SHA, SECRET, TEST_TUNING
from .repos import BASE, HEAD


@pytest.fixture(scope="session")
def rsa_key() -> tuple[str, bytes]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()).decode()
    pub = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return pem, pub


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.fail("redis-server is not installed: the queue tests run against a real one (apt-get install redis-server; .ci/run does it)")
    port = free_port()
    workdir = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    for _ in range(200):
        try:
            if client.ping():
                break
        except redis.ConnectionError:
            if proc.poll() is not None:
                pytest.fail(f"redis-server exited: {proc.stderr.read().decode(errors='replace')[:500] if proc.stderr else ''}")
            time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("redis-server did not answer PING within 10 s")
    yield url
    client.close()
    proc.terminate()
    proc.wait(10)


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def env(tmp_path: Path, rsa_key: tuple[str, bytes], backend: str, request: pytest.FixtureRequest) -> dict[str, str]:
    e = {"ACCEL_APP_ID": str(APP_ID), "ACCEL_PRIVATE_KEY": rsa_key[0], "ACCEL_WEBHOOK_SECRET": SECRET, "ACCEL_DATA_DIR": str(tmp_path / "data")}
    if backend == "redis":
        url = request.getfixturevalue("redis_server")
        redis.Redis.from_url(url).flushall()
        e["ACCEL_REDIS_URL"] = url
    return e


@pytest.fixture
def settings(env: dict[str, str]) -> Settings:
    return load_settings(env)


@pytest.fixture
def fake(rsa_key: tuple[str, bytes]) -> FakeGitHub:
    gh = FakeGitHub(APP_ID, rsa_key[1])
    gh.tarballs[BASE_SHA] = make_tarball(BASE)
    gh.tarballs[HEAD_SHA] = make_tarball(HEAD)
    return gh


@pytest.fixture
def gh_mock(fake: FakeGitHub) -> Iterator[respx.Router]:
    with respx.mock(assert_all_called=False) as router:
        router.route(host=API_HOST).mock(side_effect=fake.handle)
        router.route(host=CODELOAD_HOST).mock(side_effect=fake.handle)
        yield router


@pytest.fixture
def rt(settings: Settings, gh_mock: respx.Router) -> Iterator[Runtime]:
    runtime = build_runtime(settings, TEST_TUNING)
    yield runtime
    runtime.close()


@pytest.fixture
def client(rt: Runtime) -> Iterator[TestClient]:
    with TestClient(create_app(rt)) as c:
        yield c
