"""Model prediction files -> :class:`Predictions` (item ids + probability rows).

Readers for the shapes prediction files come in:

* **JSON Lines** (``.jsonl``, and ``.json`` files that hold one object per
  line, such as the Baan et al. 2022 prediction files): one object per line
  with an id field and a ``probs`` (or ``predicted_probabilities``) and/or
  ``logits`` list.
* **JSON** holding an array of such objects, or the official ChaosNLI shape
  ``{model_name: {uid: {"uid": ..., "logits" | "predicted_probabilities": [...]}}}``
  (also ``{uid: {...}}`` without the model level).
* **CSV / TSV** with an id column and either a ``probs`` / ``logits`` column
  holding a JSON list per row, or one column per class (``prob_<label>`` /
  ``logit_<label>``, or, when no such prefix is used, every other column, whose
  headers then name the classes).
* **Parquet** with the same columns as CSV (list columns are read natively).
* **.npy** (loaded with ``allow_pickle=False``): either a structured array with
  an id field (fixed-width string or integer) and a ``probs`` or ``logits``
  sub-array field, or a plain 2-D float array of *probabilities* whose item ids
  are in a sidecar text file next to it, ``<name>.ids.txt`` for ``<name>.npy``
  (one id per line, UTF-8). A plain array is never read as logits: save a
  structured array with a ``logits`` field for that.

The class order of a prediction file is never guessed from the data: it is
given explicitly when the predictions are aligned with votes
(:func:`annokit.metrics.records.align`, ``pred_labels``), or taken from per-class
column headers.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.checks import first_offenders
from annokit.core.columns import MORE_SPELLINGS, ROLE_SPELLINGS, name_key
from annokit.errors import AnnokitWarning, DataFormatError, InvalidValueError
from annokit.io.delimited import decimal_comma_hint, decimal_commas
from annokit.io.lines import RowPlaces
from annokit.io.partitions import is_partitioned, partition_files
from annokit.io.prediction_arrays import Predictions, _build, _ids_to_str, locations_of
from annokit.io.source import (
    Input,
    check_regular,
    decode_text,
    loads_json,
    near_files,
    read_bytes,
    read_text,
    text_lines,
)
from annokit.io.tables import read_table

__all__ = ["ID_FIELDS", "Predictions", "read_predictions"]

#: Id fields tried in this order when ``id_field`` is not given.
ID_FIELDS = ("item", "id", "uid")
#: The vote tables' item spellings, compared by name_key, a bare "ID" last (an id column named
#: example_id before a class named ID).
_ID_KEYS = tuple(dict.fromkeys(
    [name_key(s) for s in (*ROLE_SPELLINGS["item"], *MORE_SPELLINGS["item"]) if s != "id"]
    + ["id"]))
_PROB_FIELDS = ("probs", "predicted_probabilities", "probabilities")
_LOGIT_FIELDS = ("logits",)
_PROB_PREFIXES = ("probs_", "prob_", "p_")
_LOGIT_PREFIXES = ("logits_", "logit_")


# ---------------------------------------------------------------------------
# readers


def find_id_field(fields: Sequence[str]) -> str | None:
    """The item id field of ``fields`` without a name given: the first of :data:`ID_FIELDS`,
    else the first field spelled like an item column of a vote table
    (:data:`~annokit.core.columns.ROLE_SPELLINGS`, then :data:`~annokit.core.columns.
    MORE_SPELLINGS`; compared by :func:`~annokit.core.columns.name_key`, so ``item_id``,
    ``Item ID`` and ``ID`` are found), None when no field is."""
    for f in ID_FIELDS:
        if f in fields:
            return f
    by_key: dict[str, str] = {}
    for f in fields:
        by_key.setdefault(name_key(f), f)
    return next((by_key[key] for key in _ID_KEYS if key in by_key), None)


def pick_id_field(fields: Sequence[str], id_field: str | None, where: str) -> str:
    """The item id field: ``id_field`` when given (it must exist), else :func:`find_id_field`'s."""
    if id_field is not None:
        if id_field not in fields:
            raise DataFormatError(f"{where}: id field {id_field!r} not found; got fields {list(fields)}")
        return id_field
    found = find_id_field(fields)
    if found is None:
        raise DataFormatError(f"{where}: no item id field (tried {list(ID_FIELDS)} and the vote "
                              f"tables' item spellings, e.g. item_id, Item ID); got fields "
                              f"{list(fields)}; name it with --id-field (Python: id_field=)")
    return found


