"""The diff index: which lines of which side a review comment may target."""

from __future__ import annotations

import pytest

from review.diff import LEFT, RIGHT, DiffError, parse_diff, parse_files

from .review_util import diff_of

TWO_HUNKS_BASE = "".join(f"line{i}\n" for i in range(1, 31))
TWO_HUNKS_HEAD = TWO_HUNKS_BASE.replace("line3\n", "line3 changed\n").replace("line25\n", "").replace("line27\n", "line27\nnew after 27\n")


def test_added_changed_removed_lines_and_sides(tmp_path):
    d = parse_diff(diff_of(tmp_path, {"a.yaml": "x: 1\ny: 2\nz: 3\n"}, {"a.yaml": "x: 1\ny: 5\nz: 3\nw: 4\n"}))
    f = d.head("a.yaml")
    assert f is not None and f.status == "modified"
    assert f.added == {2: "y: 5", 4: "w: 4"}
    assert f.removed == {2: "y: 2"}
    assert d.valid_target("a.yaml", 2, RIGHT) and d.valid_target("a.yaml", 4, RIGHT)
    assert d.valid_target("a.yaml", 2, LEFT)
    assert d.valid_target("a.yaml", 1, RIGHT)  # context line inside the hunk
    assert not d.valid_target("a.yaml", 4, LEFT)  # base has no line 4 in the hunk
    assert not d.valid_target("a.yaml", 9, RIGHT)
    assert not d.valid_target("other.yaml", 1, RIGHT)
    assert not d.valid_target("a.yaml", 2, "BOTH")


def test_multiple_hunks_and_ranges_stay_in_one_hunk(tmp_path):
    d = parse_diff(diff_of(tmp_path, {"f.txt": TWO_HUNKS_BASE}, {"f.txt": TWO_HUNKS_HEAD}))
    f = d.head("f.txt")
    assert len(f.hunks) == 2
    assert f.added[3] == "line3 changed"
    assert f.removed[25] == "line25"
    assert 27 in f.added and f.added[27] == "new after 27"
    assert d.valid_target("f.txt", 3, RIGHT)
    assert not d.valid_target("f.txt", 15, RIGHT)  # between the hunks
    assert d.valid_target("f.txt", 4, RIGHT, start_line=2, start_side=RIGHT)
    assert not d.valid_target("f.txt", 27, RIGHT, start_line=3, start_side=RIGHT)  # spans two hunks
    assert not d.valid_target("f.txt", 3, RIGHT, start_line=4, start_side=RIGHT)  # start after end


def test_renamed_file_keeps_both_names(tmp_path):
    body = "".join(f"key{i}: {i}\n" for i in range(20))
    d = parse_diff(diff_of(tmp_path, {"old/cfg.yaml": body}, {"new/cfg.yaml": body.replace("key19: 19", "key19: 190")}))
    f = d.head("new/cfg.yaml")
    assert f is not None and f.status == "renamed"
    assert f.source_path == "old/cfg.yaml" and d.base("old/cfg.yaml") is f
    assert f.path == "new/cfg.yaml"
    assert f.removed == {20: "key19: 19"} and f.added == {20: "key19: 190"}
    assert d.valid_target("new/cfg.yaml", 20, LEFT)
    assert not d.valid_target("old/cfg.yaml", 20, LEFT)  # comments name the head path


def test_pure_rename_has_no_hunks(tmp_path):
    body = "a: 1\nb: 2\n"
    d = parse_diff(diff_of(tmp_path, {"x.yaml": body}, {"y.yaml": body}))
    f = d.head("y.yaml")
    assert f.status == "renamed" and f.hunks == []
    assert not d.valid_target("y.yaml", 1, RIGHT)


def test_crlf_lines_lose_only_the_line_ending(tmp_path):
    d = parse_diff(diff_of(tmp_path, {"w.yaml": b"a: 1\r\nb: 2\r\nc: 3\r\n"}, {"w.yaml": b"a: 1\r\nb: 7\r\nc: 3\r\n"}))
    f = d.head("w.yaml")
    assert f.added == {2: "b: 7"} and f.removed == {2: "b: 2"}
    assert f.crlf
    assert f.text(RIGHT, 1) == "a: 1"


def test_no_newline_at_end_of_file(tmp_path):
    d = parse_diff(diff_of(tmp_path, {"n.py": "x = 1\ny = 2"}, {"n.py": "x = 1\ny = 3"}))
    f = d.head("n.py")
    assert f.added == {2: "y = 3"} and f.removed == {2: "y = 2"}
    assert d.valid_target("n.py", 2, RIGHT) and d.valid_target("n.py", 2, LEFT)
    assert not d.valid_target("n.py", 3, RIGHT)


def test_binary_files_are_never_targets(tmp_path):
    d = parse_diff(diff_of(tmp_path, {"w.bin": b"\x00\x01\x02", "a.txt": "a\n"}, {"w.bin": b"\x00\x01\x03", "a.txt": "b\n"}))
    f = d.head("w.bin")
    assert f is not None and f.binary and not f.hunks
    assert not d.valid_target("w.bin", 1, RIGHT)
    assert d.valid_target("a.txt", 1, RIGHT)


def test_added_and_deleted_files(tmp_path):
    d = parse_diff(diff_of(tmp_path, {"gone.sh": "export NCCL_IB_HCA=mlx5\n", "k.txt": "k\n"}, {"new.sh": "torchrun x.py\n", "k.txt": "k\n"}))
    gone = d.base("gone.sh")
    assert gone.status == "removed" and gone.path == "gone.sh" and gone.target_path is None
    assert d.valid_target("gone.sh", 1, LEFT) and not d.valid_target("gone.sh", 1, RIGHT)
    new = d.head("new.sh")
    assert new.status == "added" and new.source_path is None and d.valid_target("new.sh", 1, RIGHT)


def test_files_api_list_matches_the_diff():
    files = [
        {"filename": "cfg/train.yaml", "status": "modified", "patch": "@@ -1,3 +1,3 @@\n a: 1\n-save_steps: 500\n+save_steps: 1\n c: 3"},
        {"filename": "new/name.yaml", "previous_filename": "old/name.yaml", "status": "renamed",
         "patch": "@@ -2,2 +2,2 @@ x\n-bf16: true\n+bf16: false\n z: 1"},
        {"filename": "model.bin", "status": "modified"},
        {"filename": "crlf.yaml", "status": "modified", "patch": "@@ -1,2 +1,2 @@\n-a: 1\r\n+a: 2\r\n b: 2\r"},
    ]
    d = parse_files(files)
    t = d.head("cfg/train.yaml")
    assert t.added == {2: "save_steps: 1"} and t.removed == {2: "save_steps: 500"}
    r = d.base("old/name.yaml")
    assert r is d.head("new/name.yaml") and r.status == "renamed" and r.path == "new/name.yaml"
    assert d.valid_target("new/name.yaml", 2, LEFT) and d.valid_target("new/name.yaml", 2, RIGHT)
    assert not d.valid_target("model.bin", 1, RIGHT)
    assert d.head("crlf.yaml").added == {1: "a: 2"}


def test_garbage_hunk_header_is_an_error():
    with pytest.raises(DiffError):
        parse_diff("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\n")
