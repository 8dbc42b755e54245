"""Where a capstone data set's rows come from, decided once for ``preflight`` and ``run`` alike.

Given code: the capstone student need not change it.

    location = locate_data(profile, data_dir)   # kind "data_dir", "snapshot", "hub" or "missing"
    rows = read_snapshot_split(location, "train[:128]")

In order: ``--data-dir DIR`` (``DIR/<split>.jsonl``); else a Hub snapshot in the
Hugging Face cache (``$HF_HUB_CACHE``, else ``$HF_HOME/hub``:
``datasets--<owner>--<name>/snapshots/<revision>/``, the revision ``refs/main``
names, else the newest), whose parquet / jsonl files are read directly, with
no ``datasets`` and no network (``datasets`` 5.x refuses a repo id offline
when the cache holds only the snapshot: "OfflineModeIsEnabled"); else, online,
a download through ``datasets``; else (``HF_HUB_OFFLINE=1``) nothing, and
the reason with the fix. A snapshot's split files are those its README's
``configs`` name, else the Hub's default naming (``train-00000-of-00001.parquet``,
``data/test.jsonl``, ``train/...``).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

READABLE = (".parquet", ".jsonl", ".json")  # what read_snapshot_split reads


@dataclass(frozen=True)
class DataLocation:
    """kind: "memory" (a tiny profile), "data_dir", "snapshot", "hub" (online: datasets downloads) or
    "missing" (offline, nowhere). where: the folder. files: split name -> its files (data_dir, snapshot).
    missing: the split names with no file there. offline: HF_HUB_OFFLINE was set."""

    kind: str
    dataset: str
    where: str | None = None
    files: dict = field(default_factory=dict)
    missing: tuple = ()
    offline: bool = False


def offline() -> bool:
    """HF_HUB_OFFLINE as huggingface_hub reads it (1/true/yes/on)."""
    return os.environ.get("HF_HUB_OFFLINE", "0").strip().lower() in ("1", "true", "yes", "on")


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else huggingface_hub's default."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    try:
        from huggingface_hub import constants

        return Path(constants.HF_HUB_CACHE)
    except ImportError:
        return Path("~/.cache/huggingface/hub").expanduser()


def cached_snapshot(repo_id: str, repo_type: str) -> Path | None:
    """The snapshot folder of ``repo_id`` in the cache: the revision refs/main names, else the newest one."""
    repo = hub_cache_dir() / f"{repo_type}s--{repo_id.replace('/', '--')}"
    snapshots = repo / "snapshots"
    if not snapshots.is_dir():
        return None
    main = repo / "refs" / "main"
    if main.is_file() and (snapshots / main.read_text(encoding="utf-8").strip()).is_dir():
        return snapshots / main.read_text(encoding="utf-8").strip()
    folders = sorted((path for path in snapshots.iterdir() if path.is_dir()), key=lambda path: path.stat().st_mtime)
    return folders[-1] if folders else None


def split_name(split: str) -> str:
    """"train[:128]" -> "train"."""
    return split.split("[")[0]


def _readme_patterns(snapshot: Path) -> dict[str, list[str]]:
    """{split: [glob, ...]} of the README's default config (``configs: - config_name: default, data_files``)."""
    readme = snapshot / "README.md"
    if not readme.is_file():
        return {}
    match = re.match(r"---\n(.*?)\n---", readme.read_text(encoding="utf-8", errors="replace"), re.DOTALL)
    if not match:
        return {}
    try:
        import yaml

        card = yaml.safe_load(match.group(1)) or {}
    except Exception:  # noqa: BLE001 - a card we cannot read: the default naming decides
        return {}
    configs = [config for config in card.get("configs") or [] if isinstance(config, dict)]
    config = next((c for c in configs if c.get("config_name") == "default"), configs[0] if configs else None)
    patterns: dict[str, list[str]] = {}
    for entry in (config or {}).get("data_files") or []:
        if isinstance(entry, dict) and "split" in entry:
            paths = entry.get("path")
            patterns[str(entry["split"])] = [paths] if isinstance(paths, str) else list(paths or [])
    return patterns


