"""``accel-audit register``: create the GitHub App from ``deploy/app-manifest.json`` in one step (the manifest flow).

As probot does it: a page served on 127.0.0.1 posts the manifest (with this deployment's webhook URL and a
one-time ``state``) to GitHub's "new App" page (``/settings/apps/new``, or ``/organizations/ORG/settings/apps/new``;
the same paths on a GitHub Enterprise Server). After you confirm, GitHub redirects the browser back to the
local server with a temporary ``code``; it is exchanged with ``POST /app-manifests/{code}/conversions`` for the
App's ID, private key and webhook secret, which are stored where ``serve`` finds them
(``<ACCEL_DATA_DIR>/app.env`` and the key file, both mode 0600). The install link is printed.

Exit codes: 0 registered; 1 GitHub refused the exchange or the time ran out; 2 bad arguments or existing
credentials (nothing is overwritten).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import sys
import threading
import webbrowser
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from secrets import token_urlsafe
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx

from bot.registered import ENV_FILE, KEY_FILE, data_dir

DEFAULT_GITHUB_URL = "https://github.com"
WEBHOOK_PATH = "/api/github/webhooks"


class RegisterError(Exception):
    """A one-line reason the registration cannot go on."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("register", help="create the GitHub App from its manifest and store its credentials for serve")
    p.add_argument("--public-url", required=True, metavar="URL",
                   help=f"the https URL where `accel-audit serve` is reachable (webhooks go to URL{WEBHOOK_PATH})")
    p.add_argument("--org", metavar="ORG", help="create the App in this organization (default: your user account)")
    p.add_argument("--github-url", default=DEFAULT_GITHUB_URL, metavar="URL",
                   help="GitHub's web address; a GitHub Enterprise Server: https://HOST (default https://github.com)")
    p.add_argument("--name", help="the App's name (default: the manifest's; GitHub App names are unique)")
    p.add_argument("--data-dir", help="where to store the credentials (default: ACCEL_DATA_DIR, else ./.accel-audit)")
    p.add_argument("--port", type=int, default=0, help="local port of the registration page (default: any free port)")
    p.add_argument("--no-browser", action="store_true", help="only print the local address to open")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for GitHub's redirect (default 900)")
    p.set_defaults(func=run)


def api_url_for(github_url: str) -> str:
    """REST API base of a GitHub web address: api.github.com, or https://HOST/api/v3 on a GitHub Enterprise Server."""
    parts = urlsplit(github_url.rstrip("/"))
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RegisterError(f"--github-url: not an http(s) URL: {github_url!r}")
    if parts.netloc.lower() in ("github.com", "www.github.com"):
        return "https://api.github.com"
    return f"{parts.scheme}://{parts.netloc}/api/v3"


def new_app_url(github_url: str, org: str | None, state: str) -> str:
    base = github_url.rstrip("/")
    path = f"/organizations/{quote(org, safe='')}/settings/apps/new" if org else "/settings/apps/new"
    return f"{base}{path}?state={quote(state, safe='')}"


def load_manifest() -> dict[str, Any]:
    """The App manifest shipped in the package (a copy of ``deploy/app-manifest.json``; a test keeps them equal)."""
    return json.loads(resources.files("accel_audit").joinpath("app-manifest.json").read_text(encoding="utf-8"))


def manifest_for(public_url: str, redirect_url: str, name: str | None = None) -> dict[str, Any]:
    parts = urlsplit(public_url.rstrip("/"))
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RegisterError(f"--public-url: not an http(s) URL: {public_url!r} (the address GitHub sends webhooks to)")
    base = public_url.rstrip("/")
    manifest = load_manifest()
    manifest["hook_attributes"] = {**manifest.get("hook_attributes", {}), "url": base + WEBHOOK_PATH, "active": True}
    manifest["redirect_url"] = redirect_url
    manifest["url"] = base
    if name:
        manifest["name"] = name
    return manifest


def form_page(action: str, manifest: dict[str, Any]) -> str:
    """The page that submits the manifest to GitHub (a form POST, as GitHub requires)."""
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Register accel-audit</title></head><body>"
        f"<form id='f' method='post' action='{html.escape(action, quote=True)}'>"
        f"<input type='hidden' name='manifest' value='{html.escape(json.dumps(manifest), quote=True)}'>"
        "<p>This page sends the accel-audit App manifest to GitHub, where you confirm the App's name.</p>"
        "<button type='submit'>Create the GitHub App</button></form>"
        "<script>document.getElementById('f').submit()</script></body></html>"
    )


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(path, 0o600)


def store_credentials(directory: Path, app: dict[str, Any], api_url: str) -> Path:
    """Write the key and ``app.env`` (0600, never overwriting); returns the env file's path."""
    for field_name in ("id", "pem", "webhook_secret"):
        if not app.get(field_name):
            raise RegisterError(f"GitHub's answer has no {field_name!r}: nothing stored")
    directory.mkdir(parents=True, exist_ok=True)
    key_path = (directory / KEY_FILE).resolve()
    env_path = directory / ENV_FILE
    for p in (env_path, key_path):
        if p.exists():
            raise RegisterError(f"{p} exists: remove it (or pass another --data-dir) to register a new App")
    _write_private(key_path, app["pem"].strip() + "\n")
    lines = [
        f"# written by accel-audit register: the GitHub App {app.get('slug') or app.get('name') or ''} ({app.get('html_url', '')})",
        f"ACCEL_APP_ID={int(app['id'])}",
        f"ACCEL_WEBHOOK_SECRET={app['webhook_secret']}",
        f"ACCEL_PRIVATE_KEY_PATH={key_path}",
    ]
    if api_url != "https://api.github.com":
        lines.append(f"ACCEL_GITHUB_API_URL={api_url}")
    _write_private(env_path, "\n".join(lines) + "\n")
    return env_path