def _from_records(records: list[Any], locations: np.ndarray, *, source: str, id_field: str | None,
                  renormalize: bool, atol: float, keys: Sequence[str] | None = None) -> Predictions:
    if not records:
        raise DataFormatError(f"{source}: no prediction rows")
    for i, r in enumerate(records):
        if not isinstance(r, dict):
            raise DataFormatError(f"{locations[i]} of {source}: expected a JSON object; got "
                                  f"{type(r).__name__}")
    first = records[0]
    fields = list(first)
    if keys is not None and id_field is None and find_id_field(fields) is None:
        raw_ids: list[Any] = list(keys)  # {uid: {...}} without an id inside the records
    else:
        idf = pick_id_field(fields, id_field, f"{locations[0]} of {source}")
        raw_ids = []
        for i, r in enumerate(records):
            if idf not in r:
                raise DataFormatError(f"{locations[i]} of {source}: id field {idf!r} is missing")
            raw_ids.append(r[idf])
    ids = _ids_to_str(raw_ids, source=source, locations=locations)
    pf = next((f for f in _PROB_FIELDS if f in first), None) or _scores_field(first)
    lf = next((f for f in _LOGIT_FIELDS if f in first), None)
    if pf is None and lf is None:
        raise DataFormatError(f"{locations[0]} of {source}: no probability field "
                              f"{list(_PROB_FIELDS)} (or a list of {{\"label\", \"score\"}} "
                              f"objects) or logits field {list(_LOGIT_FIELDS)}; got fields {fields}")

    def column(f: str) -> list[Any]:
        out = []
        for i, r in enumerate(records):
            if f not in r or r[f] is None:
                raise DataFormatError(f"{locations[i]} of {source} (item {ids[i]!r}): field {f!r} "
                                      "is missing")
            out.append(r[f])
        return out

    where = (source, locations, ids)
    raw_probs, raw_logits = (column(pf) if pf else None), (column(lf) if lf else None)
    if raw_probs is not None and raw_logits is not None and \
            _keyed(raw_probs[0]) != _keyed(raw_logits[0]):
        raise DataFormatError(f"{locations[0]} of {source}: {pf!r} and {lf!r} must both be keyed "
                              "by class or both be lists in one class order; one is each")
    probs, names = (None, None) if raw_probs is None else _labelled(raw_probs, str(pf), where,
                                                                     None)
    logits, names = (None, names) if raw_logits is None else _labelled(raw_logits, str(lf),
                                                                       where, names)
    return _build(ids, probs, logits, label_names=names, source=source, locations=locations,
                  renormalize=renormalize, atol=atol)


def _scores_field(record: dict[str, Any]) -> str | None:
    """The field holding a Hugging Face pipeline's output (``top_k=None``): a list of
    ``{"label": ..., "score": ...}`` objects, one per class; None when no field does."""
    for f, v in record.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) and {"label", "score"} <= set(x)
                                             for x in v):
            return f
    return None


def _keyed(value: Any) -> bool:
    """Whether a row's value names its classes (``{label: p}`` or ``[{"label", "score"}]``)."""
    return isinstance(value, dict) or (isinstance(value, list) and bool(value)
                                        and isinstance(value[0], dict))


