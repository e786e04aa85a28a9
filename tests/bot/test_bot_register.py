"""``accel-audit register``: the manifest flow against a mocked GitHub, with real HTTP requests to the local server."""

from __future__ import annotations

import html
import json
import re
import stat
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import httpx
import pytest
import respx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from accel_audit.cli import main
from accel_audit.commands.register import Registration, api_url_for, load_manifest, new_app_url
from bot.registered import ENV_FILE, KEY_FILE, with_registered
from bot.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]


def _pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()).decode()


PEM = _pem()


def conversion(app_id: int = 424242, html_url: str = "https://github.com/apps/accel-audit-acme") -> dict:
    """The shape of GitHub's 201 answer to ``POST /app-manifests/{code}/conversions``."""
    return {
        "id": app_id, "slug": html_url.rsplit("/", 1)[1], "node_id": "A_kwDOBBBB", "name": "accel-audit-acme",
        "owner": {"login": "acme", "id": 9, "type": "Organization"}, "description": "", "external_url": "https://audit.acme.dev",
        "html_url": html_url, "created_at": "2026-12-01T10:00:00Z", "updated_at": "2026-12-01T10:00:00Z",
        "permissions": {"checks": "write", "pull_requests": "write", "contents": "write", "issues": "write", "metadata": "read"},
        "events": ["check_run", "issue_comment", "pull_request"],
        "client_id": "Iv1.0123456789abcdef", "client_secret": "cs_" + "x" * 37, "webhook_secret": "whs_" + "y" * 36, "pem": PEM,
    }


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, never through a proxy


def get(url: str) -> tuple[int, str]:
    try:
        with _DIRECT.open(url, timeout=10) as resp:  # a real request to 127.0.0.1 (urllib: respx does not touch it)
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def form(page: str) -> tuple[str, dict]:
    action = html.unescape(re.search(r"action='([^']+)'", page).group(1))
    manifest = json.loads(html.unescape(re.search(r"name='manifest' value='([^']+)'", page).group(1)))
    return action, manifest


def test_the_repo_manifest_and_the_packaged_copy_are_the_same() -> None:
    shipped = json.loads((ROOT / "accel_audit" / "app-manifest.json").read_text())
    assert shipped == json.loads((ROOT / "deploy" / "app-manifest.json").read_text()) == load_manifest()


@pytest.mark.parametrize(("github_url", "org", "api", "new"), [
    ("https://github.com", None, "https://api.github.com", "https://github.com/settings/apps/new?state=S"),
    ("https://github.com/", "acme", "https://api.github.com", "https://github.com/organizations/acme/settings/apps/new?state=S"),
    ("https://ghe.acme.dev", "ml-infra", "https://ghe.acme.dev/api/v3", "https://ghe.acme.dev/organizations/ml-infra/settings/apps/new?state=S"),
])
def test_urls_for_github_and_enterprise_server(github_url: str, org: str | None, api: str, new: str) -> None:
    assert api_url_for(github_url) == api
    assert new_app_url(github_url, org, "S") == new


@respx.mock
def test_the_manifest_flow_stores_what_serve_reads(tmp_path: Path) -> None:
    route = respx.post("https://api.github.com/app-manifests/c0de123/conversions").mock(return_value=httpx.Response(201, json=conversion()))
    data = tmp_path / "data"
    reg = Registration("https://github.com", "acme", "https://audit.acme.dev/", data)
    local = reg.start()
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", local)
        status, page = get(local)
        assert status == 200
        action, manifest = form(page)
        assert action == f"https://github.com/organizations/acme/settings/apps/new?state={reg.state}"
        assert manifest["hook_attributes"] == {"url": "https://audit.acme.dev/api/github/webhooks", "active": True}
        assert manifest["redirect_url"] == local + "callback"
        assert manifest["default_permissions"] == load_manifest()["default_permissions"]
        assert "method='post'" in page

        # a redirect with another state is refused and nothing is stored or exchanged
        status, body = get(local + "callback?code=c0de123&state=forged")
        assert status == 400 and "does not match" in body
        assert not route.called and not data.exists()

        status, body = get(f"{local}callback?code=c0de123&state={reg.state}")
        assert status == 200 and "https://github.com/apps/accel-audit-acme/installations/new" in body
        assert reg.done.is_set()
        status, _ = get(f"{local}callback?code=c0de123&state={reg.state}")  # a replay
        assert status == 410
    finally:
        reg.stop()
    assert route.call_count == 1
    assert route.calls[0].request.headers["accept"] == "application/vnd.github+json"

    env_file, key_file = data / ENV_FILE, data / KEY_FILE
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600 and stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert key_file.read_text() == PEM.strip() + "\n"
    text = env_file.read_text()
    assert "ACCEL_APP_ID=424242\n" in text and "ACCEL_WEBHOOK_SECRET=whs_" in text and "ACCEL_GITHUB_API_URL" not in text
    assert "client_secret" not in text and "cs_" not in text  # not needed by the App: not kept

    settings = load_settings(with_registered({"ACCEL_DATA_DIR": str(data)}))
    assert settings.app_id == 424242 and settings.webhook_secret == "whs_" + "y" * 36
    assert settings.private_key == PEM.strip() + "\n" and settings.github_api_url == "https://api.github.com"
    # the environment's own values win
    assert load_settings(with_registered({"ACCEL_DATA_DIR": str(data), "ACCEL_APP_ID": "7"})).app_id == 7


