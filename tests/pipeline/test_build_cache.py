"""The scorer cache: a build is known by what decides it, and only a whole
folder of its key is ever taken from the cache."""

import json
import os
import shutil

import pytest

from pipeline import build_cache
from pipeline.build_cache import (
    build_key,
    keep_build,
    keep_in_cache,
    model_identity,
    scorer_cache,
    take_from_cache,
)
from tests.pipeline.test_bases import model_folder


class Trained(Exception):
    """Training started (and was stopped there)."""


def no_training(*args, **kwargs):
    raise Trained


def files(folder) -> dict[str, bytes]:
    """Every file of a folder by its name inside it."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file()
    }


def built(path, key):
    """A loadable model folder carrying ``key``."""
    model_folder(path)
    (path / "metadata.json").write_text(json.dumps({"build_key": key}))
    return path


def test_a_key_follows_the_bytes_not_the_path_or_the_time(tmp_path):
    recipe = tmp_path / "recipe.py"
    recipe.write_text("EPOCHS = 1\n")
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('{"id": "d1"}\n')
    shutil.copy(a, b)

    def key(path, **settings):
        return build_key(recipe=[recipe], settings=settings, inputs={"docs": [path]})

    assert key(a) == key(b)
    os.utime(b, (0, 0))
    assert key(a) == key(b)
    b.write_text('{"id": "d1"}\n{"id": "d2"}\n')
    assert key(a) != key(b)
    assert key(a, seed=1) != key(a)
    first = key(a)
    recipe.write_text("EPOCHS = 2\n")
    assert key(a) != first


def test_a_base_folder_is_known_by_its_build_not_its_path(tmp_path):
    one = built(tmp_path / "one", "k1")
    two = built(tmp_path / "elsewhere" / "two", "k1")
    assert model_identity(str(one)) == model_identity(str(two)) == "build_key:k1"
    plain = model_folder(tmp_path / "plain")  # no key: its files say what it is
    copy = shutil.copytree(plain, tmp_path / "copy")
    assert model_identity(str(plain)) == model_identity(str(copy))
    (copy / "model.safetensors").write_bytes(b"other weights")
    assert model_identity(str(plain)) != model_identity(str(copy))
    assert model_identity("hub/model") == "hub/model"


def test_the_cache_is_where_the_environment_says(tmp_path):
    assert scorer_cache({"SCORER_CACHE": str(tmp_path)}) == tmp_path
    assert scorer_cache({"XDG_CACHE_HOME": str(tmp_path)}) == (
        tmp_path / "safepassage" / "scorers"
    )


def test_a_copy_cut_short_leaves_nothing_under_the_key(tmp_path, monkeypatch):
    env = {"SCORER_CACHE": str(tmp_path / "cache")}
    build = built(tmp_path / "build", "k1")

    def cut_short(src, dst, **kwargs):
        dst.mkdir(exist_ok=True)
        shutil.copy(src / "config.json", dst)
        raise OSError("disk full")

    monkeypatch.setattr(build_cache.shutil, "copytree", cut_short)
    with pytest.raises(OSError, match="disk full"):
        keep_in_cache(build, "k1", env=env)
    assert list((tmp_path / "cache").iterdir()) == []
    monkeypatch.undo()
    assert files(keep_in_cache(build, "k1", env=env)) == files(build)


def test_a_copy_killed_midway_is_removed_by_the_next_one(tmp_path):
    env = {"SCORER_CACHE": str(tmp_path / "cache")}
    killed = tmp_path / "cache" / ".k0.abc.tmp"
    running = tmp_path / "cache" / ".k1.def.tmp"
    for folder in (killed, running):
        folder.mkdir(parents=True)
        (folder / "config.json").write_text("{}")
    long_ago = killed.stat().st_mtime - build_cache.STALE_COPY_SECONDS - 1
    os.utime(killed, (long_ago, long_ago))
    keep_in_cache(built(tmp_path / "build", "k1"), "k1", env=env)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [
        ".k1.def.tmp",
        "k1",
    ]


def test_a_broken_folder_under_the_key_is_passed_over_then_replaced(tmp_path):
    env = {"SCORER_CACHE": str(tmp_path / "cache")}
    half = built(tmp_path / "cache" / "k1", "k1")
    (half / "model.safetensors").unlink()
    out = tmp_path / "out"
    assert take_from_cache(out, "k1", env=env) is None
    assert not out.exists()
    build = built(tmp_path / "build", "k1")
    keep_in_cache(build, "k1", env=env)
    assert take_from_cache(out, "k1", env=env) == half
    assert files(out) == files(build)


def test_an_unwritable_cache_is_a_warning(tmp_path, capsys):
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("")
    keep_build(
        built(tmp_path / "build", "k1"), "k1", env={"SCORER_CACHE": str(not_a_folder)}
    )
    assert "warning: not kept in the scorer cache" in capsys.readouterr().err