def _labelled(values: list[Any], field: str, where: tuple[str, Any, Any],
              names: list[str] | None) -> tuple[list[Any], list[str] | None]:
    """Rows written per class (``{label: value}``, or a list of ``{"label", "score"}``
    objects) as lists in the first row's class order (or ``names``), with the class names;
    lists of numbers are returned as they are, with ``names``."""
    if not _keyed(values[0]):
        return values, names
    source, locations, ids = where
    rows = [{str(x.get("label")): x.get("score") for x in v}
            if isinstance(v, list) and all(isinstance(x, dict) for x in v) else v for v in values]
    for i, (v, row) in enumerate(zip(values, rows, strict=True)):
        if isinstance(v, list) and isinstance(row, dict) and len(row) != len(v):
            raise DataFormatError(f"{locations[i]} of {source} (item {ids[i]!r}): field {field!r} "
                                  "names a label twice: "
                                  f"{[str(x.get('label')) for x in v]}")
    order = names if names is not None else [str(k) for k in rows[0]]
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or sorted(row) != sorted(order):
            got = (f"has classes {sorted(row)}" if isinstance(row, dict)
                   else f"is a {type(row).__name__}")
            raise DataFormatError(f"{locations[i]} of {source} (item {ids[i]!r}): field {field!r} "
                                  f"{got}; the first row maps the classes {sorted(order)} to "
                                  "values, and every row must")
    return [[row[k] for k in order] for row in rows], order


def _read_json(path: Path, *, id_field: str | None, renormalize: bool, atol: float,
               model: str | None) -> Predictions:
    source = str(path)
    text = decode_text(read_bytes(path, what="predictions"), source)
    whole = None
    if text.lstrip().startswith(("[", "{")) and "\n" in text.strip():
        try:
            whole = loads_json(text, source, allow_nan=True)
        except DataFormatError:
            whole = None  # JSON Lines: each line parsed (and reported) below
    elif text.lstrip().startswith(("[", "{")):
        whole = loads_json(text, source, allow_nan=True)
    if isinstance(whole, list):
        locs = locations_of("element", len(whole))
        return _from_records(whole, locs, source=source, id_field=id_field,
                             renormalize=renormalize, atol=atol)
    if isinstance(whole, dict) and whole and all(isinstance(v, dict) for v in whole.values()):
        inner = list(whole.values())
        nested = all(v and all(isinstance(x, dict) for x in v.values()) for v in inner)
        if nested:  # {model: {uid: {...}}} (ChaosNLI's official format)
            models = list(whole)
            if model is None:
                if len(models) > 1:
                    raise DataFormatError(f"{source} holds predictions of {len(models)} models "
                                          f"{first_offenders(models)}; choose one with --model "
                                          "(Python: model=)")
                model = models[0]
            if model not in whole:
                raise DataFormatError(f"{source}: no model {model!r}; models are {models}")
            table = whole[model]
            source = f"{source} (model {model!r})"
        else:
            table = whole
        keys = list(table)
        locs = np.array([f"entry {k!r}" for k in keys], dtype=object)
        return _from_records(list(table.values()), locs, source=source, id_field=id_field,
                             renormalize=renormalize, atol=atol, keys=keys)
    # JSON Lines
    records, lines = [], []
    for n, line in enumerate(text_lines(text), start=1):
        if not line.strip():
            continue
        records.append(loads_json(line, f"line {n} of {source}", allow_nan=True))
        lines.append(f"line {n}")
    return _from_records(records, np.array(lines, dtype=object), source=source, id_field=id_field,
                         renormalize=renormalize, atol=atol)


def _parse_cell(v: Any) -> Any:
    if isinstance(v, str):
        try:
            return loads_json(v, "cell", allow_nan=True)
        except DataFormatError:
            return v  # reported by _matrix with its location
    return v


@dataclass(frozen=True)
class PredictionColumns:
    """Which columns of a prediction table hold what (:func:`prediction_columns`).

    ``prob_field`` / ``logit_field``: the list column(s) holding a row per cell (then
    ``class_columns`` is empty and ``label_names`` None); else ``class_columns`` holds
    one column per class of kind ``kind`` ("probs" or "logits") and ``label_names``
    the classes they name.
    """

    id_field: str
    prob_field: str | None
    logit_field: str | None
    class_columns: tuple[str, ...]
    kind: str
    label_names: tuple[str, ...] | None


