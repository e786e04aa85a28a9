"""Commits through GitHub's Git Data API: blobs, a tree on top of the parent's, a commit, a branch ref.

Nothing is cloned and nothing runs: the new tree is the parent's tree with the edited blobs replaced (their
file modes kept). Our commits carry a trailer so a later run can tell them from a person's push.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from githubkit import GitHub
from githubkit.exception import RequestFailed

TRAILER = "Accel-Audit-Fix"


async def commit_files(gh: GitHub[Any], owner: str, repo: str, parent: str, files: dict[str, tuple[str, str]], message: str) -> str:
    """One commit on ``parent`` replacing ``files`` (path -> (text, mode)); returns its SHA."""
    base = (await gh.arequest("GET", f"/repos/{owner}/{repo}/git/commits/{parent}")).json()
    entries = []
    for path, (text, mode) in sorted(files.items()):
        blob = (await gh.arequest("POST", f"/repos/{owner}/{repo}/git/blobs", json={"content": text, "encoding": "utf-8"})).json()
        entries.append({"path": path, "mode": mode, "type": "blob", "sha": blob["sha"]})
    tree = (await gh.arequest("POST", f"/repos/{owner}/{repo}/git/trees", json={"base_tree": base["tree"]["sha"], "tree": entries})).json()
    commit = (await gh.arequest("POST", f"/repos/{owner}/{repo}/git/commits",
                                json={"message": message, "tree": tree["sha"], "parents": [parent]})).json()
    return str(commit["sha"])


async def branch_tip(gh: GitHub[Any], owner: str, repo: str, branch: str) -> str | None:
    try:
        resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/git/ref/heads/{quote(branch, safe='/')}")
    except RequestFailed as exc:
        if exc.response.status_code == 404:
            return None
        raise
    return str(resp.json()["object"]["sha"])


async def ours(gh: GitHub[Any], owner: str, repo: str, sha: str, marker: str) -> bool:
    """Was the commit at ``sha`` made by this App for this fix (its message carries our trailer)?"""
    msg = (await gh.arequest("GET", f"/repos/{owner}/{repo}/git/commits/{sha}")).json().get("message") or ""
    return f"{TRAILER}: {marker}" in msg


async def set_branch(gh: GitHub[Any], owner: str, repo: str, branch: str, sha: str, exists: bool) -> None:
    """Point ``branch`` at ``sha`` (create it, or move it: our own branch, rebuilt on the PR's head)."""
    if exists:
        await gh.arequest("PATCH", f"/repos/{owner}/{repo}/git/refs/heads/{quote(branch, safe='/')}", json={"sha": sha, "force": True})
    else:
        await gh.arequest("POST", f"/repos/{owner}/{repo}/git/refs", json={"ref": f"refs/heads/{branch}", "sha": sha})


async def open_or_update_pr(gh: GitHub[Any], owner: str, repo: str, branch: str, into: str, title: str, body: str) -> tuple[dict[str, Any], bool]:
    """The open PR from ``branch`` into ``into``, its body updated, or a new one: (pull, created)."""
    resp = await gh.arequest("GET", f"/repos/{owner}/{repo}/pulls", params={"head": f"{owner}:{branch}", "state": "open", "per_page": 10})
    for pr in resp.json():
        if (pr.get("head") or {}).get("ref") == branch:
            upd = await gh.arequest("PATCH", f"/repos/{owner}/{repo}/pulls/{pr['number']}", json={"title": title, "body": body})
            return upd.json(), False
    created = await gh.arequest("POST", f"/repos/{owner}/{repo}/pulls", json={"title": title, "head": branch, "base": into, "body": body,
                                                                              "maintainer_can_modify": True})
    return created.json(), True
