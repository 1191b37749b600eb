"""Generic crowdsourcing files: long (one row per vote) and wide (one column per annotator).

CSV, TSV, JSON Lines and Parquet are read by extension. Column roles are
given with ``columns={"item": ..., "annotator": ..., "label": ..., "gold": ...}``
or detected from common spellings (``item,annotator,label``,
``task,worker,label``, ``question,worker,answer``, and Snow et al. 2008's
``orig_id``, ``!amt_worker_ids``, ``response``, ``gold``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.labels import LabelSet, as_str_values
from annokit.core.votes import DuplicatePolicy, Votes
from annokit.errors import DataFormatError, InputError, InvalidValueError, SchemaError
from annokit.io.arrow import votes_from_tables

__all__ = ["ROLE_SPELLINGS", "detect_columns", "read_columns", "read_gold", "read_long", "read_table",
           "read_wide"]

#: Column spellings tried, in order, for each role when no mapping is given.
ROLE_SPELLINGS: dict[str, tuple[str, ...]] = {
    "item": ("item", "item_id", "task", "task_id", "question", "question_id", "orig_id", "uid", "id"),
    "annotator": ("annotator", "annotator_id", "worker", "worker_id", "!amt_worker_ids", "rater",
                  "user", "performer"),
    "label": ("label", "answer", "response", "annotation", "vote"),
    "gold": ("gold", "gold_label", "truth", "true_label"),
}

_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv", ".jsonl": "jsonl",
             ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


def _kind(path: Path) -> str:
    kind = _SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise DataFormatError(
            f"{path.name}: unknown file type {path.suffix!r}; expected one of {sorted(_SUFFIXES)}"
        )
    return kind


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV / TSV / JSON Lines / Parquet file into a DataFrame of strings.

    Ids and labels are read as strings (no ``"007" -> 7`` surprises); Parquet
    keeps its own types. The frame's ``attrs["annokit_line_offset"]`` gives the
    file line of data row 0 (2 for files with a header line, 1 for JSON Lines).
    """
    path = Path(path)
    kind = _kind(path)
    try:
        if kind in ("csv", "tsv"):
            df = pd.read_csv(path, sep="," if kind == "csv" else "\t", dtype=str,
                             keep_default_na=False, na_values=[""], quoting=3 if kind == "tsv" else 0)
            offset = 2
        elif kind == "jsonl":
            df = pd.read_json(path, lines=True, dtype=False)
            offset = 1
        else:
            import pyarrow.parquet as pq

            df = pq.read_table(path).to_pandas()
            offset = 0
    except FileNotFoundError:
        raise DataFormatError(f"{path}: no such file") from None
    except (ValueError, pd.errors.ParserError, OSError) as exc:
        msg = " ".join(str(exc).split())
        raise DataFormatError(f"{path.name}: cannot parse as {kind}: {msg}") from None
    df.columns = [str(c).strip() for c in df.columns]
    df.attrs["annokit_line_offset"] = offset
    return df


def read_columns(path: str | os.PathLike) -> list[str]:
    """Column names of a table file, reading only its header (or schema, or first JSON line)."""
    path = Path(path)
    kind = _kind(path)
    try:
        if kind in ("csv", "tsv"):
            frame = pd.read_csv(path, sep="," if kind == "csv" else "\t", nrows=0, dtype=str,
                                quoting=3 if kind == "tsv" else 0)
            return [str(c).strip() for c in frame.columns]
        if kind == "jsonl":
            with open(path, encoding="utf-8") as fh:
                first = next((line for line in fh if line.strip()), "{}")
            row = json.loads(first)
            return [str(c) for c in row] if isinstance(row, dict) else []
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    except FileNotFoundError:
        raise DataFormatError(f"{path}: no such file") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:  # ArrowInvalid, JSONDecodeError
        msg = " ".join(str(exc).split())
        raise DataFormatError(f"{path.name}: cannot parse as {kind}: {msg}") from None