def prediction_columns(columns: Sequence[Any], id_field: str | None, where: str
                       ) -> PredictionColumns:
    """The id column and the probability/logit columns of a table with ``columns``.

    Both engines read prediction tables through this (the Dask engine partition by
    partition). Raises :class:`DataFormatError` without an id column.
    """
    cols = [str(c) for c in columns]
    idf = pick_id_field(cols, id_field, where)
    rest = [c for c in cols if c != idf]
    pf = next((f for f in _PROB_FIELDS if f in rest), None)
    lf = next((f for f in _LOGIT_FIELDS if f in rest), None)
    if pf or lf:
        return PredictionColumns(idf, pf, lf, (), "probs" if pf else "logits", None)
    pcols = [c for c in rest if c.startswith(_PROB_PREFIXES)]
    lcols = [c for c in rest if c.startswith(_LOGIT_PREFIXES)]
    if lcols and not pcols:
        chosen, kind = lcols, "logits"
        names = [_strip_prefix(c, _LOGIT_PREFIXES) for c in lcols]
    elif pcols:
        chosen, kind = pcols, "probs"
        names = [_strip_prefix(c, _PROB_PREFIXES) for c in pcols]
    else:
        chosen, kind, names = rest, "probs", rest
    return PredictionColumns(idf, None, None, tuple(chosen), kind, tuple(names))


def predictions_from_frame(df: pd.DataFrame, locations: Any, *, source: str,
                           id_field: str | None, renormalize: bool, atol: float) -> Predictions:
    """:class:`Predictions` from a table (CSV, Parquet or one Dask partition of them).

    ``locations`` names each row in messages (``"line 3"``); ``df``'s column names
    become strings.
    """
    if len(df) == 0:
        raise DataFormatError(f"{source}: no prediction rows")
    cols = [str(c) for c in df.columns]
    df.columns = cols
    layout = prediction_columns(cols, id_field, source)
    idf, pf, lf = layout.id_field, layout.prob_field, layout.logit_field
    ids = _ids_to_str(df[idf].to_numpy(dtype=object), source=source, locations=locations)
    label_names = None
    probs: list[Any] | np.ndarray | None
    logits: list[Any] | np.ndarray | None
    if pf or lf:
        probs = None if pf is None else [_parse_cell(v) for v in df[pf].to_numpy(dtype=object)]
        logits = None if lf is None else [_parse_cell(v) for v in df[lf].to_numpy(dtype=object)]
    else:
        chosen, kind = list(layout.class_columns), layout.kind
        label_names = list(layout.label_names or ())
        mat = np.empty((len(df), len(chosen)), dtype=np.float64)
        semicolon = df.attrs.get("annokit_sep") == ";"
        for j, c in enumerate(chosen):
            column = decimal_commas(df[c]) if semicolon else df[c]
            vals = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
            bad = np.isnan(vals)
            if bad.any():  # text only where a value did not parse
                bad[bad] = ~df[c][bad].map(str).str.lower().isin(["nan"]).to_numpy()
            if bad.any():
                i = int(np.argmax(bad))
                value = df[c].iloc[i]
                raise DataFormatError(f"{locations[i]} of {source}: column {c!r} is not numeric "
                                      f"(got {value!r}){decimal_comma_hint(value, semicolon)}; "
                                      f"class columns used: {chosen}{_other_columns_hint(layout)}")
            mat[:, j] = vals
        probs, logits = (mat, None) if kind == "probs" else (None, mat)
    return _build(ids, probs, logits, label_names=label_names, source=source, locations=locations,
                  renormalize=renormalize, atol=atol)


def _other_columns_hint(layout: PredictionColumns) -> str:
    """How to keep other columns out of the classes, when every column but the id is one."""
    if layout.label_names != layout.class_columns:  # prob_<label> columns: the rest is not read
        return ""
    return (" (every column but the id is read as a class unless the classes are named "
            "prob_<label> or logit_<label>: rename them so, and other columns are not read)")


