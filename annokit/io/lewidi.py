"""Loader for the Learning-With-Disagreements (LeWiDi) shared-task JSON files.

Two layouts, told apart by the type of ``annotations``:

* **2023** (SemEval-2023 Task 11: ArMIS, HS-Brexit, ConvAbuse, MD-Agreement): one JSON
  object keyed by item id; each item has ``annotators`` and ``annotations`` as aligned
  comma-separated strings, a ``soft_label`` object (label -> probability) and a
  ``hard_label``. ConvAbuse's annotations may be abuse severities -3..1 while its soft and
  hard labels are binary; the task's README maps -3..-1 to "1" (abusive) and 0..1 to "0",
  which this reader applies when (and only when) the votes fall outside the soft-label keys
  and inside -3..1, and says so.
* **2025** (LeWiDi 3rd edition: CSC sarcasm 1-6, MP irony 0/1, Paraphrase -5..5, VariErrNLI
  multi-label NLI): ``annotations`` is an object keyed by annotator; a VariErrNLI value
  such as ``"entailment,neutral"`` is one response with two labels (two votes by one
  annotator), and its ``soft_label`` gives, per label, the fraction of annotators who
  ticked it (``{"entailment": {"0": 0.5, "1": 0.5}, ...}``). Demographics come in
  ``<Dataset>_annotators_meta.json`` next to the split files.

Ids are kept as written. The file's own ``soft_label`` and ``hard_label`` are kept in
``item_metadata`` and checked against the votes; mismatches are counted, warned about and
reported in ``votes.read_info`` and ``votes.read_details``, never replaced.

What a read returns
-------------------
One vote per (item, annotator, label); a multi-label response (VariErrNLI) is several votes by
one annotator on an item. ``item_metadata`` keeps ``soft_label``, ``hard_label`` (2023),
``text``, ``annotation_task``, ``lang``, ``split``, ``other_info``, the raw
``annotators``/``annotations`` and the stated counts. ``annotator_metadata`` is a DataFrame
indexed by annotator id, in ``annotator_ids`` order, NaN where an annotator has no record;
``read_info`` one line (layout, scale, mismatch counts with the first item ids);
``read_details.details`` a dict: ``edition``, ``dataset``, ``split``, ``scale`` ("nominal",
"ordinal" or "multilabel"), ``label_values``, ``multilabel``, ``soft_label_mismatches`` /
``hard_label_mismatches`` (item ids), ``hard_label_ties`` (items whose file label is one of
tied top labels), ``count_mismatches``, ``skipped_unannotated``, ``repeated_pairs`` ((item,
annotator) pairs with more than one vote), ``duplicates`` (the policy applied to them),
``duplicate_votes_removed`` and the metadata join counts.

Demographics (``annotator_metadata``): 2025 sets publish them in
``<Dataset>_annotators_meta.json``, read leniently, as the organisers published it (trailing
commas, ``NaN``: :func:`annokit.io.source.loads_json_lenient`), and what was tolerated is
stated; a metadata file that cannot be read at all is one warning naming the file and line,
never an error: the votes are read without it. 2023 files carry per-annotator fields in
``other_info``; those constant for each annotator are used.

References
----------
Leonardelli et al. (2023). SemEval-2023 Task 11: Learning with Disagreements (LeWiDi).
SemEval 2023. doi:10.18653/v1/2023.semeval-1.314. Data and format descriptions:
https://github.com/Le-Wi-Di/le-wi-di.github.io (``LeWiDi_2-2023/readme.md``,
``LeWiDi_3-2025/readme.md``).
"""

from __future__ import annotations

import math
import os
import re
import warnings
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from annokit.core.checks import check_option, first_offenders
from annokit.core.labels import LabelSet, scalar_to_str
from annokit.core.votes import DuplicatePolicy, ReadInfo, Votes
from annokit.errors import (
    AnnokitError,
    DataFormatError,
    DegenerateInputWarning,
    InputError,
    InvalidValueError,
    Option,
)
from annokit.io.lewidi_checks import annotator_table, check_against_file, file_soft_labels
from annokit.io.source import Input, loads_json