def detect_columns(columns: Sequence[str], roles: Sequence[str] = ("item", "annotator", "label", "gold"),
                   *, given: Mapping[str, str | None] | None = None) -> dict[str, str | None]:
    """Map roles to column names: ``given`` first, then the first matching spelling (case-insensitive)."""
    given = dict(given or {})
    unknown = (set(given) | set(roles)) - set(ROLE_SPELLINGS)
    if unknown:
        raise InvalidValueError(f"unknown column role(s) {sorted(unknown)}; roles are {list(ROLE_SPELLINGS)}")
    lower = {c.lower(): c for c in columns}
    out: dict[str, str | None] = {}
    taken: set[str] = {v for v in given.values() if v}
    for role in roles:
        if role in given:
            out[role] = given[role]
            continue
        out[role] = None
        for spelling in ROLE_SPELLINGS[role]:
            col = lower.get(spelling)
            if col is not None and col not in taken:
                out[role] = col
                taken.add(col)
                break
    return out


def _where(path: Path, df: pd.DataFrame, row: int, column: str) -> str:
    offset = df.attrs.get("annokit_line_offset", 0)
    place = f"line {row + offset}" if offset else f"row {row}"
    return f"{place} of {path.name}, column {column!r}"


def _check_present(df: pd.DataFrame, path: Path, columns: Sequence[str], what: Sequence[str]) -> None:
    for col, role in zip(columns, what):
        values = df[col]
        blank = values.isna().to_numpy()
        if values.dtype == object:
            blank |= values.astype(str).str.strip().eq("").to_numpy()
        if blank.any():
            row = int(np.argmax(blank))
            raise DataFormatError(f"{_where(path, df, row, col)}: empty {role}")


def read_long(
    path: str | os.PathLike,
    *,
    columns: Mapping[str, str | None] | None = None,
    labels: LabelSet | Sequence[Any] | None = None,
    gold: str | os.PathLike | None = None,
    item_columns: Sequence[str] = (),
    duplicates: DuplicatePolicy = "error",
) -> Votes:
    """Read long-format votes (one row per vote) from CSV, TSV, JSON Lines or Parquet.

    Parameters
    ----------
    path : path-like
    columns : mapping, optional
        Role -> column name for ``item``, ``annotator``, ``label`` and ``gold``.
        Roles not given are detected (see ``ROLE_SPELLINGS``); map
        ``annotator`` to None for files without annotator ids.
    labels : LabelSet or sequence of names, optional
        Label order; default: the distinct labels in natural order (gold labels
        included).
    gold : path-like, optional
        A separate gold file (item and gold columns, detected like the vote
        columns, e.g. ``question,truth``). A ``gold`` column in the vote file is
        used when present and no gold file is given.
    item_columns : sequence of str
        Extra per-item columns (constant within an item) kept as item metadata.
    duplicates : {"error", "first", "last", "keep"}

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "votes.csv"
    >>> _ = f.write_text("question,worker,answer\\n1,w1,0\\n1,w2,1\\n2,w1,1\\n")
    >>> read_long(f).counts().tolist()
    [[1, 1], [0, 1]]
    """
    path = Path(path)
    if _kind(path) == "parquet" and not item_columns:
        fast = _read_long_parquet(path, columns, labels, gold, duplicates)
        if fast is not None:
            return fast
    df = read_table(path)
    roles = detect_columns(list(df.columns), given=columns)
    for role in ("item", "label"):
        if roles[role] is None:
            raise SchemaError(
                f"{path.name}: no {role} column; got {list(df.columns)}; name it with "
                f"columns={{'{role}': ...}} (CLI: --{role}-column)"
            )
    missing = [c for c in roles.values() if c is not None and c not in df.columns]
    if missing:
        raise SchemaError(f"{path.name} is missing column(s) {missing}; got {list(df.columns)}")
    required = [roles["item"], roles["label"]] + ([roles["annotator"]] if roles["annotator"] else [])
    _check_present(df, path, required, ["item id", "label", "annotator id"][:len(required)])
    label_values = df[roles["label"]]
    gold_series = read_gold(gold) if gold is not None else None
    if labels is None:
        pool = [label_values]
        if roles["gold"] is not None and gold is None:
            pool.append(df[roles["gold"]].dropna())
        if gold_series is not None:
            pool.append(pd.Series(gold_series.to_numpy(dtype=object)))
        labels = LabelSet.infer(pd.concat(pool, ignore_index=True))
    labels = LabelSet.coerce(labels)
    _encode_with_lines(labels, label_values, path, df, roles["label"])
    votes = Votes.from_long(
        df, item=roles["item"], label=roles["label"], annotator=roles["annotator"], labels=labels,
        gold=roles["gold"] if gold is None else None, item_columns=item_columns,
        duplicates=duplicates, source=path.name,
    )
    if gold_series is not None:
        votes = attach_gold(votes, gold_series)
    return votes