def _strip_prefix(name: str, prefixes: Sequence[str]) -> str:
    for p in prefixes:
        if name.startswith(p):
            return name[len(p):]
    return name


def _read_csv(path: Path, *, sep: str | None, id_field: str | None, renormalize: bool,
              atol: float) -> Predictions:
    df = read_table(Input(path, what="predictions"), sep=sep)
    if df.attrs.get("annokit_ignored"):  # an index column, empty rows: said, as read_as says
        warnings.warn(f"{path.name}: " + "; ".join(df.attrs["annokit_ignored"]), AnnokitWarning,
                      stacklevel=4)
    locs = RowPlaces.of_frame(df.attrs, len(df))  # file lines, found when a message needs one
    return predictions_from_frame(df, locs, source=str(path), id_field=id_field,
                                  renormalize=renormalize, atol=atol)


def _read_parquet(path: Path, *, id_field: str | None, renormalize: bool,
                  atol: float) -> Predictions:
    try:
        df = read_table(Input(path, what="predictions"))
    except DataFormatError as exc:
        raise DataFormatError(f"{path}: not a readable Parquet file ({exc})") from None
    locs = locations_of("row", len(df))
    return predictions_from_frame(df, locs, source=str(path), id_field=id_field,
                                  renormalize=renormalize, atol=atol)


def _read_npy(path: Path, *, id_field: str | None, renormalize: bool, atol: float,
              row_ids: bool = False) -> Predictions:
    source = str(path)
    check_regular(path, what="predictions")
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, EOFError) as exc:
        raise DataFormatError(f"{source}: not a readable .npy file ({exc})") from None
    except ValueError as exc:
        raise DataFormatError(f"{source}: cannot load without pickle ({exc}); store ids as "
                              "fixed-width strings, not Python objects") from None
    if arr.dtype.names:
        names = list(arr.dtype.names)
        locs = locations_of("row", arr.shape[0])
        idf = pick_id_field(names, id_field, source)
        ids = _ids_to_str(arr[idf].tolist(), source=source, locations=locs)
        pf = next((f for f in _PROB_FIELDS if f in names), None)
        lf = next((f for f in _LOGIT_FIELDS if f in names), None)
        if pf is None and lf is None:
            raise DataFormatError(f"{source}: structured array has no probs or logits field; "
                                  f"got fields {names}")
        return _build(ids, None if pf is None else arr[pf], None if lf is None else arr[lf],
                      label_names=None, source=source, locations=locs, renormalize=renormalize,
                      atol=atol)
    if arr.ndim != 2:
        raise DataFormatError(f"{source}: expected a structured array or a 2-D probability "
                              f"array; got shape {arr.shape}")
    sidecar = path.with_name(path.name[: -len(".npy")] + ".ids.txt")
    if row_ids and not sidecar.exists():  # joined by row position, as the votes' array
        locs = locations_of("row", arr.shape[0])
        return _build(np.arange(arr.shape[0]).astype(str).astype(object), arr, None,
                      label_names=None, source=source, locations=locs, renormalize=renormalize,
                      atol=atol)
    if not sidecar.exists():
        raise DataFormatError(f"{source}: a plain 2-D array needs its item ids in {sidecar} "
                              "(one per line)")
    raw = read_text(sidecar, what="item ids").splitlines()
    while raw and not raw[-1].strip():
        raw.pop()
    locs = locations_of("row", arr.shape[0])
    if len(raw) != arr.shape[0]:
        raise DataFormatError(f"{sidecar} has {len(raw)} ids but {source} has {arr.shape[0]} rows")
    ids = _ids_to_str(raw, source=str(sidecar), locations=locs)
    return _build(ids, arr, None, label_names=None, source=source, locations=locs,
                  renormalize=renormalize, atol=atol)


