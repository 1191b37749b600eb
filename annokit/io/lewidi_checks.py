"""LeWiDi files checked against their votes, and their annotator attributes.

Helpers of :mod:`annokit.io.lewidi`: the file's own ``soft_label`` (and 2023 ``hard_label``)
as arrays in the votes' label order, the comparison of both with the votes, and the
annotator attribute table (2025 ``<Dataset>_annotators_meta.json``; 2023 per-annotator fields
of ``other_info``).

A file writes its soft labels rounded (ArMIS to 2 decimals, some VariErrNLI items to 3,
others in full, some as the float complement of a rounded value: ``0.33299999999999996``);
a value is taken to agree with the votes when it is within half a unit of its own last
written decimal (at least 2 decimals are assumed, float noise beyond 12 decimals ignored)
plus 1e-9.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from annokit.core.checks import first_offenders
from annokit.core.labels import scalar_to_str
from annokit.core.votes import Votes
from annokit.errors import DataFormatError, DegenerateInputWarning, InputError
from annokit.io.source import Input, loads_json_lenient

__all__ = ["annotator_table", "check_against_file", "file_hard_labels", "file_soft_labels"]


def _label_code(votes: Votes, key: Any) -> int:
    """Code of a soft-label key or hard label in the votes' label set (``"0.0"`` finds ``"0"``)."""
    text = scalar_to_str(key).strip()
    try:
        return votes.labels.index_of(text)
    except InputError:
        pass
    try:
        x = float(text)
    except ValueError:
        return -1
    if not math.isfinite(x):
        return -1
    try:
        return votes.labels.index_of(scalar_to_str(x))
    except InputError:
        return -1