__all__ = ["LIKERT_SCALES", "SPLITS", "file_soft_labels", "looks_like_lewidi", "lewidi_split_file",
           "read_lewidi"]

SPLITS = ("train", "dev", "test")
#: Full Likert scales of the 2025 ordinal sets (every point is a label, voted or not).
LIKERT_SCALES: dict[str, tuple[str, ...]] = {
    "CSC": tuple(str(v) for v in range(1, 7)),
    "Paraphrase": tuple(str(v) for v in range(-5, 6)),
}
_SPLIT_FILE = re.compile(r"^(?P<dataset>.+?)_(?P<split>train|dev|test)(?:_[^.]*)?\.json$", re.I)
_SNIFF_BYTES = 1 << 16
_EMPTY: tuple[Any, ...] = (None, "", {}, [])
Unannotated = Literal["error", "skip"]


def looks_like_lewidi(path: str | os.PathLike | Input) -> bool:
    """True for a JSON object of items whose first item has ``annotators`` and ``annotations``.

    Reads at most the first 64 KiB; a directory or unreadable path is not LeWiDi.
    """
    try:
        if not isinstance(path, Input) and Path(path).is_dir():
            return False
        source = Input(path)
        head = source.data[:_SNIFF_BYTES] if source.path is None else _head(source.path)
    except (AnnokitError, OSError):
        return False
    text = head.decode("utf-8", errors="ignore").lstrip("\ufeff \t\r\n")
    if not text.startswith("{"):
        return False
    m = re.match(r'\{\s*"(?:[^"\\]|\\.)*"\s*:\s*\{', text)
    return bool(m) and '"annotators"' in text and '"annotations"' in text