@respx.mock
def test_enterprise_server_exchange_and_api_url(tmp_path: Path) -> None:
    respx.post("https://ghe.acme.dev/api/v3/app-manifests/xyz/conversions").mock(
        return_value=httpx.Response(201, json=conversion(5, "https://ghe.acme.dev/github-apps/accel-audit")))
    reg = Registration("https://ghe.acme.dev", None, "https://audit.acme.dev", tmp_path)
    local = reg.start()
    try:
        action, _ = form(get(local)[1])
        assert action.startswith("https://ghe.acme.dev/settings/apps/new?state=")
        assert get(f"{local}callback?code=xyz&state={reg.state}")[0] == 200
    finally:
        reg.stop()
    assert "ACCEL_GITHUB_API_URL=https://ghe.acme.dev/api/v3\n" in (tmp_path / ENV_FILE).read_text()
    assert load_settings(with_registered({"ACCEL_DATA_DIR": str(tmp_path)})).github_api_url == "https://ghe.acme.dev/api/v3"


@respx.mock
def test_an_expired_code_stores_nothing(tmp_path: Path) -> None:
    respx.post("https://api.github.com/app-manifests/old/conversions").mock(return_value=httpx.Response(404, json={"message": "Not Found"}))
    reg = Registration("https://github.com", None, "https://audit.acme.dev", tmp_path / "d")
    local = reg.start()
    try:
        status, body = get(f"{local}callback?code=old&state={reg.state}")
    finally:
        reg.stop()
    assert status == 502 and "HTTP 404: Not Found" in body and "run register again" in body
    assert reg.error and not (tmp_path / "d").exists()


@respx.mock
def test_the_command_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    respx.post("https://api.github.com/app-manifests/abc/conversions").mock(return_value=httpx.Response(201, json=conversion()))
    out: dict[str, int] = {}
    t = threading.Thread(target=lambda: out.update(code=main([
        "register", "--public-url", "https://audit.acme.dev", "--data-dir", str(tmp_path), "--no-browser", "--timeout", "60"])))
    t.start()
    local = None
    for _ in range(200):
        m = re.search(r"Open (http://127\.0\.0\.1:\d+/) ", capsys.readouterr().out)
        if m:
            local = m.group(1)
            break
        time.sleep(0.05)
    assert local
    _, page = get(local)
    state = re.search(r"state=([\w-]+)", html.unescape(page)).group(1)
    assert get(f"{local}callback?code=abc&state={state}")[0] == 200
    t.join(30)
    assert out["code"] == 0
    printed = capsys.readouterr().out
    assert "Install it on your repositories: https://github.com/apps/accel-audit-acme/installations/new" in printed
    assert "whs_" not in printed and "BEGIN RSA" not in printed  # secrets never printed
    # a second registration into the same directory loses nothing
    assert main(["register", "--public-url", "https://audit.acme.dev", "--data-dir", str(tmp_path), "--no-browser"]) == 2
    assert "an App is already registered here" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "message"), [
    (["--public-url", "audit.acme.dev"], "--public-url: not an http(s) URL"),
    (["--public-url", "https://a.dev", "--github-url", "ghe"], "--github-url: not an http(s) URL"),
])
def test_bad_urls_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert main(["register", *args, "--data-dir", str(tmp_path), "--no-browser"]) == 2
    assert message in capsys.readouterr().err


def test_serve_reads_the_registered_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from accel_audit.commands.serve import _settings

    (tmp_path / KEY_FILE).write_text(PEM)
    (tmp_path / ENV_FILE).write_text(f"# c\nACCEL_APP_ID=99\nACCEL_WEBHOOK_SECRET=s3cret-s3cret\nACCEL_PRIVATE_KEY_PATH={KEY_FILE}\nOTHER=x\n")
    for k in ("ACCEL_APP_ID", "ACCEL_WEBHOOK_SECRET", "ACCEL_PRIVATE_KEY_PATH", "ACCEL_PRIVATE_KEY", "ACCEL_GITHUB_API_URL", "ACCEL_REDIS_URL"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("ACCEL_DATA_DIR", str(tmp_path))
    settings = _settings()
    assert settings is not None and settings.app_id == 99 and settings.webhook_secret == "s3cret-s3cret"
    assert "OTHER" not in with_registered({"ACCEL_DATA_DIR": str(tmp_path)})