def _read_long_parquet(path: Path, columns: Mapping[str, str | None] | None,
                       labels: LabelSet | Sequence[Any] | None, gold: str | os.PathLike | None,
                       duplicates: DuplicatePolicy) -> Votes | None:
    """Arrow path for Parquet votes without a gold column: no pandas round trip.

    Returns None when the file needs the general path (a gold column in the file).
    """
    import pyarrow.parquet as pq

    try:
        names = list(pq.read_schema(path).names)
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise DataFormatError(f"{path.name}: cannot parse as parquet: {exc}") from None
    roles = detect_columns(names, given=columns)
    if roles["gold"] is not None or roles["item"] is None or roles["label"] is None:
        return None
    wanted = [c for c in (roles["item"], roles["annotator"], roles["label"]) if c]
    missing = [c for c in wanted if c not in names]
    if missing:
        raise SchemaError(f"{path.name} is missing column(s) {missing}; got {names}")
    gold_series = read_gold(gold) if gold is not None else None
    # Row group by row group: each is coded and released before the next is read, so the file
    # is never held whole (peak memory about half of pq.read_table's; on large files, faulting
    # in fresh pages is a good part of what a read costs).
    try:
        parquet = pq.ParquetFile(path, read_dictionary=wanted)
    except (OSError, ValueError) as exc:
        raise DataFormatError(f"{path.name}: cannot parse as parquet: {exc}") from None
    with parquet:
        votes = votes_from_tables(
            _row_groups(parquet, wanted, path), parquet.metadata.num_rows, item=roles["item"],
            label=roles["label"], annotator=roles["annotator"], labels=labels,
            duplicates=duplicates, source=path.name,
            extra_labels=() if gold_series is None else list(gold_series.to_numpy(dtype=object)),
        )
    return attach_gold(votes, gold_series) if gold_series is not None else votes


def _row_groups(parquet: Any, columns: list[str], path: Path, *, readers: int = 2) -> Iterator[Any]:
    """The row groups of ``parquet`` (a ``pyarrow.parquet.ParquetFile`` opened with
    ``read_dictionary=columns``) as tables, in order.

    Row groups are read ahead by ``readers`` background threads, each with its own handle on the
    file (Arrow releases the GIL while it decodes), while the caller codes the current one; at
    most ``readers + 1`` row groups are held at once.
    """
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa
    import pyarrow.parquet as pq

    n = parquet.num_row_groups
    if n == 0:
        return
    handles = [parquet] + [pq.ParquetFile(path, read_dictionary=columns)
                           for _ in range(min(readers, n) - 1)]

    def read(i: int) -> Any:
        try:
            return handles[i % len(handles)].read_row_group(i, columns=columns)
        except (OSError, pa.ArrowException) as exc:
            raise DataFormatError(f"{path.name}: cannot read row group {i}: {exc}") from None

    try:
        with ThreadPoolExecutor(max_workers=len(handles)) as pool:
            pending = [pool.submit(read, i) for i in range(len(handles))]
            for i in range(n):
                table = pending.pop(0).result()
                if i + len(handles) < n:
                    pending.append(pool.submit(read, i + len(handles)))
                yield table
                del table
    finally:
        for handle in handles[1:]:
            handle.close()


