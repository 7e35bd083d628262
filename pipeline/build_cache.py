"""Scorer builds cached by content, so that a machine trains one recipe once.

A build's key is a sha256 over what decides its result: the recipe (the
building code's source, the training settings, the base it starts from) and
the bytes of every input file, never a path or a file's time, so a checkout
that only touches files, or a second clone on the same machine, finds its
build again. The key is written into the scorer's ``metadata.json``
(``build_key``), and a copy of each build is kept in the machine's scorer
cache (``SCORER_CACHE``, by default ``$XDG_CACHE_HOME/safepassage/scorers``)
under its key. Folders enter the cache and leave it whole or not at all (a
copy under another name, then a rename), and only a loadable folder carrying
its own key is taken back.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import __version__
from .score import METADATA_FILE, model_folder_problem, read_metadata

#: The metadata field a build's key is written to.
KEY_FIELD = "build_key"
#: Compiled Python beside a recipe's sources changes with the interpreter,
#: not with the recipe.
_SKIPPED = {"__pycache__"}


def file_digest(path: str | Path) -> str:
    """sha256 of a file's bytes, read in chunks."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def tree_digest(path: str | Path) -> str:
    """sha256 of a file, or of a folder's files (names and bytes) but its
    ``__pycache__``."""
    root = Path(path)
    if not root.is_dir():
        return file_digest(root)
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*")):
        relative = file.relative_to(root)
        if file.is_file() and _SKIPPED.isdisjoint(relative.parts):
            digest.update(f"{relative.as_posix()}\0{file_digest(file)}\0".encode())
    return digest.hexdigest()


def code_of(*names: str) -> list[Path]:
    """Where each named module's source is, a package as its whole folder:
    the library code a recipe runs through, for :func:`build_key`."""
    modules = [importlib.import_module(name) for name in names]
    return [
        Path(m.__file__).parent if m.__name__ == m.__package__ else Path(m.__file__)
        for m in modules
        if m.__file__
    ]


def model_identity(model: str) -> str:
    """What a base model is, wherever it lies: a folder's own build key, else
    the digest of its files; a model name as it is."""
    if not Path(model).is_dir():
        return model
    if model_folder_problem(model) is None:
        key = read_metadata(model).get(KEY_FIELD)
        if key:
            return f"{KEY_FIELD}:{key}"
    return f"sha256:{tree_digest(model)}"


def build_key(
    *,
    recipe: Sequence[str | Path],
    settings: Mapping[str, Any],
    inputs: Mapping[str, Sequence[str | Path]],
) -> str:
    """The key of a build.

    Args:
        recipe: the source files or folders of the code that builds it.
        settings: what else shapes training (a base model through
            :func:`model_identity`, never a folder's path); JSON values.
        inputs: input files by role, in the order they are read.

    Returns:
        A sha256 hex digest.

    Raises:
        OSError: a file cannot be read.
    """
    described = {
        "pipeline_version": __version__,
        "recipe": [tree_digest(p) for p in recipe],
        "settings": settings,
        "inputs": {
            role: [file_digest(p) for p in files] for role, files in inputs.items()
        },
    }
    text = json.dumps(described, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def scorer_cache(env: Mapping[str, str] = os.environ) -> Path:
    """The machine's scorer cache: ``SCORER_CACHE``, else
    ``safepassage/scorers`` under ``XDG_CACHE_HOME`` (else ``~/.cache``)."""
    if env.get("SCORER_CACHE"):
        return Path(env["SCORER_CACHE"]).expanduser()
    home = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return home / "safepassage" / "scorers"


def built_with(folder: str | Path, key: str) -> bool:
    """Whether ``folder`` holds a loadable scorer of this key."""
    return (
        model_folder_problem(folder) is None
        and read_metadata(folder).get(KEY_FIELD) == key
    )


def mark_build(folder: str | Path, key: str) -> dict[str, Any]:
    """Write ``key`` into the metadata of the scorer in ``folder``.

    Returns:
        The metadata as written.
    """
    path = Path(folder) / METADATA_FILE
    metadata = {**read_metadata(folder), KEY_FIELD: key}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(metadata, indent=2), encoding="utf-8")
    tmp.replace(path)
    return metadata


