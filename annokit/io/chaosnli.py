"""Loader for ChaosNLI JSON Lines files (Nie, Zhou and Bansal, EMNLP 2020).

Each line is one item with 100 votes given as ``label_counter`` (authoritative)
and, redundantly, ``label_count`` / ``label_dist`` in a fixed label order
(NLI: [e, n, c]; alphaNLI: [1, 2]). Annotator ids are not released, so the
votes carry no annotator index.

References
----------
Nie, Zhou and Bansal (2020). What Can We Learn from Collective Human Opinions on
Natural Language Inference Data? EMNLP. arXiv:2010.03532.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.votes import CHAOSNLI_NLI_LABELS, LabelSet, Votes
from annokit.errors import AnnokitError, DataFormatError, InputError, InvalidValueError
from annokit.io.source import Input, json_object_lines, loads_json

__all__ = ["ALPHANLI_LABELS", "looks_like_chaosnli", "read_chaosnli"]

ALPHANLI_LABELS = LabelSet(["1", "2"])
_NLI_KEYS = {"e", "n", "c"}
#: Memory the expanded votes of a ChaosNLI file may take (item and label codes, int64 each).
MAX_VOTE_BYTES = 2 * 1024**3
_BYTES_PER_VOTE = 16
#: Largest vote count accepted in a ``label_counter`` (sums of counts stay within int64).
MAX_COUNT = 2**40
_TEXT_FIELDS = ("premise", "hypothesis", "obs1", "obs2", "hyp1", "hyp2", "source")


def looks_like_chaosnli(path: str | os.PathLike | Input) -> bool:
    """True when the first non-blank line is a JSON object with a ``label_counter``."""
    try:
        source = Input(path)
        row = loads_json(source.first_line(), source.name)
    except AnnokitError:
        return False
    return isinstance(row, dict) and "label_counter" in row


def read_chaosnli(path: str | os.PathLike, *, labels: LabelSet | None = None) -> Votes:
    """Read a ChaosNLI ``.jsonl`` file (SNLI, MNLI-m or alphaNLI subset).

    Parameters
    ----------
    path : path-like
        A ``chaosNLI_*.jsonl`` file.
    labels : LabelSet, optional
        Label set to code votes with. Default: entailment / neutral /
        contradiction with aliases e / n / c for NLI files, ``"1"`` / ``"2"``
        for alphaNLI (detected from the ``label_counter`` keys).

    Returns
    -------
    Votes
        Counts-only votes (no annotator ids). ``item_metadata`` holds
        ``old_label`` (original gold), ``majority_label`` (the file's),
        ``old_labels`` (SNLI/MNLI: the five original labels), the file's
        ``entropy`` (bits) and the text fields of ``example``, all labels as
        canonical names.

    Raises
    ------
    DataFormatError
        A line that is not a JSON object, a ``label_counter`` that is not an
        object of non-negative integers, ``label_count`` or ``label_dist`` that
        disagree with it, or a repeated ``uid``; the message names the file and
        line.
    """
    source = Input(path, what="votes")
    name = source.name
    text = source.text

    rows, line_numbers = json_object_lines(text, name)
    if not rows:
        raise DataFormatError(f"{name} has no items")

    for row, lineno in zip(rows, line_numbers, strict=True):
        _check_row(row, lineno, name)
        if not any(row["label_counter"].values()):  # before its label_dist is compared
            raise DataFormatError(
                f"line {lineno} of {name}, field label_counter: item {row['uid']!r} has no votes "
                f"({'every count is 0' if row['label_counter'] else 'it is empty'}); each line "
                "needs at least one vote: correct its label_counter or remove the line")
    keys = {str(k) for row in rows for k in row["label_counter"]}
    if labels is None:
        labels = CHAOSNLI_NLI_LABELS if keys & _NLI_KEYS or not keys <= {"1", "2"} else ALPHANLI_LABELS

    n, n_labels = len(rows), len(labels)
    counts = np.zeros((n, n_labels), dtype=np.int64)
    for i, (row, lineno) in enumerate(zip(rows, line_numbers, strict=True)):
        for key, value in row["label_counter"].items():
            try:
                j = labels.index_of(key)
            except InputError:
                raise DataFormatError(
                    f"line {lineno} of {name}: label_counter has unknown label {key!r}; expected "
                    f"one of {list(labels.names) + list(labels.aliases)}"
                ) from None
            counts[i, j] += value
        _check_redundant(row, counts[i], lineno, name)
    total = int(counts.sum())
    if total * _BYTES_PER_VOTE > MAX_VOTE_BYTES:
        raise InvalidValueError(
            f"{name}: label_counter values add up to {total} votes, which need "
            f"{total * _BYTES_PER_VOTE / 1024**3:.1f} GiB as votes (limit "
            f"{MAX_VOTE_BYTES / 1024**3:.1f} GiB); check the counts"
        )
    uids = [str(r["uid"]) for r in rows]
    seen: dict[str, int] = {}
    for uid, lineno in zip(uids, line_numbers, strict=True):
        if uid in seen:
            raise DataFormatError(f"line {lineno} of {name}: uid {uid!r} repeats line {seen[uid]}")
        seen[uid] = lineno

    meta = _metadata(rows, line_numbers, labels, name)
    return Votes.from_counts(counts, labels=labels, item_ids=uids, item_metadata=meta, source=name)


def _check_row(row: dict[str, Any], lineno: int, name: str) -> None:
    where = f"line {lineno} of {name}"
    if "uid" not in row or row["uid"] in (None, ""):
        raise DataFormatError(f"{where}: missing uid")
    counter = row.get("label_counter")
    if not isinstance(counter, dict):
        raise DataFormatError(f"{where}: label_counter is not an object")
    for key, value in counter.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 \
                or not math.isfinite(value) or value != int(value) or value > MAX_COUNT:
            raise DataFormatError(
                f"{where}: label_counter[{key!r}] must be a non-negative integer; got "
                f"{value!r} (counts up to 2**40 are read)"
            )
        counter[key] = int(value)


def _floats(values: list[Any]) -> list[float] | None:
    """The numbers of a JSON list, or None when one is not a number."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    try:
        return [float(v) for v in values]
    except OverflowError:
        return None


def _check_redundant(row: dict[str, Any], counts: np.ndarray, lineno: int, name: str) -> None:
    """``label_count`` / ``label_dist`` are in label order and must agree with ``label_counter``."""
    where = f"line {lineno} of {name}"
    if "label_count" in row:
        lc = row["label_count"]
        if not isinstance(lc, list) or len(lc) != len(counts) or _floats(lc) != \
                counts.astype(float).tolist():
            raise DataFormatError(
                f"{where}: label_count {lc!r} disagrees with label_counter {row['label_counter']!r}"
            )
    if "label_dist" in row:
        ld = row["label_dist"]
        if not isinstance(ld, list) or len(ld) != len(counts) or _floats(ld) is None:
            raise DataFormatError(f"{where}: label_dist must be a list of {len(counts)} numbers")
        expected = counts / max(int(counts.sum()), 1)
        if not np.allclose(np.asarray(ld, dtype=float), expected, atol=1e-6):
            raise DataFormatError(
                f"{where}: label_dist {ld!r} disagrees with label_counter {row['label_counter']!r}"
            )


def _metadata(rows: list[dict[str, Any]], line_numbers: list[int], labels: LabelSet,
              name: str) -> pd.DataFrame:
    def canon(value: Any, lineno: int, field: str) -> str | None:
        if value is None or value == "":
            return None
        try:
            return labels.canonical(value)
        except InputError:
            raise DataFormatError(f"line {lineno} of {name}: {field} {value!r} is not a known label") \
                from None

    data: dict[str, list[Any]] = {
        "old_label": [canon(r.get("old_label"), ln, "old_label")
                      for r, ln in zip(rows, line_numbers, strict=True)],
        "majority_label": [canon(r.get("majority_label"), ln, "majority_label")
                           for r, ln in zip(rows, line_numbers, strict=True)],
    }
    if any("old_labels" in r for r in rows):
        data["old_labels"] = [
            [canon(x, ln, "old_labels") for x in (r.get("old_labels") or [])]
            for r, ln in zip(rows, line_numbers, strict=True)
        ]
    if any("entropy" in r for r in rows):
        entropy = []
        for r, ln in zip(rows, line_numbers, strict=True):
            value = r.get("entropy")
            if value is not None and _floats([value]) is None:
                raise DataFormatError(f"line {ln} of {name}: entropy must be a number; got "
                                      f"{value!r}")
            entropy.append(float("nan") if value is None else float(value))
        data["entropy"] = entropy
    examples: list[dict[str, Any]] = [e if isinstance(e := r.get("example"), dict) else {}
                                      for r in rows]
    for field in _TEXT_FIELDS:
        if any(field in e for e in examples):
            data[field] = [e.get(field) for e in examples]
    return pd.DataFrame(data)
