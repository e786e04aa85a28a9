"""A stateful fake of the GitHub REST endpoints the bot uses, at the HTTP layer.

One handler (``httpx.Request -> httpx.Response``) serves two ways: as a respx side effect (tests) and behind a
real HTTP server on 127.0.0.1 (the kill -9 test and the benchmark, where another process talks to it).
It checks what real GitHub checks that matters here: App JWTs (RS256, ``iat``/``exp``), installation tokens on
every installation call, and GitHub's limits on check-run output and annotations.
"""

from __future__ import annotations

import datetime as dt
import difflib
import io
import json
import re
import tarfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import jwt

API_HOST = "api.github.com"
CODELOAD_HOST = "codeload.github.com"


def make_tarball(files: dict[str, str | bytes], top: str = "octo-org-train-repo-abc1234") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for path, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size = len(data)
            info.mtime = 1_700_000_000
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def git_diff(base: dict[str, str], head: dict[str, str]) -> str:
    out: list[str] = []
    for path in sorted(set(base) | set(head)):
        a, b = base.get(path), head.get(path)
        if a == b:
            continue
        out.append(f"diff --git a/{path} b/{path}\n")
        if a is None:
            out.append("new file mode 100644\n")
        if b is None:
            out.append("deleted file mode 100644\n")
        lines = difflib.unified_diff(
            (a or "").splitlines(keepends=True), (b or "").splitlines(keepends=True),
            f"a/{path}" if a is not None else "/dev/null", f"b/{path}" if b is not None else "/dev/null", n=3,
        )
        out.extend(line if line.endswith("\n") else line + "\n" for line in lines)
    return "".join(out)


@dataclass
class Call:
    method: str
    path: str
    t: float
    auth: str
    body: Any = None


@dataclass
class CheckRun:
    id: int
    name: str
    head_sha: str
    status: str = "queued"
    conclusion: str | None = None
    output: dict[str, Any] = field(default_factory=dict)
    annotations: list[dict[str, Any]] = field(default_factory=list)
    patches: int = 0
    external_id: str = ""