@contextmanager
def written_whole(out: str | Path) -> Iterator[Path]:
    """A folder to write ``out`` into (``out`` beside, ``.tmp`` added): it
    replaces ``out`` when the block ends and is removed when the block
    raises, so ``out`` is whole or as it was, never half written."""
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        yield tmp
        shutil.rmtree(out, ignore_errors=True)
        tmp.replace(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def take_from_cache(
    out: str | Path, key: str, *, env: Mapping[str, str] = os.environ
) -> Path | None:
    """Copy the cached build of ``key`` into ``out`` (written whole or not at
    all), if the cache holds one.

    Returns:
        The cached folder it was copied from, or None when there is none.

    Raises:
        OSError: the copy failed (``out`` is left as it was).
    """
    cached = scorer_cache(env) / key
    if not built_with(cached, key):
        return None
    with written_whole(out) as tmp:
        shutil.copytree(cached, tmp)
    return cached


#: A copy into the cache takes seconds; a copy's folder (``.KEY.*.tmp``) not
#: written to for this long was left by a process killed midway.
STALE_COPY_SECONDS = 3600


def _remove_stale_copies(cache: Path) -> None:
    """Remove the folders of copies killed midway (each a scorer's size);
    those of copies still running are written to, so they are kept."""
    cutoff = time.time() - STALE_COPY_SECONDS
    for copy in cache.glob(".*.tmp"):
        try:
            stale = copy.is_dir() and copy.stat().st_mtime < cutoff
        except OSError:
            continue  # removed by another build meanwhile
        if stale:
            shutil.rmtree(copy, ignore_errors=True)


def keep_in_cache(
    folder: str | Path, key: str, *, env: Mapping[str, str] = os.environ
) -> Path:
    """Keep a copy of the build in ``folder`` in the cache under ``key``
    (a copy already there is kept; a broken one is replaced).

    Returns:
        The cached folder.

    Raises:
        OSError: the cache cannot be written (nothing half-written is left
            under the key).
    """
    cache = scorer_cache(env)
    cached = cache / key
    if built_with(cached, key):
        return cached
    cache.mkdir(parents=True, exist_ok=True)
    _remove_stale_copies(cache)
    # A name of its own per copy: two builds may store the same key at once.
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", suffix=".tmp", dir=cache))
    try:
        shutil.copytree(folder, tmp, dirs_exist_ok=True)
        if cached.exists() and not built_with(cached, key):
            shutil.rmtree(cached)
        if not cached.exists():
            tmp.replace(cached)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return cached


def reuse_build(
    out: str | Path, key: str, *, env: Mapping[str, str] = os.environ
) -> bool:
    """Whether ``out`` is the build of ``key`` without training: already
    built, or copied from the cache now (each said on stdout). A build of
    another key in ``out`` is said to be replaced, on stderr.

    Raises:
        OSError: the copy from the cache failed (``out`` is left as it was).
    """
    if built_with(out, key):
        print(f"{out}: already built (--force rebuilds it)")
        return True
    if model_folder_problem(out) is None:
        # A scorer of another recipe or other inputs (or built before keys).
        print(f"{out}: the recipe or its inputs changed", file=sys.stderr)
    cached = take_from_cache(out, key, env=env)
    if cached is not None:
        print(f"{out}: from the cache: {cached}")
    return cached is not None


def keep_build(
    folder: str | Path, key: str, *, env: Mapping[str, str] = os.environ
) -> None:
    """Keep the build in ``folder`` in the cache; a cache that cannot be
    written is said on stderr, since the build itself is done."""
    try:
        keep_in_cache(folder, key, env=env)
    except OSError as e:
        print(f"warning: not kept in the scorer cache: {e}", file=sys.stderr)