def exchange(api_url: str, code: str, client: httpx.Client | None = None) -> dict[str, Any]:
    """``POST /app-manifests/{code}/conversions``: the new App with ``id``, ``pem``, ``webhook_secret``."""
    own = client is None
    client = client or httpx.Client(timeout=30.0)
    try:
        resp = client.post(f"{api_url}/app-manifests/{quote(code, safe='')}/conversions",
                           headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"})
    except httpx.HTTPError as exc:
        raise RegisterError(f"cannot reach {api_url}: {exc}") from None
    finally:
        if own:
            client.close()
    if resp.status_code != 201:
        try:
            message = resp.json().get("message", "")
        except ValueError:
            message = ""
        raise RegisterError(f"GitHub refused the manifest code (HTTP {resp.status_code}{': ' + message if message else ''}); "
                            "codes expire after an hour and work once: run register again")
    return resp.json()


@dataclass(slots=True)
class Registration:
    """The local server's state: one manifest, one ``state``, one successful exchange."""

    github_url: str
    org: str | None
    public_url: str
    directory: Path
    name: str | None = None
    state: str = field(default_factory=lambda: token_urlsafe(24))
    done: threading.Event = field(default_factory=threading.Event)
    app: dict[str, Any] | None = None
    env_path: Path | None = None
    error: str | None = None
    server: ThreadingHTTPServer | None = None

    @property
    def api_url(self) -> str:
        return api_url_for(self.github_url)

    @property
    def local_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self, port: int = 0) -> str:
        api_url_for(self.github_url)  # validate before listening
        manifest_for(self.public_url, "http://127.0.0.1/callback", self.name)
        self.server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        threading.Thread(target=self.server.serve_forever, name="accel-audit-register", daemon=True).start()
        return self.local_url

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def page(self) -> str:
        manifest = manifest_for(self.public_url, self.local_url + "callback", self.name)
        return form_page(new_app_url(self.github_url, self.org, self.state), manifest)

    def callback(self, query: str) -> tuple[int, str]:
        params = parse_qs(query)
        code, state = (params.get("code") or [""])[0], (params.get("state") or [""])[0]
        if self.done.is_set():
            return 410, "This registration is finished."
        if not code:
            return 400, "No code in the redirect from GitHub."
        if state != self.state:
            return 400, "The state does not match this registration (a stale or forged redirect): nothing was stored."
        try:
            app = exchange(self.api_url, code)
            self.env_path = store_credentials(self.directory, app, self.api_url)
        except RegisterError as exc:
            self.error = str(exc)
            self.done.set()
            return 502, f"Registration failed: {exc}"
        self.app = app
        self.done.set()
        return 200, f"The GitHub App is registered. Install it: <a href='{html.escape(install_url(app), quote=True)}'>{html.escape(install_url(app))}</a>"


def install_url(app: dict[str, Any]) -> str:
    return str(app.get("html_url", "")).rstrip("/") + "/installations/new"


def _handler(reg: Registration) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: str) -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/":
                self._send(200, reg.page())
            elif parts.path == "/callback":
                status, text = reg.callback(parts.query)
                self._send(status, f"<!doctype html><meta charset='utf-8'><p>{text}</p>")
            else:
                self._send(404, "not found")

        def log_message(self, format: str, *args: Any) -> None:  # the query holds the one-time code: no access log
            return

    return Handler


def run(args: argparse.Namespace) -> int:
    directory = Path(args.data_dir) if args.data_dir else data_dir(os.environ)
    existing = [p for p in (directory / ENV_FILE, directory / KEY_FILE) if p.exists()]
    if existing:
        print(f"accel-audit: {existing[0]} exists: an App is already registered here (remove it, or pass another --data-dir)", file=sys.stderr)
        return 2
    reg = Registration(args.github_url, args.org, args.public_url, directory, args.name)
    try:
        url = reg.start(args.port)
    except RegisterError as exc:
        print(f"accel-audit: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"accel-audit: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"Open {url} in a browser on this machine to create the GitHub App (webhooks: {args.public_url.rstrip('/')}{WEBHOOK_PATH}).")
    if not args.no_browser:
        webbrowser.open(url)
    try:
        finished = reg.done.wait(args.timeout)
    finally:
        reg.stop()
    if not finished:
        print(f"accel-audit: no redirect from GitHub within {args.timeout:g} s: nothing stored", file=sys.stderr)
        return 1
    if reg.error or reg.app is None:
        print(f"accel-audit: {reg.error}", file=sys.stderr)
        return 1
    print(f"Registered the GitHub App {reg.app.get('slug') or reg.app.get('name')} (ID {reg.app['id']}).")
    print(f"Credentials: {reg.env_path} and {directory / KEY_FILE} (mode 0600); `accel-audit serve` reads them from {directory}.")
    print(f"Install it on your repositories: {install_url(reg.app)}")
    return 0