def _read_one(path: Path, *, id_field: str | None, renormalize: bool, atol: float,
              model: str | None, sep: str | None = None, row_ids: bool = False) -> Predictions:
    if not path.exists():
        raise DataFormatError(f"prediction file not found: {path}{near_files(path)}")
    check_regular(path, what="predictions")
    name = path.name.lower()
    if name.endswith((".json", ".jsonl", ".ndjson")):
        return _read_json(path, id_field=id_field, renormalize=renormalize, atol=atol, model=model)
    if name.endswith((".csv", ".tsv", ".tab")):  # the separator is sniffed unless given
        return _read_csv(path, sep=sep, id_field=id_field, renormalize=renormalize, atol=atol)
    if sep is not None:
        raise InvalidValueError(f"{path.name}: --sep applies to CSV/TSV prediction files")
    if name.endswith((".parquet", ".pq")):
        return _read_parquet(path, id_field=id_field, renormalize=renormalize, atol=atol)
    if name.endswith(".npy"):
        return _read_npy(path, id_field=id_field, renormalize=renormalize, atol=atol,
                         row_ids=row_ids)
    raise DataFormatError(f"{path}: unknown prediction file type; expected .json, .jsonl, .csv, "
                          ".tsv, .parquet or .npy")


#: What the prediction readers take, for messages.
ACCEPTED = ("a path, a list of paths, a pandas DataFrame (an item column and one column per "
            "label, or probs/logits columns, as in a file) or annokit.io.Predictions")


def _from_dataframe(df: pd.DataFrame, *, id_field: str | None, renormalize: bool,
                    atol: float) -> Predictions:
    """Predictions from a DataFrame laid out as a prediction file's table; an index named
    like an id column (``item``, ``id``, ``uid``) is that column."""
    frame = df
    if frame.index.name is not None and str(frame.index.name) not in map(str, frame.columns):
        frame = frame.reset_index()
    else:
        frame = frame.copy()
    if id_field is None and find_id_field([str(c) for c in frame.columns]) is None and \
            frame.index.name is None and not isinstance(frame.index, pd.RangeIndex):
        raise DataFormatError(f"DataFrame: no item id column; got columns {list(map(str, df.columns))} "
                              "and an index without a name: name the index to read it as the "
                              "item ids, or name the id column (Python: df.rename_axis('item'), "
                              "id_field=)")
    return predictions_from_frame(frame, locations_of("row", len(frame)), source="DataFrame",
                                  id_field=id_field, renormalize=renormalize, atol=atol)