def _encode_with_lines(labels: LabelSet, values: pd.Series, path: Path, df: pd.DataFrame,
                       column: str) -> None:
    """Encode labels up front so an unknown label is reported with its file line."""
    try:
        labels.encode(values, where="")
    except InputError as exc:
        msg = str(exc)
        row = int(msg.split(" at row ")[1].split(";")[0]) if " at row " in msg else 0
        detail = msg.split(": ", 1)[1].split(" at row ")[0] if ": " in msg else msg
        raise DataFormatError(f"{_where(path, df, row, column)}: {detail}; expected one of "
                              f"{list(labels.names)}") from None


def read_wide(
    path: str | os.PathLike,
    *,
    item: str | None = None,
    annotator_columns: Sequence[str] | None = None,
    labels: LabelSet | Sequence[Any] | None = None,
    gold: str | None = None,
    item_columns: Sequence[str] = (),
) -> Votes:
    """Read wide-format votes: one row per item, one column per annotator, blank = no vote.

    The item column is detected like in :func:`read_long` unless given; every
    other column (except ``gold`` and ``item_columns``) is an annotator.
    """
    path = Path(path)
    df = read_table(path)
    if item is None:
        item = detect_columns(list(df.columns), ("item",))["item"]
        if item is None:
            raise SchemaError(f"{path.name}: no item column; got {list(df.columns)}")
    if gold is None and detect_columns(list(df.columns), ("gold",))["gold"] is not None:
        gold = detect_columns(list(df.columns), ("gold",))["gold"]
    _check_present(df, path, [item], ["item id"])
    return Votes.from_wide(df, item=item, annotator_columns=annotator_columns, labels=labels,
                           gold=gold, item_columns=item_columns, source=path.name)


def read_gold(path: str | os.PathLike, *, columns: Mapping[str, str] | None = None) -> pd.Series:
    """Read a gold file (item and gold columns) into a Series of label strings indexed by item id."""
    path = Path(path)
    df = read_table(path)
    given = dict(columns or {})
    roles = detect_columns(list(df.columns), ("item", "gold"), given=given)
    if roles["gold"] is None:
        roles["gold"] = detect_columns(list(df.columns), ("label",), given={"item": roles["item"]}) \
            .get("label")
    if roles["item"] is None or roles["gold"] is None:
        raise SchemaError(
            f"{path.name}: a gold file needs an item column and a gold column (e.g. question,truth); "
            f"got {list(df.columns)}"
        )
    _check_present(df, path, [roles["item"], roles["gold"]], ["item id", "gold label"])
    ids = as_str_values(df[roles["item"]], what="item id", where=path.name)
    values = as_str_values(df[roles["gold"]], what="gold label", where=path.name)
    series = pd.Series(values, index=pd.Index(ids, name="item"), name="gold")
    if series.index.has_duplicates:
        dup = series.index[series.index.duplicated()][0]
        raise DataFormatError(f"{path.name}: item {dup!r} has more than one gold row")
    series.attrs["source"] = path.name
    return series


def attach_gold(votes: Votes, gold: pd.Series) -> Votes:
    """Return ``votes`` with gold labels from a Series indexed by item id.

    Gold rows for items without votes are counted in ``votes.item_metadata.attrs``
    (``n_gold_without_votes``) and warned about, never silently dropped.
    """
    import warnings

    from annokit.errors import DegenerateInputWarning

    source = gold.attrs.get("source", "gold")
    pos = votes.item_positions(gold.index)
    codes = np.full(votes.n_items, -1, dtype=np.int64)
    have = pos >= 0
    if have.any():
        codes[pos[have]] = votes.labels.encode(gold.to_numpy(dtype=object)[have],
                                               where=f"{source}, gold column")
    n_extra = int((~have).sum())
    if n_extra:
        warnings.warn(f"{source}: {n_extra} gold row(s) name items without votes and were not "
                      "used", DegenerateInputWarning, stacklevel=2)
    out = Votes(votes.item_index, votes.label_index, item_ids=votes.item_ids, labels=votes.labels,
                annotator_index=votes.annotator_index, annotator_ids=votes.annotator_ids,
                item_metadata=votes.item_metadata, gold=codes, duplicates="keep", source=votes.source)
    out.n_gold_without_votes = n_extra
    return out