def snapshot_files(snapshot: Path, names) -> dict[str, list[str]]:
    """{split name: sorted readable files} of ``snapshot`` (README configs first, else the default naming)."""
    readable = sorted(path.relative_to(snapshot).as_posix() for path in snapshot.rglob("*")
                      if path.name.endswith(READABLE) and (path.is_file()))
    patterns = _readme_patterns(snapshot)
    found = {}
    for name in names:
        if name in patterns:
            chosen = [path for path in readable if any(fnmatch.fnmatch(path, glob) for glob in patterns[name])]
        else:  # the Hub's default naming: a folder or a file-name word equal to the split's name
            chosen = [path for path in readable
                      if name in path.split("/")[:-1] or name in re.split(r"[-_.]", path.split("/")[-1])]
        found[name] = [str(snapshot / path) for path in chosen]
    return found


def locate_data(profile, data_dir=None) -> DataLocation:
    """Where ``profile``'s rows come from (see the module docstring); never downloads, never raises."""
    dataset = profile.data.dataset
    names = list(dict.fromkeys(split_name(split) for split in (profile.data.train_split, profile.data.eval_split)))
    is_offline = offline()
    if dataset.startswith("kit:"):
        return DataLocation("memory", dataset, offline=is_offline)
    if data_dir is not None:
        files = {name: [str(Path(data_dir) / f"{name}.jsonl")] for name in names}
        missing = tuple(name for name in names if not (Path(data_dir) / f"{name}.jsonl").is_file())
        return DataLocation("data_dir", dataset, str(data_dir), files, missing, is_offline)
    snapshot = cached_snapshot(dataset, "dataset")
    files = snapshot_files(snapshot, names) if snapshot else {}
    missing = tuple(name for name in names if not files.get(name))
    if snapshot and not missing:
        return DataLocation("snapshot", dataset, str(snapshot), files, (), is_offline)
    if not is_offline:
        return DataLocation("hub", dataset, str(snapshot) if snapshot else None, files, missing, False)
    return DataLocation("missing", dataset, str(snapshot) if snapshot else None, files, tuple(missing or names), True)


def _slice(split: str) -> tuple[int | None, int | None]:
    """(start, stop) of "name[a:b]" (integers; either may be empty); (None, None) for a bare name."""
    if "[" not in split:
        return None, None
    match = re.fullmatch(r"[\w.-]+\[(-?\d*):(-?\d*)\]", split)
    if not match:
        raise ValueError(f"split {split!r}: only name[start:stop] with integers is read from a snapshot")
    return tuple(int(part) if part else None for part in match.groups())


def _file_rows(path: str, limit: int | None):
    """The rows of one parquet / jsonl / json file, stopping after ``limit`` rows when given."""
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        count = 0
        for batch in pq.ParquetFile(path).iter_batches(batch_size=1024):
            for row in batch.to_pylist():
                yield row
                count += 1
                if limit is not None and count >= limit:
                    return
        return
    with open(path, encoding="utf-8") as handle:
        if path.endswith(".json") and handle.read(1) == "[":
            handle.seek(0)
            yield from json.load(handle)[:limit]
            return
        handle.seek(0)
        count = 0
        for line in handle:
            if line.strip():
                yield json.loads(line)
                count += 1
                if limit is not None and count >= limit:
                    return


def read_snapshot_split(location: DataLocation, split: str) -> list[dict]:
    """The rows of ``split`` ("train[:128]") read straight from the snapshot's files, in file order."""
    start, stop = _slice(split)
    limit = stop if stop is not None and stop >= 0 and (start is None or start >= 0) else None
    rows: list[dict] = []
    for path in location.files[split_name(split)]:
        remaining = None if limit is None else limit - len(rows)
        if remaining is not None and remaining <= 0:
            break
        rows.extend(dict(row) for row in _file_rows(path, remaining))
    return rows[start:stop]
