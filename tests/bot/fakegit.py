"""The fake GitHub of ``fakegh`` plus what ``/accel fix`` uses: collaborator permission, the Git Data API
(commits, blobs, trees, refs) and pull requests created/listed/updated. Validates what GitHub validates that
matters here: a tree's base and a commit's tree and parents must exist, a ref is created once."""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
from typing import Any

import httpx

from .fakegh import FakeGitHub


class FakeGitData(FakeGitHub):
    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.permissions: dict[str, str] = {}
        self.blobs: dict[str, str] = {}
        self.trees: dict[str, dict[str, Any]] = {}
        self.commits: dict[str, dict[str, Any]] = {}
        self.refs: dict[str, str] = {}

    def _sha(self, *parts: str) -> str:
        return hashlib.sha1("\0".join(parts).encode()).hexdigest()

    def _commit(self, sha: str) -> dict[str, Any] | None:
        if sha in self.commits:
            return self.commits[sha]
        if sha in self.tarballs:
            return {"sha": sha, "tree": {"sha": "e" * 40}, "message": "a person's commit", "parents": []}
        return None

    def _file_at(self, ref: str, rel: str) -> bytes | None:
        blob = self.tarballs.get(ref)
        if blob is None:
            return None
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tf:
            for m in tf:
                if m.isfile() and m.name.split("/", 1)[-1] == rel:
                    f = tf.extractfile(m)
                    return f.read() if f else None
        return None

    def _repo_api(self, request: httpx.Request, path: str, body: Any) -> httpx.Response:
        o, r = self.owner, self.repo
        meth = request.method
        pre = f"/repos/{o}/{r}"
        m = re.fullmatch(rf"{pre}/collaborators/([^/]+)/permission", path)
        if m and meth == "GET":
            role = self.permissions.get(m.group(1))
            if role is None:
                return httpx.Response(404, json={"message": "Not Found"})
            return httpx.Response(200, json={"permission": {"maintain": "write", "triage": "read"}.get(role, role), "role_name": role})
        m = re.fullmatch(rf"{pre}/contents/(.+)", path)
        if m and meth == "GET" and not m.group(1).startswith(".github/"):
            data = self._file_at(request.url.params.get("ref", ""), m.group(1))
            return httpx.Response(200, content=data) if data is not None else httpx.Response(404, json={"message": "Not Found"})
        m = re.fullmatch(rf"{pre}/git/commits/([0-9a-f]{{40}})", path)
        if m and meth == "GET":
            c = self._commit(m.group(1))
            return httpx.Response(200, json=c) if c else httpx.Response(404, json={"message": "Not Found"})
        if path == f"{pre}/git/blobs" and meth == "POST":
            if body.get("encoding") != "utf-8" or not isinstance(body.get("content"), str):
                return httpx.Response(422, json={"message": "Invalid blob"})
            sha = self._sha("blob", body["content"])
            self.blobs[sha] = body["content"]
            return httpx.Response(201, json={"sha": sha})
        if path == f"{pre}/git/trees" and meth == "POST":
            base = body.get("base_tree")
            if base != "e" * 40 and base not in self.trees:
                return httpx.Response(422, json={"message": "base_tree not found"})
            for e in body["tree"]:
                if e["sha"] not in self.blobs or e["mode"] not in ("100644", "100755") or e["type"] != "blob":
                    return httpx.Response(422, json={"message": "bad tree entry"})
            sha = self._sha("tree", base, repr(body["tree"]))
            self.trees[sha] = body
            return httpx.Response(201, json={"sha": sha})
        if path == f"{pre}/git/commits" and meth == "POST":
            if body["tree"] not in self.trees or any(self._commit(p) is None for p in body["parents"]):
                return httpx.Response(422, json={"message": "tree or parent not found"})
            sha = self._sha("commit", body["tree"], body["message"], *body["parents"], str(len(self.commits)))
            self.commits[sha] = {"sha": sha, "tree": {"sha": body["tree"]}, "message": body["message"], "parents": [{"sha": p} for p in body["parents"]]}
            return httpx.Response(201, json=self.commits[sha])
        m = re.fullmatch(rf"{pre}/git/ref/heads/(.+)", path)
        if m and meth == "GET":
            sha = self.refs.get(m.group(1))
            return httpx.Response(200, json={"ref": f"refs/heads/{m.group(1)}", "object": {"sha": sha, "type": "commit"}}) if sha \
                else httpx.Response(404, json={"message": "Not Found"})
        if path == f"{pre}/git/refs" and meth == "POST":
            name = body["ref"].removeprefix("refs/heads/")
            if name in self.refs:
                return httpx.Response(422, json={"message": "Reference already exists"})
            if self._commit(body["sha"]) is None:
                return httpx.Response(422, json={"message": "Object does not exist"})
            self.refs[name] = body["sha"]
            return httpx.Response(201, json={"ref": body["ref"], "object": {"sha": body["sha"]}})
        m = re.fullmatch(rf"{pre}/git/refs/heads/(.+)", path)
        if m and meth == "PATCH":
            if m.group(1) not in self.refs:
                return httpx.Response(422, json={"message": "Reference does not exist"})
            self.refs[m.group(1)] = body["sha"]
            return httpx.Response(200, json={"object": {"sha": body["sha"]}})
        if path == f"{pre}/pulls" and meth == "GET":
            head = request.url.params.get("head", "")
            ref = head.split(":", 1)[-1]
            return httpx.Response(200, json=[p for p in self.pulls.values() if p["head"]["ref"] == ref and p["state"] == "open"])
        if path == f"{pre}/pulls" and meth == "POST":
            if body["head"] not in self.refs:
                return httpx.Response(422, json={"message": "head does not exist"})
            n = 100 + len(self.pulls)
            pr = {"number": n, "state": "open", "title": body["title"], "body": body["body"], "html_url": f"https://github.com/{o}/{r}/pull/{n}",
                  "head": {"ref": body["head"], "sha": self.refs[body["head"]]}, "base": {"ref": body["base"]}}
            self.pulls[n] = pr
            return httpx.Response(201, json=pr)
        m = re.fullmatch(rf"{pre}/pulls/(\d+)", path)
        if m and meth == "PATCH":
            pr = self.pulls[int(m.group(1))]
            pr.update({k: v for k, v in body.items() if k in ("title", "body")})
            return httpx.Response(200, json=pr)
        return super()._repo_api(request, path, body)
