"""Registered public datasets: download once, verify, cache, load offline.

``load_dataset("chaosnli-snli")`` looks for the file in, in order: an explicit
``path``, the cache directory (``$ANNOKIT_HOME``, default ``~/.cache/annokit``)
and, when ``download=True``, the official URL. Every file is checked against a
pinned sha256 before use; a mismatch is an error, never a silent re-download.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from annokit.core.votes import Votes
from annokit.errors import DataFormatError, DatasetNotFoundError
from annokit.io.atomic import atomic_path

__all__ = ["REGISTRY", "DatasetSpec", "cache_dir", "dataset_path", "list_datasets", "load_dataset"]

_CHAOSNLI_URL = "https://www.dropbox.com/s/h4j7dqszmpt2679/chaosNLI_v1.0.zip?dl=1"
_CHAOSNLI_CITATION = ("Nie, Zhou and Bansal (2020). What Can We Learn from Collective Human Opinions "
                      "on Natural Language Inference Data? EMNLP. arXiv:2010.03532")


@dataclass(frozen=True)
class DatasetSpec:
    """Where a registered file comes from and how to check it.

    ``url`` may point at a zip archive, in which case ``member`` is the path of
    the file inside it.
    """

    name: str
    filename: str
    url: str
    sha256: str
    member: str | None = None
    reader: str = "chaosnli"
    license: str = ""
    citation: str = ""


REGISTRY: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec("chaosnli-snli", "chaosNLI_snli.jsonl", _CHAOSNLI_URL,
                    "99f9015ddda7d85f66a087452bc30d53974314fe27e7d589e2f41ad44bd509c1",
                    member="chaosNLI_v1.0/chaosNLI_snli.jsonl", license="CC BY-NC 4.0",
                    citation=_CHAOSNLI_CITATION),
        DatasetSpec("chaosnli-mnli", "chaosNLI_mnli_m.jsonl", _CHAOSNLI_URL,
                    "8eb49b589488e7b1a9ec95fb8a864bd50f0509b4f808eed0aed3f8167617664d",
                    member="chaosNLI_v1.0/chaosNLI_mnli_m.jsonl", license="CC BY-NC 4.0",
                    citation=_CHAOSNLI_CITATION),
        DatasetSpec("chaosnli-alphanli", "chaosNLI_alphanli.jsonl", _CHAOSNLI_URL,
                    "f55817ecc11a02ba3030cd7d2c567d23843456809020723abad53f4fde024c9e",
                    member="chaosNLI_v1.0/chaosNLI_alphanli.jsonl", license="CC BY-NC 4.0",
                    citation=_CHAOSNLI_CITATION),
    )
}


def list_datasets() -> list[str]:
    """Names accepted by :func:`load_dataset`."""
    return sorted(REGISTRY)


def cache_dir() -> Path:
    """``$ANNOKIT_HOME`` or ``~/.cache/annokit``."""
    return Path(os.environ.get("ANNOKIT_HOME") or Path.home() / ".cache" / "annokit")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _spec(name: str) -> DatasetSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise DatasetNotFoundError(f"unknown dataset {name!r}; registered: {list_datasets()}") from None


def _verify(path: Path, spec: DatasetSpec) -> Path:
    got = _sha256(path)
    if got != spec.sha256:
        raise DataFormatError(
            f"{path}: sha256 {got} does not match the registered {spec.sha256} for {spec.name}; "
            "remove the file to download it again"
        )
    return path


def dataset_path(name: str, *, path: str | os.PathLike | None = None, download: bool = True,
                 cache: str | os.PathLike | None = None) -> Path:
    """Local path of a registered dataset file, downloading it into the cache if needed.

    Parameters
    ----------
    name : str
        A registered name, see :func:`list_datasets`.
    path : path-like, optional
        A local copy to use instead of the cache (a file, or a folder holding it).
    download : bool, default=True
        Fetch from the official URL when the file is not cached.
    cache : path-like, optional
        Cache folder; default :func:`cache_dir`.
    """
    spec = _spec(name)
    if path is not None:
        local = Path(path)
        if local.is_dir():
            local = local / spec.filename
        if not local.is_file():
            raise DatasetNotFoundError(f"{name}: no file at {local}")
        return _verify(local, spec)
    folder = Path(cache) if cache is not None else cache_dir()
    target = folder / spec.filename
    if target.is_file():
        return _verify(target, spec)
    if not download:
        raise DatasetNotFoundError(
            f"{name} is not cached at {target} and download=False; pass path= to a local copy"
        )
    folder.mkdir(parents=True, exist_ok=True)
    _download(spec, target)
    return _verify(target, spec)


def _download(spec: DatasetSpec, target: Path) -> None:
    """Fetch ``spec.url`` (extracting ``spec.member`` from a zip) and move it into place atomically."""
    print(f"annokit: downloading {spec.name} from {spec.url}", file=sys.stderr)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        raw = Path(tmp) / "download"
        try:
            import urllib.request  # on download only: its import costs every command 30 ms

            with urllib.request.urlopen(spec.url, timeout=60) as response, open(raw, "wb") as out:
                shutil.copyfileobj(response, out)
        except OSError as exc:
            raise DatasetNotFoundError(
                f"{spec.name}: download from {spec.url} failed ({exc}); put {spec.filename} in "
                f"{target.parent}, or give a local copy's path as the votes (Python: path=)"
            ) from None
        source = raw
        if spec.member is not None:
            try:
                with zipfile.ZipFile(raw) as archive:
                    source = Path(archive.extract(spec.member, tmp))
            except (zipfile.BadZipFile, KeyError) as exc:
                raise DataFormatError(f"{spec.name}: {spec.url} is not a zip with "
                                      f"{spec.member} ({exc})") from None
        _verify(source, spec)
        with atomic_path(target) as out:  # the one writing layer: flushed, umask mode, renamed
            shutil.copyfile(source, out)


def load_dataset(name: str, *, path: str | os.PathLike | None = None, download: bool = True,
                 cache: str | os.PathLike | None = None) -> Votes:
    """Load a registered dataset as :class:`~annokit.core.votes.Votes`.

    Examples
    --------
    >>> list_datasets()
    ['chaosnli-alphanli', 'chaosnli-mnli', 'chaosnli-snli']
    """
    file = dataset_path(name, path=path, download=download, cache=cache)
    from annokit.io.chaosnli import read_chaosnli

    return read_chaosnli(file)