def read_predictions(paths: str | Path | Sequence[str | Path] | pd.DataFrame, *, id_field: str | None = None,
                     renormalize: bool = False, atol: float = 1e-4,
                     model: str | None = None, sep: str | None = None,
                     row_ids: bool = False) -> Predictions:
    """Read one model's predictions from one or more files.

    Parameters
    ----------
    paths : path, sequence of paths or DataFrame
        Several files (e.g. dev and test halves) are concatenated in order; a directory or
        glob of Parquet/CSV/TSV files is its files, in the order votes' partitions are read
        (:func:`annokit.io.partitions.partition_files`). A DataFrame is
        read as a file's table: an item column (or an index so named) and one column per
        label, or ``probs``/``logits`` columns; columns are detected as in a file.
    id_field : str, optional
        The item id field or column; by default :func:`find_id_field`'s (``item``, ``id``,
        ``uid``, else a vote table's item spelling).
    renormalize : bool, default=False
        Divide probability rows by their sum instead of rejecting rows that do
        not sum to 1 within ``atol`` (rows must still be finite and >= 0).
    atol : float, default=1e-4
        Tolerance on row sums.
    model : str, optional
        Which model to read from a ChaosNLI-style ``{model: {uid: ...}}`` file
        that holds several.
    sep : str, optional
        The CSV/TSV separator; default: sniffed (:mod:`annokit.io.delimited`, which also says
        when decimal commas are read).
    row_ids : bool, default=False
        A plain 2-D ``.npy`` array without its ``<name>.ids.txt`` takes the row positions
        ``"0"``, ``"1"``, ... as item ids, as a count or probability array of votes does
        (:mod:`annokit.io.counts`; the CLI sets it when the votes' ids are their row
        positions, and only for one file). Otherwise such an array is refused.

    Returns
    -------
    Predictions

    Raises
    ------
    DataFormatError
        Unreadable file, missing id or probability field, a non-finite,
        negative or non-normalised row (naming file, line and item id), or an
        item id that appears twice (within a file or in two files, naming both).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "p.jsonl").write_text('{"uid": "a", "probs": [0.2, 0.8]}\\n'
    ...                                '{"uid": "b", "probs": [0.5, 0.5]}\\n')
    >>> preds = read_predictions(d / "p.jsonl")
    >>> preds.item_ids.tolist(), preds.probs.tolist()
    (['a', 'b'], [[0.2, 0.8], [0.5, 0.5]])
    >>> _ = (d / "q.jsonl").write_text('{"uid": "c", "probs": [0.2, 0.9]}\\n')
    >>> read_predictions(d / "q.jsonl")
    Traceback (most recent call last):
    ...
    annokit.errors.DataFormatError: line 1 of ...q.jsonl (item 'c'): probs sum to 1.1, not 1 ...
    """
    if isinstance(paths, pd.DataFrame):
        return _from_dataframe(paths, id_field=id_field, renormalize=renormalize, atol=atol)
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, (list, tuple)) or not all(isinstance(p, (str, os.PathLike))
                                                       for p in paths):
        shown = type(paths).__name__ if not isinstance(paths, (list, tuple)) else \
            f"a {type(paths).__name__} holding " + ", ".join(sorted({type(p).__name__
                                                                     for p in paths}))
        raise InvalidValueError(f"predictions: expected {ACCEPTED}; got {shown}")
    files = [Path(f) for p in paths for f in _expand(p)]
    if not files:
        raise InvalidValueError("read_predictions needs at least one path")
    parts = [_read_one(p, id_field=id_field, renormalize=renormalize, atol=atol, model=model,
                       sep=sep, row_ids=row_ids and len(files) == 1) for p in files]
    return parts[0] if len(parts) == 1 else _concatenate(parts)


def _expand(path: str | os.PathLike) -> list[str | os.PathLike]:
    """A directory or glob of prediction tables (Parquet, CSV or TSV partitions, as Spark or
    a sharded inference job writes them) as its files, in the order
    :func:`annokit.io.partitions.partition_files` reads votes' partitions; any other path as
    it is."""
    text = os.fspath(path)
    if "://" not in text and is_partitioned(text):
        return list(partition_files(text))
    return [path]


def _concatenate(parts: list[Predictions]) -> Predictions:
    """The predictions of several files, in order: the same classes in each, no item twice."""
    widths = {p.n_labels for p in parts}
    if len(widths) > 1:
        raise DataFormatError("prediction files disagree on the number of classes: "
                              + ", ".join(f"{p.sources[0]}: {p.n_labels}" for p in parts))
    names = {p.label_names for p in parts}
    if len(names) > 1:
        raise DataFormatError("prediction files name their classes differently: "
                              + ", ".join(f"{p.sources[0]}: {p.label_names}" for p in parts))
    ids = np.concatenate([p.item_ids for p in parts])
    src_idx = np.concatenate([np.full(p.n_rows, k, dtype=np.int64) for k, p in enumerate(parts)])
    locs = RowPlaces.concat([p.locations for p in parts])
    dup = pd.Series(ids).duplicated(keep=False).to_numpy()
    if dup.any():
        first = ids[np.argmax(dup)]
        rows = np.flatnonzero(ids == first)
        where = " and ".join(f"{parts[src_idx[r]].sources[0]} ({locs[r]})" for r in rows[:2])
        raise DataFormatError(f"item id {first!r} appears in {where}; "
                              f"{int(pd.Series(ids[dup]).nunique())} id(s) are duplicated across "
                              "the prediction files")
    logits = (np.concatenate([p.logits for p in parts])
              if all(p.logits is not None for p in parts) else None)
    return Predictions(item_ids=ids, probs=np.concatenate([p.probs for p in parts]), logits=logits,
                       label_names=parts[0].label_names,
                       sources=tuple(p.sources[0] for p in parts), source_index=src_idx,
                       locations=locs)