def _decimals(value: float) -> int:
    """Decimals the value was written with; float noise beyond 12 decimals (``1 - 0.667`` is
    ``0.33299999999999996``, as VariErrNLI writes some soft labels) does not count."""
    text = repr(round(float(value), 12))
    if "e" in text or "E" in text:
        return 17
    return len(text.split(".")[1]) if "." in text else 0


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _soft_arrays(votes: Votes, multilabel: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """File soft labels (n_items, n_labels; NaN rows without one), per-item tolerance, and a
    mask of items whose soft_label is malformed or names an unknown label."""
    n, k = votes.n_items, votes.n_labels
    probs = np.full((n, k), np.nan)
    complement = np.full((n, k), np.nan)
    tol = np.full(n, np.nan)
    bad = np.zeros(n, dtype=bool)
    if "soft_label" not in votes.item_metadata:
        return probs, tol, bad
    for i, soft in enumerate(votes.item_metadata["soft_label"]):
        if soft is None:
            continue
        if not isinstance(soft, dict):
            bad[i] = True
            continue
        probs[i] = 0.0
        decimals = 2
        for key, value in soft.items():
            j = _label_code(votes, key)
            if multilabel:
                inner = {scalar_to_str(a): b for a, b in value.items()} if isinstance(value, dict) else {}
                p1, p0 = inner.get("1"), inner.get("0")
                if j < 0 or not _is_number(p1) or not _is_number(p0):
                    bad[i] = True
                    continue
                probs[i, j], complement[i, j] = float(p1), float(p0)
                decimals = max(decimals, _decimals(p1), _decimals(p0))
            else:
                if j < 0 or not _is_number(value):
                    bad[i] = True
                    continue
                probs[i, j] += float(value)
                decimals = max(decimals, _decimals(value))
        tol[i] = 0.5 * 10.0 ** -decimals + 1e-9
        if multilabel:
            missing = np.isnan(complement[i])
            bad[i] |= bool(missing.any()) or bool(
                (np.abs(probs[i] + complement[i] - 1.0) > 2 * tol[i])[~missing].any())
    return probs, tol, bad


def file_soft_labels(votes: Votes) -> np.ndarray:
    """The file's own ``soft_label`` of each item, in the votes' label order.

    Single-label files: a distribution per item. Multi-label files (VariErrNLI): the
    probability that each label is ticked (the ``"1"`` entry of its binary distribution).
    Rows of items without a soft label are NaN.

    Parameters
    ----------
    votes : Votes
        From :func:`annokit.io.lewidi.read_lewidi` (uses ``item_metadata["soft_label"]``).

    Returns
    -------
    ndarray of shape (n_items, n_labels)

    Raises
    ------
    DataFormatError
        A soft label that is not an object of numbers over known labels.
    """
    details = votes.read_details.details if votes.read_details is not None else {}
    multilabel = bool(details.get("multilabel", False))
    probs, _, bad = _soft_arrays(votes, multilabel)
    if bad.any():
        ids = votes.item_ids[bad][:5].tolist()
        raise DataFormatError(f"{votes.source}: soft_label of item(s) {ids} is malformed or names "
                              f"a label outside {list(votes.labels.names)}")
    return probs


def file_hard_labels(votes: Votes) -> np.ndarray:
    """The file's ``hard_label`` codes in the votes' label set; -1 where absent or unknown."""
    if "hard_label" not in votes.item_metadata:
        return np.full(votes.n_items, -1, dtype=np.int64)
    return np.array([-1 if h is None else _label_code(votes, h)
                     for h in votes.item_metadata["hard_label"]], dtype=np.int64)


def _responses(votes: Votes) -> np.ndarray:
    """Distinct annotators per item."""
    annotators, annotator_ids = votes.annotator_codes("counting the responses to each item")
    key = votes.item_index.astype(np.int64) * max(len(annotator_ids), 1) + annotators
    uniq = np.unique(key)
    return np.bincount(uniq // max(len(annotator_ids), 1), minlength=votes.n_items)


def check_against_file(votes: Votes, *, multilabel: bool) -> dict[str, Any]:
    """Compare the votes with the file's soft labels, hard labels and stated counts.

    Returns a dict of item-id lists: ``soft_label_mismatches`` (a value off by more than
    its written precision, a malformed soft label, or one naming an unknown label),
    ``hard_label_mismatches`` (the file's hard label is not a top-voted label),
    ``hard_label_ties`` (it is one of several tied top labels: consistent, but a choice the
    votes do not make), ``count_mismatches`` (``number of annotations`` / ``number of
    annotators`` differ from the votes); and ``items_without_soft_label`` (a count).
    """
    counts = votes.counts()
    n_resp = _responses(votes)
    if multilabel:
        computed = counts / n_resp[:, None]
    else:
        computed = counts / counts.sum(axis=1, keepdims=True)
    probs, tol, bad = _soft_arrays(votes, multilabel)
    has = ~np.isnan(probs).all(axis=1)
    off = np.zeros(votes.n_items, dtype=bool)
    off[has] = (np.abs(probs[has] - computed[has]) > tol[has, None]).any(axis=1)
    off |= bad
    ids = votes.item_ids
    out: dict[str, Any] = {
        "soft_label_mismatches": ids[off].tolist(),
        "items_without_soft_label": int((~has & ~bad).sum()),
        "hard_label_mismatches": [], "hard_label_ties": [],
    }
    if "hard_label" in votes.item_metadata and not multilabel:
        hard = file_hard_labels(votes)
        given = votes.item_metadata["hard_label"].notna().to_numpy()
        top = counts == counts.max(axis=1, keepdims=True)
        in_top = np.zeros(votes.n_items, dtype=bool)
        ok = hard >= 0
        in_top[ok] = top[np.flatnonzero(ok), hard[ok]]
        out["hard_label_mismatches"] = ids[given & ~in_top].tolist()
        out["hard_label_ties"] = ids[given & in_top & (top.sum(axis=1) > 1)].tolist()
    wrong = np.zeros(votes.n_items, dtype=bool)
    for column, actual in (("number_of_annotations", counts.sum(axis=1)),
                           ("number_of_annotators", n_resp)):
        if column in votes.item_metadata:
            stated = pd.to_numeric(votes.item_metadata[column], errors="coerce").to_numpy(float)
            wrong |= ~np.isnan(stated) & (stated != actual)
    out["count_mismatches"] = ids[wrong].tolist()
    return out


def _meta_file(file: Path | None, dataset: str, given: str | os.PathLike | bool | None) -> Path | None:
    if given is False:
        return None
    if given is not None and given is not True:
        return Path(given)
    path = None if file is None else file.parent / f"{dataset}_annotators_meta.json"
    return path if path is not None and path.exists() else None


def _line_of(text: str, key: str) -> int:
    """Line of ``"key":`` in ``text`` (1 when not found)."""
    m = re.search(re.escape(json.dumps(key)) + r"\s*:", text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def _records(doc: Any, text: str, name: str) -> tuple[dict[str, dict], list[str]]:
    """The annotator records of a metadata document, and the keys of records that are not
    objects (left out with one warning naming the first one's line)."""
    if not isinstance(doc, dict):
        raise DataFormatError(f"{name}, line 1: expected an object of annotator records "
                              f"(annotator id -> object of attributes); got {type(doc).__name__}")
    bad = [str(k) for k, v in doc.items() if not isinstance(v, dict)]
    if bad and len(bad) == len(doc):
        raise DataFormatError(f"{name}, line {_line_of(text, bad[0])}: expected an object of "
                              "annotator records (annotator id -> object of attributes); record "
                              f"{bad[0]!r} is {type(doc[bad[0]]).__name__}")
    if bad:
        warnings.warn(f"{name}, line {_line_of(text, bad[0])}: {len(bad)} annotator record(s) are "
                      f"not objects, e.g. {first_offenders(bad)}; left out", DegenerateInputWarning,
                      stacklevel=4)
    return {k: v for k, v in doc.items() if isinstance(v, dict)}, bad


def annotator_table(votes: Votes, records: list[dict], edition: int, file: Path | None, dataset: str,
                    given: str | os.PathLike | bool | None, name: str
                    ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Annotator attributes, one row per ``votes.annotator_ids`` entry, and a summary.

    2025: the ``<Dataset>_annotators_meta.json`` records, read leniently (trailing commas,
    ``NaN``; what was tolerated is stated); a file that cannot be read is one warning naming
    the file and line, and the votes are read without it. Their keys are matched to the
    annotator ids as written, or with an ``Ann`` prefix (MP's file is keyed ``"0"``, its
    annotations ``"Ann0"``). 2023: fields of ``other_info`` that give one value per annotator
    (ArMIS: an object keyed by annotator; a comma-separated field whose name mentions
    "annotator" or "group", aligned with ``annotators``, as HS-Brexit's ``annotators group``)
    and that are constant for each annotator across items.
    """
    _, annotator_ids = votes.annotator_codes("annotator metadata")
    index = pd.Index(annotator_ids, name="annotator")
    info: dict[str, Any] = {}
    if edition == 2025:
        path = _meta_file(file, dataset, given)
        if path is None:
            info["annotator_metadata"] = "none"
            return pd.DataFrame(index=index), info
        try:
            text = Input(path, what="annotator metadata").text
            doc, tolerated = loads_json_lenient(text, path.name)
            doc, left_out = _records(doc, text, path.name)
        except DataFormatError as exc:
            warnings.warn(f"{exc}; annotator metadata left out (the votes are read without it)",
                          DegenerateInputWarning, stacklevel=3)
            info["annotator_metadata"] = f"{path.name} not read (see the warning)"
            info["annotators_without_metadata"] = index.tolist()
            return pd.DataFrame(index=index), info
        keys = [str(k) for k in doc]
        ids = set(annotator_ids.tolist())
        exact = sum(k in ids for k in keys)
        prefixed = sum(f"Ann{k}" in ids for k in keys)
        rename = {k: f"Ann{k}" for k in keys} if prefixed > exact else {k: k for k in keys}
        table = pd.DataFrame.from_dict({rename[str(k)]: v for k, v in doc.items()}, orient="index")
        out = table.reindex(index)
        matched = int(index.isin(table.index).sum())
        info["annotator_metadata"] = (
            f"{path.name}" + (f" (read leniently: {', '.join(tolerated)})" if tolerated else "")
            + f", {matched} of {len(index)} annotators matched"
            + (" (keys read with an 'Ann' prefix)" if prefixed > exact else "")
            + (f", {len(left_out)} record(s) not an object left out" if left_out else ""))
        info["annotators_without_metadata"] = index[~index.isin(table.index)].tolist()
        return out, info
    columns: dict[str, dict[str, Any]] = {}
    varying: set[str] = set()
    for rec in records:
        other = rec.get("other_info")
        annotators = [a.strip() for a in str(rec.get("annotators", "")).split(",")]
        if not isinstance(other, dict):
            continue
        found: dict[str, dict[str, Any]] = {}
        if other and set(other) <= set(annotators) and all(isinstance(v, str) for v in other.values()):
            found["other_info"] = dict(other)
        for key, value in other.items():
            if isinstance(value, str) and ("annotator" in key.lower() or "group" in key.lower()) \
                    and len(annotators) > 1 and value.count(",") + 1 == len(annotators):
                found[key] = dict(zip(annotators, (v.strip() for v in value.split(",")),
                                      strict=True))
        for column, values in found.items():
            seen = columns.setdefault(column, {})
            for a, v in values.items():
                if seen.setdefault(a, v) != v:
                    varying.add(column)
    kept = {c: v for c, v in columns.items() if c not in varying}
    out = pd.DataFrame(kept, dtype=object).reindex(index) if kept else pd.DataFrame(index=index)
    info["annotator_metadata"] = (f"from other_info: {sorted(kept)}" if kept else "none") + (
        f"; not constant per annotator, left out: {sorted(varying)}" if varying else "")
    return out, info