class FakeGitHub:
    def __init__(self, app_id: int, public_key_pem: bytes, owner: str = "octo-org", repo: str = "train-repo", installation_id: int = 42) -> None:
        self.app_id = app_id
        self.public_key = public_key_pem
        self.owner, self.repo, self.installation_id = owner, repo, installation_id
        self.api_base = f"https://{API_HOST}"
        self.codeload_base = f"https://{CODELOAD_HOST}"
        self.lock = threading.RLock()
        self.calls: list[Call] = []
        self.tokens: set[str] = set()
        self.tarballs: dict[str, bytes] = {}
        self.configs: dict[tuple[str, str], str] = {}  # (repo, ref or "") -> text of .github/accel-audit.yml
        self.diffs: dict[int, str] = {}
        self.merge_bases: dict[str, str] = {}  # base tip sha -> merge base sha served by the compare API
        self.diff_406: set[int] = set()
        self.files: dict[int, list[dict[str, Any]]] = {}
        self.pulls: dict[int, dict[str, Any]] = {}
        self.check_runs: dict[int, CheckRun] = {}
        self.reviews: list[dict[str, Any]] = []
        self.review_comments: list[dict[str, Any]] = []
        self.issue_comments: list[dict[str, Any]] = []
        self.reactions: list[dict[str, Any]] = []
        self.hook_deliveries: list[dict[str, Any]] = []
        self.permissions: dict[str, str] = {}  # login -> role_name (admin, maintain, write, triage, read); others 404
        self.redelivered: list[int] = []
        self.injected: list[tuple[str, re.Pattern[str], httpx.Response]] = []  # answered first, once each
        self.hold_tarball: threading.Event | None = None  # when set, tarball downloads wait for it
        self.tarball_started = threading.Event()
        self.clock: Callable[[], float] = time.monotonic  # a test's clock: an outage ends when it says so
        self.down_until: float = float("-inf")  # GitHub answers 503 to everything until clock() reaches this
        self._ids = 1000

    # ------------------------------------------------------------------ set-up helpers
    def inject(self, method: str, path_regex: str, response: httpx.Response, times: int = 1) -> None:
        with self.lock:
            for _ in range(times):
                self.injected.append((method, re.compile(path_regex), response))

    def calls_to(self, method: str, path_regex: str) -> list[Call]:
        pat = re.compile(path_regex)
        return [c for c in self.calls if c.method == method and pat.search(c.path)]

    def runs_named(self, name: str = "Accel Audit") -> list[CheckRun]:
        return [r for r in self.check_runs.values() if r.name == name]

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids

    # ------------------------------------------------------------------ dispatch
    def handle(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        path = request.url.path
        if self.clock() < self.down_until:
            with self.lock:
                self.calls.append(Call(request.method, path, time.monotonic(), request.headers.get("authorization", "")))
            return httpx.Response(503, text="<html>Unicorn! GitHub is down</html>", headers={"content-type": "text/html"})
        if path.startswith("/_codeload/") or host == CODELOAD_HOST:
            return self._codeload(request)
        if path == "/_fake/state":  # for a benchmark in another process
            with self.lock:
                done = [r for r in self.check_runs.values() if r.status == "completed"]
                return httpx.Response(200, json={"completed": len(done), "check_runs": len(self.check_runs), "reviews": len(self.reviews),
                                                 "conclusions": sorted({str(r.conclusion) for r in done})})
        try:
            body = json.loads(request.content) if request.content else None
        except ValueError:
            body = None
        with self.lock:
            self.calls.append(Call(request.method, path, time.monotonic(), request.headers.get("authorization", ""), body))
            for i, (m, pat, resp) in enumerate(self.injected):
                if m == request.method and pat.search(path):
                    del self.injected[i]
                    return resp
        m = re.fullmatch(r"/app/installations/(\d+)/access_tokens", path)
        if m and request.method == "POST":
            return self._token(request, int(m.group(1)))
        if path.startswith("/app/"):
            return self._app_api(request, path)
        auth = request.headers.get("authorization", "")
        if not auth.startswith("token ") or auth[6:] not in self.tokens:
            return httpx.Response(401, json={"message": "Bad credentials"})
        with self.lock:
            return self._repo_api(request, path, body)

    def _jwt_ok(self, request: httpx.Request) -> bool:
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer "):
            return False
        try:
            claims = jwt.decode(auth[7:], self.public_key, algorithms=["RS256"], options={"require": ["iat", "exp", "iss"]}, leeway=5)
        except jwt.PyJWTError:
            return False
        return str(claims["iss"]) == str(self.app_id) and claims["exp"] - claims["iat"] <= 600 and claims["iat"] <= time.time() - 30

    def _token(self, request: httpx.Request, inst: int) -> httpx.Response:
        if not self._jwt_ok(request):
            return httpx.Response(401, json={"message": "A JSON web token could not be decoded"})
        if inst != self.installation_id:
            return httpx.Response(404, json={"message": "Not Found"})
        token = f"ghs_{self._next_id():036d}"
        with self.lock:
            self.tokens.add(token)
        expires = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return httpx.Response(201, json={"token": token, "expires_at": expires, "permissions": {"checks": "write"}, "repository_selection": "all"})

    def _app_api(self, request: httpx.Request, path: str) -> httpx.Response:
        if not self._jwt_ok(request):
            return httpx.Response(401, json={"message": "A JSON web token could not be decoded"})
        if path == "/app/hook/deliveries" and request.method == "GET":
            return httpx.Response(200, json=self.hook_deliveries)
        m = re.fullmatch(r"/app/hook/deliveries/(\d+)/attempts", path)
        if m and request.method == "POST":
            with self.lock:
                self.redelivered.append(int(m.group(1)))
            return httpx.Response(202, json={})
        return httpx.Response(404, json={"message": "Not Found"})

    def _codeload(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == CODELOAD_HOST and request.headers.get("authorization"):
            return httpx.Response(400, text="the archive host must not receive the API token")
        sha = request.url.path.rstrip("/").rsplit("/", 1)[-1]
        self.tarball_started.set()
        if self.hold_tarball is not None:
            self.hold_tarball.wait(60)
        data = self.tarballs.get(sha)
        if data is None:
            return httpx.Response(404, text="not found")
        return httpx.Response(200, content=data, headers={"content-type": "application/x-gzip"})

    def _repo_api(self, request: httpx.Request, path: str, body: Any) -> httpx.Response:
        o, r = self.owner, self.repo
        meth = request.method
        m = re.fullmatch(rf"/repos/{o}/([^/]+)/contents/\.github/accel-audit\.yml", path)
        if m and meth == "GET":
            ref = request.url.params.get("ref", "")
            text = self.configs.get((m.group(1), ref), self.configs.get((m.group(1), "*")))
            if text is None:
                return httpx.Response(404, json={"message": "Not Found"})
            return httpx.Response(200, content=text.encode(), headers={"content-type": "application/vnd.github.raw"})
        m = re.fullmatch(rf"/repos/{o}/{r}/tarball/([0-9a-f]+)", path)
        if m and meth == "GET":
            if m.group(1) not in self.tarballs:
                return httpx.Response(404, json={"message": "Not Found"})
            loc = f"{self.codeload_base}/_codeload/{o}/{r}/legacy.tar.gz/{m.group(1)}" if "127.0.0.1" in self.codeload_base \
                else f"{self.codeload_base}/{o}/{r}/legacy.tar.gz/{m.group(1)}"
            return httpx.Response(302, headers={"location": loc})
        m = re.fullmatch(rf"/repos/{o}/{r}/commits/([0-9a-f]+)/check-runs", path)
        if m and meth == "GET":
            name = request.url.params.get("check_name")
            runs = [c for c in self.check_runs.values() if c.head_sha == m.group(1) and (name is None or c.name == name)]
            return httpx.Response(200, json={"total_count": len(runs), "check_runs": [self._run_json(c) for c in runs]})
        m = re.fullmatch(rf"/repos/{o}/{r}/commits/([0-9a-f]+)/pulls", path)
        if m and meth == "GET":
            return httpx.Response(200, json=[p for p in self.pulls.values() if p["head"]["sha"] == m.group(1)])
        if path == f"/repos/{o}/{r}/check-runs" and meth == "POST":
            if not body.get("name") or not body.get("head_sha"):
                return httpx.Response(422, json={"message": "Validation Failed"})
            run = CheckRun(self._next_id(), body["name"], body["head_sha"], body.get("status", "queued"), external_id=body.get("external_id", ""))
            self.check_runs[run.id] = run
            return httpx.Response(201, json=self._run_json(run))
        m = re.fullmatch(rf"/repos/{o}/{r}/check-runs/(\d+)", path)
        if m and meth == "PATCH":
            run = self.check_runs.get(int(m.group(1)))
            if run is None:
                return httpx.Response(404, json={"message": "Not Found"})
            err = self._validate_output(body)
            if err:
                return httpx.Response(422, json={"message": err})
            run.patches += 1
            if "status" in body:
                run.status = body["status"]
            if "conclusion" in body:
                run.conclusion, run.status = body["conclusion"], "completed"
            if body.get("status") == "in_progress":
                run.conclusion = None
            out = body.get("output")
            if out:
                run.output.update({k: v for k, v in out.items() if k != "annotations"})
                run.annotations.extend(out.get("annotations", []))
            return httpx.Response(200, json=self._run_json(run))
        m = re.fullmatch(rf"/repos/{o}/{r}/check-runs/(\d+)/annotations", path)
        if m and meth == "GET":
            run = self.check_runs.get(int(m.group(1)))
            page = int(request.url.params.get("page", 1))
            per = int(request.url.params.get("per_page", 30))
            anns = run.annotations if run else []
            return httpx.Response(200, json=anns[(page - 1) * per : page * per])
        m = re.fullmatch(rf"/repos/{o}/{r}/pulls/(\d+)", path)
        if m and meth == "GET":
            n = int(m.group(1))
            if "diff" in request.headers.get("accept", ""):
                if n in self.diff_406:
                    return httpx.Response(406, json={"message": "Sorry, the diff exceeded the maximum number of files (300)."})
                return httpx.Response(200, content=self.diffs.get(n, "").encode(), headers={"content-type": "text/plain"})
            return httpx.Response(200, json=self.pulls[n]) if n in self.pulls else httpx.Response(404, json={"message": "Not Found"})
        m = re.fullmatch(rf"/repos/{o}/{r}/compare/([0-9a-f]+)\.\.\.([0-9a-f]+)", path)
        if m and meth == "GET":
            return httpx.Response(200, json={"merge_base_commit": {"sha": self.merge_bases.get(m.group(1), m.group(1))}})
        m = re.fullmatch(rf"/repos/{o}/{r}/pulls/(\d+)/files", path)
        if m and meth == "GET":
            page = int(request.url.params.get("page", 1))
            per = int(request.url.params.get("per_page", 30))
            files = self.files.get(int(m.group(1)), [])
            return httpx.Response(200, json=files[(page - 1) * per : page * per])
        m = re.fullmatch(rf"/repos/{o}/{r}/pulls/(\d+)/comments", path)
        if m and meth == "GET":
            n = int(m.group(1))
            return httpx.Response(200, json=[c for c in self.review_comments if c["pull_number"] == n])
        m = re.fullmatch(rf"/repos/{o}/{r}/pulls/(\d+)/reviews", path)
        if m and meth == "POST":
            n = int(m.group(1))
            if body.get("event") not in ("COMMENT", "REQUEST_CHANGES", "APPROVE"):
                return httpx.Response(422, json={"message": "event required"})
            rid = self._next_id()
            self.reviews.append(dict(body, id=rid, pull_number=n))
            for c in body.get("comments", []):
                self.review_comments.append(dict(c, id=self._next_id(), pull_number=n, user={"login": "accel-audit[bot]", "type": "Bot"}))
            return httpx.Response(200, json={"id": rid})
        m = re.fullmatch(rf"/repos/{o}/{r}/issues/(\d+)/comments", path)
        if m and meth == "POST":
            c = {"id": self._next_id(), "number": int(m.group(1)), "body": body["body"]}
            self.issue_comments.append(c)
            return httpx.Response(201, json=c)
        m = re.fullmatch(rf"/repos/{o}/{r}/collaborators/([^/]+)/permission", path)
        if m and meth == "GET":
            role = self.permissions.get(m.group(1))
            if role is None:
                return httpx.Response(404, json={"message": "Not Found"})
            perm = {"maintain": "write", "triage": "read"}.get(role, role)
            return httpx.Response(200, json={"permission": perm, "role_name": role, "user": {"login": m.group(1)}})
        m = re.fullmatch(rf"/repos/{o}/{r}/issues/comments/(\d+)/reactions", path)
        if m and meth == "POST":
            self.reactions.append({"comment_id": int(m.group(1)), "content": body["content"]})
            return httpx.Response(201, json={"id": self._next_id(), "content": body["content"]})
        if path in ("/graphql", "/api/graphql") and meth == "POST":
            return httpx.Response(200, json={"data": {"repository": {"pullRequest": {"reviewThreads": {
                "nodes": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}}}}})
        return httpx.Response(404, json={"message": f"Not Found (fake has no {meth} {path})"})

    @staticmethod
    def _validate_output(body: dict[str, Any]) -> str | None:
        out = body.get("output")
        if not out:
            return None
        if "title" not in out or "summary" not in out:
            return "output needs title and summary"
        if len(out["summary"]) > 65535 or len(out.get("text") or "") > 65535:
            return "output.summary/text over 65535 characters"
        anns = out.get("annotations") or []
        if len(anns) > 50:
            return "more than 50 annotations in one request"
        for a in anns:
            if not {"path", "start_line", "end_line", "annotation_level", "message"} <= set(a):
                return "annotation missing a required field"
        return None

    def _run_json(self, c: CheckRun) -> dict[str, Any]:
        return {"id": c.id, "name": c.name, "head_sha": c.head_sha, "status": c.status, "conclusion": c.conclusion,
                "external_id": c.external_id, "app": {"id": self.app_id}, "output": c.output}


# ---------------------------------------------------------------------- a real server on loopback

class FakeServer:
    """Serve a :class:`FakeGitHub` on 127.0.0.1 (another process can reach it)."""

    def __init__(self, fake: FakeGitHub, chunk: int = 1 << 16) -> None:
        handler_fn: Callable[[httpx.Request], httpx.Response] = fake.handle

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                content = self.rfile.read(length) if length else b""
                url = f"http://{self.headers.get('host', '127.0.0.1')}{self.path}"
                req = httpx.Request(self.command, url, headers=dict(self.headers.items()), content=content)
                resp = handler_fn(req)
                data = resp.content
                self.send_response(resp.status_code)
                for k, v in resp.headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                for i in range(0, len(data), chunk):
                    self.wfile.write(data[i : i + chunk])

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

            def log_message(self, *args: Any) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        fake.api_base = self.url
        fake.codeload_base = self.url
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