def _head(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(_SNIFF_BYTES)


def lewidi_split_file(path: str | os.PathLike, split: str | None = None) -> Path:
    """The split file to read: ``path`` itself, or the ``*_<split>.json`` file in folder ``path``.

    Raises
    ------
    DataFormatError
        A folder with no (or more than one) file for the split, or a folder without ``split``.
    InvalidValueError
        An unknown split, or a file whose name says another split.
    """
    if split is not None:
        check_option("split", split, SPLITS)
    path = Path(path)
    if not path.is_dir():
        m = _SPLIT_FILE.match(path.name)
        if split is not None and m and m["split"].lower() != split:
            raise InvalidValueError(f"{path.name} is the {m['split']} split, not {split!r}; "
                                    "give the file without a split, or its folder with it "
                                    "(Python: split=)")
        return path
    found = sorted(p for p in path.glob("*.json") if (m := _SPLIT_FILE.match(p.name)))
    if split is None:
        raise DataFormatError(f"{path} is a folder ({len(found)} LeWiDi split file(s): "
                              f"{[p.name for p in found][:6]}); give the path of one split file "
                              "(Python: or split='train', 'dev' or 'test')")
    chosen = [p for p in found
              if (m := _SPLIT_FILE.match(p.name)) is not None and m["split"].lower() == split]
    if len(chosen) != 1:
        raise DataFormatError(
            f"{path}: {len(chosen)} files for split {split!r} (expected one named "
            f"<Dataset>_{split}.json); found {[p.name for p in found]}")
    return chosen[0]


def read_lewidi(path: str | os.PathLike | Input, *, split: str | None = None,
                labels: LabelSet | None = None,
                annotator_metadata: str | os.PathLike | bool | None = None,
                unannotated: Unannotated = "error",
                duplicates: DuplicatePolicy = "error") -> Votes:
    """Read one split of a LeWiDi 2023 or 2025 dataset.

    Parameters
    ----------
    path : path-like
        A split file (``ArMIS_dev.json``) or, with ``split``, the dataset's folder.
    split : {"train", "dev", "test"}, optional
    labels : LabelSet, optional
        Label order. Default: numeric labels in numeric order (a Likert scale keeps every
        point: CSC 1..6, Paraphrase -5..5), other labels in the order of the first
        ``soft_label``, then as first voted.
    annotator_metadata : path-like, bool or None
        2025 demographics: None looks for ``<Dataset>_annotators_meta.json`` beside the
        file, a path reads that file, False skips it (see the module docstring).
    unannotated : {"error", "skip"}, default="error"
        Items without annotations (a test split released without labels): refuse, or leave
        them out, counted and warned about (a file with no annotated item is refused).
    duplicates : {"error", "first", "last", "keep"}, default="error"
        An annotator named twice in one 2023 item's ``annotators`` (a repeated (item,
        annotator) pair): refuse, keep the first or last vote, or keep both (multi-label
        votes); see :func:`_resolve_repeated`.

    Returns
    -------
    Votes
        With ``annotator_metadata``, ``read_info`` and ``read_details`` (see the module).

    Raises
    ------
    DataFormatError
        Not a JSON object of items, misaligned annotators and annotations, a folder
        without a unique split file, or items without annotations (see ``unannotated``).
    SchemaError
        Repeated (item, annotator) pairs with ``duplicates="error"``.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> item = {"annotators": "Ann1,Ann2,Ann3", "annotations": "1,0,0", "hard_label": "0",
    ...         "soft_label": {"0": 0.67, "1": 0.33}, "split": "dev"}
    >>> _ = (d / "Toy_dev.json").write_text(json.dumps({"1": item}))
    >>> v = read_lewidi(d, split="dev")
    >>> v.counts().tolist(), v.read_details.details["soft_label_mismatches"]
    ([[2, 1]], [])
    """
    check_option("unannotated", unannotated, ("error", "skip"))
    check_option("duplicates", duplicates, ("error", "first", "last", "keep"))
    source = path if isinstance(path, Input) else Input(lewidi_split_file(path, split), what="votes")
    file, name = source.path, source.name
    ids, records = _items_of(loads_json(source.text, name), name)
    m = _SPLIT_FILE.match(name)
    dataset, split = (m["dataset"], split or m["split"].lower()) if m else (Path(name).stem, split)
    edition = _edition(records, name)
    ids, records, skipped = _annotated(ids, records, name, unannotated)
    multilabel = _multilabel(edition, records, dataset)
    votes, mapped = _votes_as_written(records, ids, edition, multilabel, name, dataset, labels)
    checks = check_against_file(votes, multilabel=multilabel)  # the votes as the file wrote them
    votes, repeated = _resolve_repeated(votes, duplicates, multilabel)
    scale = "multilabel" if multilabel else getattr(votes.labels, "scale", "nominal")
    votes.annotator_metadata, meta_info = annotator_table(votes, records, edition, file, dataset,
                                                          annotator_metadata, name)
    info: dict[str, Any] = {
        "edition": edition, "dataset": dataset, "split": split, "file": str(file) if file else name,
        "scale": scale, "multilabel": multilabel, "label_values": list(votes.labels.names),
        "severity_mapped": mapped, "skipped_unannotated": skipped, **checks, **meta_info,
        "repeated_pairs": repeated, "duplicates": duplicates,
        "duplicate_votes_removed": votes.n_duplicates_removed,
    }
    votes.read_details = ReadInfo("lewidi", info)
    votes.duplicates_info = None if duplicates == "error" or multilabel else {"policy": duplicates,
        "repeated_pairs": len(repeated), "votes_removed": votes.n_duplicates_removed}
    votes.read_info = _summary(name, info, votes)
    _warn_departures(name, info, votes)
    return votes


def _resolve_repeated(votes: Votes, duplicates: DuplicatePolicy, multilabel: bool
                      ) -> tuple[Votes, list[tuple[str, str]]]:
    """The votes with repeated (item, annotator) pairs resolved by ``duplicates``, and the
    pairs. The file's own soft labels and counts were checked against the votes as written,
    before one vote of a pair is dropped; the pairs and what was done are stated in
    ``read_info`` and ``read_details.details["repeated_pairs"]``. In a 2025 file an annotator
    is a key of ``annotations`` and cannot repeat; the labels of one multi-label response are
    one answer, not repeats."""
    repeated = [] if multilabel else repeated_pairs(votes)
    if repeated and duplicates != "keep":
        votes = Votes(votes.item_index, votes.label_index, item_ids=votes.item_ids,
                      labels=votes.labels, annotator_index=votes.annotator_index,
                      annotator_ids=votes.annotator_ids, item_metadata=votes.item_metadata,
                      duplicates=duplicates, source=votes.source)
    return votes, repeated


def _multilabel(edition: int, records: list[dict[str, Any]], dataset: str) -> bool:
    """Whether a split holds multi-label responses (2025: per-label soft labels, VariErrNLI)."""
    return edition == 2025 and (
        any(isinstance(v, dict) for r in records for v in (r.get("soft_label") or {}).values())
        or dataset.lower().startswith("varierr"))


def _items_of(doc: Any, name: str) -> tuple[list[str], list[dict[str, Any]]]:
    """The item ids and records of a split file's JSON object."""
    if not isinstance(doc, dict) or not doc:
        raise DataFormatError(f"{name}: expected a non-empty JSON object of items keyed by id; "
                              f"got {type(doc).__name__ if doc else 'an empty object'}")
    ids, records = [], []
    for key, rec in doc.items():
        if not isinstance(rec, dict):
            raise DataFormatError(f"{name}, item {key!r}: expected an object; got {type(rec).__name__}")
        ids.append(str(key))
        records.append(rec)
    return ids, records


def _edition(records: list[dict[str, Any]], name: str) -> int:
    """2023 (annotations as comma-separated strings) or 2025 (objects keyed by annotator)."""
    kinds = {type(r.get("annotations")).__name__ for r in records if r.get("annotations") not in _EMPTY}
    if not kinds:
        raise DataFormatError(
            f"{name}: none of its {len(records)} items has annotations (a test split released "
            "without labels?); there are no votes to read")
    if not kinds <= {"str", "dict"} or len(kinds) > 1:
        raise DataFormatError(f"{name}: annotations must all be comma-separated strings (2023) "
                              f"or all objects keyed by annotator (2025); found {sorted(kinds)}")
    return 2023 if kinds == {"str"} else 2025


def _annotated(ids: list[str], records: list[dict[str, Any]], name: str, unannotated: str
               ) -> tuple[list[str], list[dict[str, Any]], list[str]]:
    """The ids and records of the items with annotations, and the ids of those skipped
    (``unannotated="skip"``, warned about)."""
    empty = [i for i, r in enumerate(records) if r.get("annotations") in _EMPTY]
    if not empty:
        return ids, records, []
    if unannotated == "error":
        skip = Option("unannotated", "skip")
        raise DataFormatError(
            f"{name}: {len(empty)} item(s) have no annotations, e.g. "
            f"{first_offenders([ids[i] for i in empty])}; give a split file with annotations "
            f"({skip} leaves these items out, counted)", options=[skip])
    warnings.warn(f"{name}: {len(empty)} item(s) without annotations left out, e.g. "
                  f"{first_offenders([ids[i] for i in empty])}", DegenerateInputWarning,
                  stacklevel=3)
    keep = sorted(set(range(len(records))) - set(empty))
    return [ids[i] for i in keep], [records[i] for i in keep], [ids[i] for i in empty]


def _votes_as_written(records: list[dict[str, Any]], ids: list[str], edition: int,
                      multilabel: bool, name: str, dataset: str, labels: LabelSet | None
                      ) -> tuple[Votes, Any]:
    """The votes as the file wrote them (repeated pairs kept) and the severity mapping of
    the label names (:func:`_label_names`)."""
    item_of, ann_of, raw = _votes_of(records, ids, edition, multilabel, name)
    labelset, value_to_name, mapped = _label_names(raw, _soft_keys(records), dataset, labels)
    label_strings = raw if value_to_name is None else [value_to_name[v] for v in raw]
    try:
        label_index = labelset.encode(np.asarray(label_strings, dtype=object), where=name)
    except InputError as exc:
        raise DataFormatError(f"{name}: {exc}") from None
    ann_codes, ann_ids = pd.factorize(pd.Series(ann_of, dtype=object), sort=False)
    meta = _item_metadata(records, numeric=value_to_name is not None)
    votes = Votes(np.asarray(item_of, dtype=np.int64), label_index,
                  item_ids=np.asarray(ids, dtype=object), labels=labelset,
                  annotator_index=ann_codes, annotator_ids=np.asarray(ann_ids, dtype=object),
                  item_metadata=meta, duplicates="keep", source=name)
    return votes, mapped


def _warn_departures(name: str, info: dict[str, Any], votes: Votes) -> None:
    """Warn about votes left out of repeated pairs and about the file's own fields (soft and
    hard labels, counts) that disagree with its votes."""
    repeated, duplicates = info["repeated_pairs"], info["duplicates"]
    if votes.n_duplicates_removed:
        warnings.warn(f"{name}: {len(repeated)} repeated (item, annotator) pair(s); the "
                      f"{duplicates} vote of each kept, {votes.n_duplicates_removed} vote(s) left "
                      f"out (--duplicates {duplicates})", DegenerateInputWarning, stacklevel=4)
    bad = [(k, info[k]) for k in ("soft_label_mismatches", "hard_label_mismatches",
                                  "count_mismatches") if info[k]]
    if bad:
        warnings.warn(f"{name}: the votes disagree with the file's own fields: " + "; ".join(
            f"{k.replace('_', ' ')}: {len(v)} item(s), e.g. {first_offenders(v)}" for k, v in bad),
            DegenerateInputWarning, stacklevel=4)


def repeated_pairs(votes: Votes) -> list[tuple[str, str]]:
    """The (item id, annotator id) pairs that have more than one vote, in file order."""
    if (votes.annotator_index is None or votes.annotator_ids is None
            or not votes.has_duplicate_pairs()):
        return []
    key = pd.Series(votes.pair_keys())
    first = np.flatnonzero(key.duplicated(keep=False).to_numpy() & ~key.duplicated().to_numpy())
    return [(str(votes.item_ids[votes.item_index[r]]),
             str(votes.annotator_ids[votes.annotator_index[r]])) for r in first]


def _split_values(text: str) -> list[str]:
    return [t.strip() for t in str(text).split(",")]


def _votes_of(records: list[dict], ids: list[str], edition: int, multilabel: bool,
              name: str) -> tuple[list[int], list[str], list[str]]:
    """Item code, annotator id and raw label text of every vote, in file order."""
    item_of: list[int] = []
    ann_of: list[str] = []
    raw: list[str] = []
    for i, (iid, rec) in enumerate(zip(ids, records, strict=True)):
        where = f"{name}, item {iid!r}"
        ann = rec["annotations"]
        if edition == 2023:
            annotators = _split_values(rec.get("annotators", ""))
            values = _split_values(ann)
            if len(annotators) != len(values):
                raise DataFormatError(f"{where}: {len(values)} annotations for {len(annotators)} "
                                      f"annotators ({rec.get('annotators')!r})")
            pairs = list(zip(annotators, values, strict=True))
        else:
            if not isinstance(ann, dict):
                raise DataFormatError(f"{where}: annotations must be an object keyed by annotator")
            pairs = []
            for a, value in ann.items():
                if value is None or isinstance(value, (dict, list, bool)):
                    raise DataFormatError(f"{where}: annotation of {a!r} must be a label; got {value!r}")
                parts = _split_values(value) if isinstance(value, str) else [scalar_to_str(value)]
                if len(parts) > 1 and not multilabel:
                    raise DataFormatError(f"{where}: annotator {a!r} gave several labels "
                                          f"({value!r}) in a single-label file")
                if len(set(parts)) != len(parts):
                    raise DataFormatError(f"{where}: annotator {a!r} repeats a label ({value!r})")
                pairs.extend((str(a), p) for p in parts)
        for a, value in pairs:
            if a == "" or value == "":
                raise DataFormatError(f"{where}: blank annotator id or label in {pairs!r}")
            item_of.append(i)
            ann_of.append(a)
            raw.append(value)
    return item_of, ann_of, raw


def _soft_keys(records: list[dict]) -> list[str]:
    keys: dict[str, None] = {}
    for rec in records:
        soft = rec.get("soft_label")
        if isinstance(soft, dict):
            for k in soft:
                keys.setdefault(str(k), None)
    return list(keys)


def _number(text: str) -> float | None:
    try:
        x = float(text)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _label_names(raw: list[str], soft_keys: list[str], dataset: str, labels: LabelSet | None
                 ) -> tuple[LabelSet, dict[str, str] | None, bool]:
    """The label set; for numeric labels, the name of each raw value ("1.0" -> "1"); and
    whether ConvAbuse severities were mapped to its binary labels."""
    distinct = list(dict.fromkeys(raw))
    found = {v: _number(v) for v in [*distinct, *soft_keys, *LIKERT_SCALES.get(dataset, ())]}
    numbers = {v: x for v, x in found.items() if x is not None}
    if len(numbers) < len(found):
        order = list(dict.fromkeys([*soft_keys, *distinct]))
        return LabelSet.coerce(labels, ()) if labels is not None else LabelSet(order), None, False
    canon = {v: scalar_to_str(x) for v, x in numbers.items()}
    soft_values = {numbers[k] for k in soft_keys}
    mapped = (soft_values == {0.0, 1.0} and not {numbers[v] for v in distinct} <= soft_values
              and all(numbers[v] in (-3.0, -2.0, -1.0, 0.0, 1.0) for v in distinct))
    if mapped:  # ConvAbuse (2023 README): severity -3..-1 is abusive ("1"), 0..1 is not ("0")
        canon.update({v: "1" if numbers[v] < 0 else "0" for v in distinct})
        values = [0.0, 1.0]
    else:
        values = sorted(set(numbers.values()))
    if labels is not None:
        return LabelSet.coerce(labels, ()), canon, mapped
    scale = "ordinal" if len(values) > 2 else "nominal"  # a Likert scale; binary 0/1 is nominal
    return LabelSet([scalar_to_str(x) for x in values], scale=scale), canon, mapped


def _item_metadata(records: list[dict], *, numeric: bool) -> pd.DataFrame:
    def canon(v: Any) -> Any:
        if v is None:
            return None
        s = scalar_to_str(v).strip()
        x = _number(s) if numeric else None
        return s if x is None else scalar_to_str(x)

    fields = {"text": "text", "annotation task": "annotation_task", "lang": "lang",
              "split": "split", "soft_label": "soft_label", "other_info": "other_info",
              "annotators": "annotators", "annotations": "annotations",
              "number of annotations": "number_of_annotations",
              "number of annotators": "number_of_annotators"}
    data: dict[str, list[Any]] = {}
    for field, column in fields.items():
        if any(field in r for r in records):
            data[column] = [r.get(field) for r in records]
    if any("hard_label" in r for r in records):
        data["hard_label"] = [canon(r.get("hard_label")) for r in records]
    return pd.DataFrame(data, index=pd.RangeIndex(len(records)))


def _summary(name: str, info: dict[str, Any], votes: Votes) -> str:
    def part(key: str, what: str) -> str:
        items = info[key]
        return f"{what}: {len(items)}" + (f" (e.g. {first_offenders(items)})" if items else "")

    text = (f"{name}: LeWiDi {info['edition']} ({info['dataset']}, {info['split'] or 'split ?'}), "
            f"{votes.n_items} items, {votes.n_annotators} annotators, {votes.n_votes} votes; "
            f"{info['scale']} labels {info['label_values']}; "
            + part("soft_label_mismatches", "soft_label mismatches"))
    if info["edition"] == 2023:
        text += "; " + part("hard_label_mismatches", "hard_label mismatches") + \
            f", {len(info['hard_label_ties'])} hard label(s) chosen among tied votes"
    if info["count_mismatches"]:
        text += "; " + part("count_mismatches", "stated vote counts wrong")
    if info["severity_mapped"]:
        text += "; severities -3..-1 read as 1, 0..1 as 0 (ConvAbuse README)"
    if info["skipped_unannotated"]:
        text += "; " + part("skipped_unannotated", "items without annotations left out")
    if info["repeated_pairs"] or (info["duplicates"] != "error" and not info["multilabel"]):
        policy, removed = info["duplicates"], info["duplicate_votes_removed"]
        done = ("all votes kept (--duplicates keep: multi-label)" if policy == "keep" else
                f"the {policy} vote of each kept, {removed} vote(s) left out "
                f"(--duplicates {policy})")
        text += "; " + part("repeated_pairs", "repeated (item, annotator) pairs") + f", {done}"
    return text + f"; annotator metadata: {info['annotator_metadata']}"
