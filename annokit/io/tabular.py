"""Generic crowdsourcing files: long (one row per vote) and wide (one column per annotator).

CSV/TSV (separator sniffed, :mod:`annokit.io.delimited`), JSON Lines and Parquet are told apart
by extension. Column roles are given with
``columns={"item": ..., "annotator": ..., "label": ..., "gold": ...}`` or detected from common
spellings (``item,annotator,label``, ``task,worker,label``, ``question,worker,answer``, Snow et
al. 2008's ``orig_id``, ``!amt_worker_ids``, ``response``, ``gold``; :func:`name_key` compares
them); :mod:`annokit.io.layout` decides long or wide from the names and the first rows.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.columns import (
    MORE_SPELLINGS,
    ROLE_SPELLINGS,
    detect_columns,
    name_key,
    unused_columns_message,
)
from annokit.core.frames import gold_column_codes
from annokit.core.gold import (
    factorize_gold,
    gold_clash_error,
    gold_value_codes,
    item_gold,
    merge_gold,
    voteless_gold_message,
)
from annokit.core.ids import canonical_ints, has_repeats, ids_as_arrow
from annokit.core.labels import LabelSet
from annokit.core.votes import DuplicatePolicy, Votes
from annokit.errors import DataFormatError, InputError, InvalidValueError, SchemaError
from annokit.io.arrow import votes_from_tables
from annokit.io.fast_csv import read_csv_arrow
from annokit.io.lines import LineMap, RowLines
from annokit.io.source import Input, check_header
from annokit.io.tables import (
    cell_where,
    check_present,
    check_scalars,
    read_columns,
    read_table,
    rows_as_lines,
    table_kind,
)

__all__ = ["MORE_SPELLINGS", "ROLE_SPELLINGS", "detect_columns", "name_key", "read_columns", "read_gold",
           "read_long", "read_table", "read_wide"]

#: Options that name columns, for messages (CLI spelling).
COLUMN_OPTIONS = "--item-col, --annotator-col, --label-col, --gold-col, --no-header"
#: Column roles of a headerless long table, by its number of columns.
HEADERLESS_ROLES = {2: ("item", "label"), 3: ("item", "annotator", "label"),
                    4: ("item", "annotator", "label", "gold")}


def _no_layout(name: str, role: str, columns: Sequence[str]) -> SchemaError:
    return SchemaError(
        f"{name}: no {role} column; got columns {list(columns)}; name it with --{role}-col "
        f"(Python: columns={{'{role}': ...}}), or read a headerless item,annotator,label file with "
        f"--no-header. Column options: {COLUMN_OPTIONS}"
    )


def warn_unused_columns(names: Sequence[str], roles: Mapping[str, str | None],
                        given: Mapping[str, str | None] | None, name: str,
                        item_columns: Sequence[str] = ()) -> None:
    """Warn when a role is missing while columns are left unused
    (:func:`annokit.core.columns.unused_columns_message`)."""
    message = unused_columns_message([c for c in names if c not in item_columns], roles,
                                     given=given, source=name)
    if message is not None:
        import warnings

        from annokit.errors import DegenerateInputWarning

        warnings.warn(message, DegenerateInputWarning, stacklevel=3)


def _long_roles(df: pd.DataFrame, name: str, columns: Mapping[str, str | None] | None,
                no_header: bool) -> dict[str, str | None]:
    given = dict(columns or {})
    if no_header:
        names = HEADERLESS_ROLES.get(df.shape[1])
        if names is None:
            raise SchemaError(f"{name}: a headerless long file has 2 (item, label), 3 (item, "
                              f"annotator, label) or 4 (... gold) columns; got {df.shape[1]}")
        given = {**dict(zip(names, df.columns, strict=True)), **given}
        given.setdefault("annotator", None)
        given.setdefault("gold", None)
    roles = detect_columns(list(df.columns), given=given, source=name)
    for role in ("item", "label"):
        if roles[role] is None:
            raise _no_layout(name, role, list(df.columns))
    return roles


def read_long(
    path: str | os.PathLike,
    *,
    columns: Mapping[str, str | None] | None = None,
    labels: LabelSet | Sequence[Any] | None = None,
    gold: str | os.PathLike | None = None,
    item_columns: Sequence[str] = (),
    duplicates: DuplicatePolicy = "error",
    no_header: bool = False,
    missing: Sequence[str] = (),
    sep: str | None = None,
) -> Votes:
    """Read long-format votes (one row per vote) from CSV, TSV, JSON Lines or Parquet.

    Parameters
    ----------
    path : path-like
        The file, or ``-`` for standard input.
    columns : mapping, optional
        Role -> column name for ``item``, ``annotator``, ``label`` and ``gold``.
        Roles not given are detected (see ``ROLE_SPELLINGS``); two columns that could fill
        one role (``label`` and ``answer``) are refused. Map ``annotator`` to None for files
        without annotator ids.
    labels : LabelSet or sequence of names, optional
        Label order; default: the distinct labels of the votes in natural order. Gold
        never adds a label.
    gold : path-like, optional
        A separate gold file (item and gold columns detected like the vote columns, e.g.
        ``question,truth``); without it, the file's gold column. A blank cell means no gold;
        values not among the labels are coded -2, counted in one warning and left out of
        every accuracy (:mod:`annokit.core.gold`); rows of items without votes are warned about.
    item_columns : sequence of str
        Extra per-item columns (constant within an item) kept as item metadata.
    duplicates : {"error", "first", "last", "keep"}
    no_header : bool, default=False
        A CSV/TSV file without a header line, its columns item, label (2 columns),
        item, annotator, label (3) or item, annotator, label, gold (4).
    missing : sequence of str
        Cell texts that mean "no value" besides the empty cell (e.g. ``["NA"]``). Rows whose
        label is such a value are skipped with a warning counting them. By default ``NA``,
        ``nan``, ``None`` and ``null`` are labels as written.
    sep : str, optional
        The separator of a CSV/TSV file (``","``, ``";"``, ``"\\t"``, ``"|"``); default:
        sniffed from the first lines (:mod:`annokit.io.delimited`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "votes.csv"
    >>> _ = f.write_text("question,worker,answer\\n1,w1,0\\n1,w2,1\\n2,w1,1\\n")
    >>> read_long(f).counts().tolist()
    [[1, 1], [0, 1]]
    """
    source = Input(path, what="votes")
    if not item_columns and not missing and sep is None:
        fast = _read_long_fast(source, columns, labels, gold, duplicates, no_header)
        if fast is not None:
            return fast
    df = read_table(source, no_header=no_header, missing=missing, sep=sep)
    name = source.name
    roles = _long_roles(df, name, columns, no_header)
    if roles["item"] is None or roles["label"] is None:  # _long_roles refused such a file
        raise ValueError(f"read_long: {name} has no item or label column")
    check_scalars(df, source, [c for c in roles.values() if c is not None])
    if missing:
        df = _skip_missing_labels(df, roles["label"], missing, name)
    if len(df) == 0:
        raise SchemaError(f"{name} has no votes")
    required = [roles["item"], roles["label"]] + ([roles["annotator"]] if roles["annotator"] else [])
    check_present(df, source, required, ["item id", "label", "annotator id"][:len(required)])
    gold_table = _gold_table(gold, None, missing) if gold is not None else None
    votes = _long_votes(df, source, roles, labels, in_frame_gold=gold is None,
                        item_columns=item_columns, duplicates=duplicates)
    if gold_table is not None:
        votes = _attach(votes, gold_table)
    if not no_header:
        warn_unused_columns(list(df.columns), roles, columns, name, item_columns)
    chosen = ", ".join(f"{role}={col!r}" for role, col in roles.items() if col is not None)
    votes.read_info = f"{name}: long table ({df.attrs.get('annokit_read_as', 'csv')}); columns {chosen}"
    return votes


def _read_long_fast(source: Input, columns: Any, labels: Any, gold: Any,
                    duplicates: DuplicatePolicy, no_header: bool) -> Votes | None:
    """The votes of a Parquet or plain CSV/TSV file read by Arrow, or None when the file needs
    the general path (the fast readers decline what they cannot read exactly)."""
    if source.path is not None and table_kind(source) == "parquet":
        return _read_long_parquet(source.path, columns, labels, gold, duplicates)
    if ((source.path is not None or source.held) and table_kind(source) in ("csv", "tsv")
            and not no_header):
        return _read_long_csv(source, columns, labels, gold, duplicates)
    return None


def _skip_missing_labels(df: pd.DataFrame, label: str, missing: Sequence[str],
                         name: str) -> pd.DataFrame:
    """``df`` without the rows whose label is a missing value (warned about, counted); the
    rows' file lines kept."""
    skip = df[label].isna().to_numpy()
    if not skip.any():
        return df
    import warnings

    from annokit.errors import DegenerateInputWarning

    warnings.warn(f"{name}: {int(skip.sum())} row(s) whose label is a missing value "
                  f"({sorted(missing)} or empty) were skipped", DegenerateInputWarning,
                  stacklevel=3)
    lines = df.attrs.get("annokit_lines")
    attrs = dict(df.attrs)
    keep = np.flatnonzero(~skip)
    df = df.iloc[keep].reset_index(drop=True)
    df.attrs = attrs
    df.attrs["annokit_lines"] = (lines.take(keep) if lines is not None
                                 else RowLines(np.zeros(len(keep), dtype=np.int64)))
    return df


def _long_votes(df: pd.DataFrame, source: Input, roles: dict[str, str | None], labels: Any, *,
                in_frame_gold: bool, item_columns: Sequence[str],
                duplicates: DuplicatePolicy) -> Votes:
    """The votes of a long frame; a label outside ``labels``, or a bad gold or item field, is
    refused naming its file line."""
    label = str(roles["label"])
    label_values = df[label]
    # the label set comes from the votes (or the caller); gold is coded against it, never added
    labels = LabelSet.infer(label_values) if labels is None else LabelSet.coerce(labels)
    _encode_with_lines(labels, label_values, source, df, label)
    try:
        return Votes.from_long(
            df, item=roles["item"], label=roles["label"], annotator=roles["annotator"],
            labels=labels, gold=roles["gold"] if in_frame_gold else None,
            item_columns=item_columns, duplicates=duplicates, source=source.name,
        )
    except InputError as exc:  # "(row 3)" of a gold or item column: its file line
        raise rows_as_lines(exc, df) from None


def _arrow_id_type(t: Any) -> bool:
    """Types the Arrow path codes as written: text and integers (dictionary-encoded or not)."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)


def _read_long_parquet(paths: Path | Sequence[Path], columns: Mapping[str, str | None] | None,
                       labels: LabelSet | Sequence[Any] | None, gold: str | os.PathLike | None,
                       duplicates: DuplicatePolicy, *, name: str | None = None) -> Votes | None:
    """Arrow path for Parquet votes: no pandas round trip.

    ``paths``: one file, or the partitions of one table (the same columns, in order;
    :mod:`annokit.io.partitions` checks their headers), read one row group after another as
    the row groups of one file; ``name`` names the votes in messages (default: the file's).

    Returns None when the votes need the general path (id and label columns that are not text
    or integers, or whose type differs between partitions; a gold column beside a separate
    gold file or a policy that drops duplicates).
    """
    import contextlib
    from itertools import chain

    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = [paths] if isinstance(paths, Path) else [Path(p) for p in paths]
    name = name or paths[0].name
    schemas = []
    for path in paths:
        try:
            schemas.append(pq.read_schema(path))
        except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
            raise DataFormatError(f"{path.name}: cannot parse as parquet: {exc}") from None
    names = check_header(schemas[0].names, paths[0].name)
    if names != list(schemas[0].names):  # padded names: the general path reads them stripped
        return None
    roles = detect_columns(names, given=columns, source=name)
    if roles["item"] is None or roles["label"] is None:
        return None
    in_file_gold = roles["gold"]
    if in_file_gold is not None and (gold is not None or duplicates not in ("error", "keep")):
        return None  # a dropped duplicate would shift rows against the gold column
    wanted = [c for c in (roles["item"], roles["annotator"], roles["label"]) if c]
    typed = wanted + ([in_file_gold] if in_file_gold else [])
    if not all(_arrow_id_type(schemas[0].field(c).type) for c in typed):
        return None
    if any(schema.field(c).type != schemas[0].field(c).type for schema in schemas[1:]
           for c in typed):
        return None  # the general path says which partition differs
    gold_table = _gold_table(gold, None, ()) if gold is not None else None
    # Row group by row group: each is coded and released before the next is read, so the file
    # is never held whole (peak memory about half of pq.read_table's; on large files, faulting
    # in fresh pages is a good part of what a read costs).
    with contextlib.ExitStack() as stack:
        files = []
        for path in paths:
            try:
                files.append(stack.enter_context(pq.ParquetFile(path, read_dictionary=typed)))
            except (OSError, ValueError) as exc:
                raise DataFormatError(f"{path.name}: cannot parse as parquet: {exc}") from None
        n_rows = sum(f.metadata.num_rows for f in files)
        votes = votes_from_tables(
            chain.from_iterable(_row_groups(f, wanted, p) for f, p in zip(files, paths, strict=True)),
            n_rows, item=roles["item"], label=roles["label"], annotator=roles["annotator"],
            labels=labels, duplicates=duplicates, source=name,
        )
        if in_file_gold is not None:
            # one vote per row (no duplicate was dropped): the gold cells line up with the votes
            parts = [f.read(columns=[in_file_gold]).column(0) for f in files]
            column = pa.chunked_array([c for part in parts for c in part.chunks],
                                      type=parts[0].type).to_pandas()
            votes = votes.with_gold(gold_column_codes(
                column, votes.item_index, np.empty(votes.n_items), votes.labels,
                getattr(votes, "_item_ids", votes.item_ids), f"{name}, column {in_file_gold!r}"))
    out = _attach(votes, gold_table) if gold_table is not None else votes
    warn_unused_columns(names, roles, columns, name)
    chosen = ", ".join(f"{role}={col!r}" for role, col in roles.items() if col is not None)
    out.read_info = f"{name}: long table (parquet); columns {chosen}"
    return out


def _read_long_csv(source: Input, columns: Mapping[str, str | None] | None,
                   labels: LabelSet | Sequence[Any] | None, gold: str | os.PathLike | None,
                   duplicates: DuplicatePolicy) -> Votes | None:
    """Arrow path for CSV/TSV votes: the file parsed by Arrow's multi-threaded reader and coded
    like a Parquet file's row groups, no Python string per cell.

    Returns None when the general path must read the file: a table Arrow cannot parse as
    plain CSV, roles that are not plainly detected, or any problem with the values (the general
    path reports it with its line and column).
    """
    kind = table_kind(source)

    def roles_of(names: list[str]) -> dict[str, str | None] | None:
        try:
            return detect_columns(names, given=columns, source=source.name)
        except InputError:
            return None

    table = read_csv_arrow(source, kind)
    if table is None:
        return None
    roles = roles_of(table.column_names)
    if roles is None:
        return None
    if roles["item"] is None or roles["label"] is None:
        return None
    in_file_gold = roles["gold"]
    if in_file_gold is not None and duplicates not in ("error", "keep"):
        return None  # a dropped duplicate would shift rows against the gold column
    wanted = [c for c in (roles["item"], roles["annotator"], roles["label"]) if c]
    # integer ids are coded as integers (same ids, faster); the item column is converted in a
    # thread beside the annotator column (Arrow releases the GIL)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        item_ints = pool.submit(canonical_ints, table.column(roles["item"]))
        ann_ints = canonical_ints(table.column(roles["annotator"])) if roles["annotator"] else None
        for role, ints in (("item", item_ints.result()), ("annotator", ann_ints)):
            if ints is not None:
                table = table.set_column(table.column_names.index(roles[role]), roles[role], ints)
    try:
        votes = votes_from_tables([table.select(wanted)], table.num_rows, item=roles["item"],
                                  label=roles["label"], annotator=roles["annotator"],
                                  labels=labels, duplicates=duplicates, source=source.name)
    except InputError:
        return None
    if in_file_gold is not None:
        try:
            codes = gold_column_codes(
                table.column(in_file_gold).to_pandas(), votes.item_index,
                np.empty(votes.n_items), votes.labels, getattr(votes, "_item_ids", votes.item_ids),
                f"{source.name}, column {in_file_gold!r}")
        except InputError as exc:  # Arrow kept every line but the empty ones (no quotes here)
            lines = LineMap(source.path if source.path is not None else source.data,
                            sep="," if kind == "csv" else "\t", quoting=False, blank_rows="kept")
            raise rows_as_lines(exc, {"annokit_lines": lines}) from None
        votes = votes.with_gold(codes)
    if gold is not None:
        votes = _attach(votes, _gold_table(gold, None, ()))
    warn_unused_columns(table.column_names, roles, columns, source.name)
    chosen = ", ".join(f"{role}={col!r}" for role, col in roles.items() if col is not None)
    votes.read_info = f"{source.name}: long table ({kind}); columns {chosen}"
    return votes


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


def _encode_with_lines(labels: LabelSet, values: pd.Series, path: Path | Input, df: pd.DataFrame,
                       column: str) -> None:
    """Encode labels up front so an unknown label is reported with its file line."""
    try:
        labels.encode(values, where="")
    except InputError as exc:
        msg = str(exc)
        found = re.search(r" at row (\d+)", msg)  # "... at row 3; ..." or "... at row 0 (got '')"
        row = int(found.group(1)) if found else 0
        detail = msg.split(": ", 1)[1].split(" at row ")[0] if ": " in msg else msg
        raise DataFormatError(f"{cell_where(path, df, row, column)}: {detail}; expected one of "
                              f"{list(labels.names)}") from None


def read_wide(
    path: str | os.PathLike,
    *,
    item: str | None = None,
    annotator_columns: Sequence[str] | None = None,
    labels: LabelSet | Sequence[Any] | None = None,
    gold: str | None = None,
    item_columns: Sequence[str] = (),
    columns: Mapping[str, str | None] | None = None,
    missing: Sequence[str] = (),
    sep: str | None = None,
) -> Votes:
    """Read wide-format votes: one row per item, one column per annotator, blank = no vote.

    The item column is detected like in :func:`read_long` unless given (``item=`` or
    ``columns={"item": ...}``); every other column (except the gold column, detected or
    ``columns={"gold": ...}``, and ``item_columns``) is an annotator, except that a column
    named like an item, annotator or label column (``ROLE_SPELLINGS``) is refused: such a file
    is a long table. A cell holding one of the ``missing`` words is no vote, like a blank cell.
    """
    given = dict(columns or {})
    extra = sorted(set(given) - {"item", "gold"})
    if extra:
        raise InvalidValueError(f"a wide table names its item and gold columns only; got roles "
                                f"{extra} (--annotator-col and --label-col are for long tables)")
    if item is not None:
        given["item"] = item
    if gold is not None:
        given["gold"] = gold
    source = Input(path, what="votes")
    df = read_table(source, missing=missing, sep=sep)
    roles = detect_columns(list(df.columns), ("item", "gold"), given=given, source=source.name)
    if roles["item"] is None:
        raise _no_layout(source.name, "item", list(df.columns))
    item, gold = roles["item"], roles["gold"]
    if len(df) == 0:
        raise SchemaError(f"{source.name} has no votes")
    reserved = {item, gold, *item_columns}
    annotators = (list(annotator_columns) if annotator_columns is not None
                  else [c for c in df.columns if c not in reserved])
    if annotator_columns is None:
        unnamed = [j + 1 for j, c in enumerate(df.columns) if c in annotators and not c]
        if unnamed:
            raise SchemaError(f"{source.name}: column {unnamed[0]} has no name, so it cannot be an "
                              "annotator of a wide table; name it in the header, or remove it")
        for col in annotators:
            role = next((r for r in ("item", "annotator", "label")
                         if name_key(col) in {name_key(x) for x in ROLE_SPELLINGS[r]
                                              + MORE_SPELLINGS[r]}), None)
            if role is not None:
                raise SchemaError(
                    f"{source.name}: column {col!r} is named like the {role} column of a long "
                    f"table, not like an annotator of a wide table; read the file as a long table "
                    f"(--format long, naming columns with --item-col, --annotator-col, --label-col)")
    check_scalars(df, source, [c for c in (item, gold, *annotators)
                              if c is not None and c in df.columns])
    check_present(df, source, [item], ["item id"])
    repeated = df[item].astype(str).duplicated().to_numpy()
    if repeated.any():
        row = int(np.argmax(repeated))
        raise SchemaError(f"{cell_where(source, df, row, item)}: item {df[item].iloc[row]!r} is on "
                          "a second row; a wide table has one row per item (for one row per "
                          "vote, read it as a long table: --format long)")
    votes = Votes.from_wide(df, item=item, annotator_columns=annotator_columns, labels=labels,
                            gold=gold, item_columns=item_columns, source=source.name)
    votes.read_info = (f"{source.name}: wide table ({df.attrs.get('annokit_read_as', 'csv')}), "
                       f"{votes.n_annotators} annotator columns")
    return votes


def read_gold(path: str | os.PathLike, *, columns: Mapping[str, str] | None = None,
              missing: Sequence[str] = ()) -> pd.Series:
    """Read a gold file (item and gold columns) into a Series of label strings indexed by item id.

    A blank gold cell (or one of the ``missing`` words) means "no gold for this item": the row
    is left out of the Series.

    Raises
    ------
    SchemaError
        No item or gold column, or a missing item id.
    DataFormatError
        An item with more than one gold row.
    """
    import pyarrow as pa

    table = _gold_table(path, columns, missing)
    have = table.codes >= 0
    ids = table.ids.filter(pa.array(have, type=pa.bool_())).to_numpy(zero_copy_only=False)
    series = pd.Series(table.distinct[table.codes[have]],
                       index=pd.Index(ids.astype(object), dtype=object, name="item"), name="gold")
    series.attrs["source"] = table.name
    return series


class _GoldTable:
    """A gold file's item ids (pyarrow strings) and gold values (index into ``distinct``,
    -1 for a blank cell), one entry per row; ``ints``: the ids as int64 (numpy) when every id
    is an integer written canonically (:func:`~annokit.core.ids.canonical_ints`), else None;
    ``distinct_ids``: no id is on two rows (checked: a gold file's repeated items are refused)."""

    def __init__(self, ids: Any, codes: np.ndarray, distinct: np.ndarray, name: str,
                 ints: np.ndarray | None = None, *, distinct_ids: bool = False):
        self.ids, self.codes, self.distinct, self.name = ids, codes, distinct, name
        self.ints, self.distinct_ids = ints, distinct_ids


def _gold_table(path: str | os.PathLike, columns: Mapping[str, str] | None,
                missing: Sequence[str]) -> _GoldTable:
    """Read a gold file: ids as Arrow text and the gold cells factorised, nothing per row in
    Python (a CSV/TSV file is parsed by Arrow, see :mod:`annokit.io.fast_csv`)."""
    import pyarrow.compute as pc

    source = Input(path, what="gold")
    name = source.name
    table = (read_csv_arrow(source, table_kind(source))
             if not missing and table_kind(source) in ("csv", "tsv") else None)
    ints = None
    if table is not None:
        roles = _gold_roles(table.column_names, columns, name)
        ids = table.column(roles["item"])
        ints = canonical_ints(ids)  # integers: never blank, repeats found without hashing text
        if ints is None and pc.any(pc.equal(pc.utf8_trim_whitespace(ids), "")).as_py():
            table = None  # an empty item id: the general path names its line
    if table is not None:
        values = table.column(roles["gold"])
    else:
        df = read_table(source, missing=missing)
        roles = _gold_roles(list(df.columns), columns, name)
        check_scalars(df, source, [roles["item"], roles["gold"]])
        check_present(df, source, [roles["item"]], ["item id"])
        ids = ids_as_arrow(df[roles["item"]], what="item id", where=name)
        values = df[roles["gold"]]
    if ints is not None:
        ints = np.asarray(ints.to_numpy(zero_copy_only=False), dtype=np.int64)
    if has_repeats(ints) if ints is not None else len(pc.unique(ids)) != len(ids):
        dup = pd.Series(ids.to_numpy(zero_copy_only=False))
        raise DataFormatError(f"{name}: item {dup[dup.duplicated()].iloc[0]!r} has more than one "
                              "gold row")
    value_index, distinct = factorize_gold(values)
    return _GoldTable(ids, value_index, distinct, name, ints, distinct_ids=True)


def _gold_roles(names: list[str], columns: Mapping[str, str] | None, name: str) -> dict[str, Any]:
    roles = detect_columns(names, ("item", "gold"), given=dict(columns or {}), source=name)
    if roles["gold"] is None:
        roles["gold"] = detect_columns(names, ("label",), given={"item": roles["item"]},
                                       source=name).get("label")
    if roles["item"] is None or roles["gold"] is None:
        raise SchemaError(
            f"{name}: a gold file needs an item column and a gold column (e.g. question,truth); "
            f"got {names}"
        )
    return roles


def attach_gold(votes: Votes, gold: pd.Series) -> Votes:
    """Return ``votes`` with gold labels from a Series indexed by item id.

    Gold is coded against the votes' labels and never adds a label: gold values that are not
    among them are counted in one warning (with a hint when they differ from a label only by
    case or surrounding spaces) and coded -2 (:data:`annokit.core.gold.GOLD_UNKNOWN`), left
    out of every accuracy. Gold rows for items without votes are counted in
    ``votes.n_gold_without_votes`` and warned about, never silently dropped. Gold the votes
    already carried (a gold column) is kept where the file gives none; an item where the two
    differ is refused (:func:`annokit.core.gold.merge_gold`).
    """
    value_index, distinct = factorize_gold(gold)
    table = _GoldTable(ids_as_arrow(gold.index, what="item id", where="gold"), value_index,
                       distinct, gold.attrs.get("source", "gold"))
    return _attach(votes, table)


def _attach(votes: Votes, table: _GoldTable) -> Votes:
    import warnings

    from annokit.errors import DegenerateInputWarning

    has_gold = np.flatnonzero(table.codes >= 0)
    ids = table.ids if table.ints is None else table.ints  # integers: found as integers
    pos = votes.item_positions(ids.take(has_gold) if len(has_gold) < len(ids) else ids)
    rows = has_gold[pos >= 0]
    codes, unknown = item_gold(gold_value_codes(table.distinct, votes.labels), table.codes[rows],
                               table.distinct,
                               pos[pos >= 0], votes.n_items, votes.labels,
                               where=f"{table.name}, gold column",
                               distinct_items=table.distinct_ids)
    if unknown is not None:
        warnings.warn(unknown.message(table.name), DegenerateInputWarning, stacklevel=3)
    voteless = has_gold[pos < 0]
    if voteless.size:
        shown = table.ids.take(voteless[:3]).to_pylist()
        warnings.warn(voteless_gold_message(table.name, voteless.size, shown),
                      DegenerateInputWarning, stacklevel=3)
    if votes.gold is not None:
        codes, clashes = merge_gold(votes.gold, codes)
        if clashes.size:
            i = clashes[0]
            raise gold_clash_error(votes.labels, votes.item_ids[i], codes[i], votes.gold[i],
                                   clashes.size, file_name=table.name,
                                   votes_name=votes.source or "the votes")
    out = votes.with_gold(codes)
    out.n_gold_without_votes = int(voteless.size)
    return out
