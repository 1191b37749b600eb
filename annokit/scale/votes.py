"""Votes on Dask: files or frames in, integer-coded partitions out, an item's votes together.

:func:`read_votes_dask` reads a directory, a glob, a list of Parquet / CSV files, any path
fsspec reads (``s3://``, ``hf://``), or a pandas / Dask DataFrame, and codes it in one pass
over the data: each partition is coded locally (item ids to 64-bit keys, labels and
annotators factorised) and the small per-partition dictionaries are merged on the client
into the label set (the same names and order as :func:`annokit.io.read_votes` gives in
memory) and the annotator dictionary (first-seen order); the codes are then remapped in
place. When the partitions read are already item-disjoint (the common case: data written in
item order), they are kept as they are; otherwise the votes are shuffled once by item so that
every item's votes share a partition. Disjointness is decided exactly, from each partition's
distinct item keys (the same id gives the same key, so no shared key means no shared item; a
key shared by two ids only costs the shuffle, after which such ids are refused).

An item's code is its 64-bit key (:func:`annokit.core.resample.item_keys`, SipHash of the
id string): global without a dictionary, and the same key the bootstrap weights use.
Two ids with one key would be refused (about 3e-6 for 10M items).

Examples
--------
>>> from annokit.core.votes import Votes
>>> from annokit.scale.votes import from_votes, to_votes
>>> v = Votes.from_counts([[3, 1], [0, 2], [1, 1]], labels=["yes", "no"])
>>> dv = from_votes(v, npartitions=2, client=False)
>>> back = to_votes(dv)   # items in key order: compare by id
>>> dv.n_items, dv.n_votes, dict(zip(back.item_ids, back.counts().tolist())) == dict(
...     zip(v.item_ids, v.counts().tolist()))
(3, 8, True)
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from annokit.core.gold import (
    GOLD_NONE,
    GOLD_UNKNOWN,
    UnknownGold,
    factorize_gold,
    gold_clash_error,
    gold_value_codes,
    merge_gold,
    unknown_gold,
    voteless_gold_message,
    warn_unknown_gold_dropped,
)
from annokit.core.labels import LabelSet
from annokit.core.votes import Votes
from annokit.errors import DataFormatError, DegenerateInputWarning, InvalidValueError, SchemaError
from annokit.io.lines import LineMap
from annokit.io.partitions import partition_files
from annokit.io.ratings import scaled_labels
from annokit.io.tabular import detect_columns, warn_unused_columns
from annokit.scale.client import engine_client, require_dask, shuffle_method
from annokit.scale.progress import compute, persist
from annokit.scale.vote_parts import code_part, disjoint, finish_part, remap, where_value

__all__ = ["DaskVotes", "attach_gold_dask", "from_votes", "read_votes_dask", "to_votes"]

_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv"}


def _n_gold(items: pd.DataFrame) -> int:
    """A partition's items with a gold value."""
    return int((items["gold"].to_numpy() != GOLD_NONE).sum())


@dataclass
class DaskVotes:
    """Integer-coded votes in Dask partitions.

    Attributes
    ----------
    frame : dask.dataframe.DataFrame
        ``item`` (int64 key), ``annotator`` (int32 code, -1 when unknown), ``label`` (int16
        code); every item's votes in one partition, sorted by item; partitions may be empty.
    items : dask.dataframe.DataFrame
        ``item`` (int64 key), ``item_id`` (str), ``gold`` (int16 code, -1 for none), ``first``
        (int64: the item's first row as ``(input partition << 40) + row``, the first-seen
        order of the in-memory reader); partition ``i`` holds exactly the items of ``frame``
        partition ``i``.
    labels : LabelSet
    annotator_ids : ndarray of str or None
        Annotator code -> id.
    n_items, n_votes : int
    n_annotators : int or None
    source : str
    client : distributed.Client or None
        The client the partitions are persisted on (None: the local scheduler).
    has_gold : bool
        Whether gold was read (a gold column or a gold file), as ``Votes.gold`` is not None.
    duplicates_info : dict or None
        As ``Votes.duplicates_info`` of the in-memory reader: votes read with
        ``duplicates="keep"`` give ``{"policy": "keep", "repeated_pairs", "votes_removed": 0}``
        (``repeated_pairs``: the (item, annotator) pairs with several votes, None without
        annotator ids); None for the default, which refuses them.
    """

    frame: Any
    items: Any
    labels: LabelSet
    annotator_ids: np.ndarray | None
    n_items: int
    n_votes: int
    n_annotators: int | None
    source: str
    client: Any = None
    has_gold: bool = False
    duplicates_info: dict[str, Any] | None = None

    def compute(self, *collections: Any, desc: str = "Dask") -> tuple:
        """Compute Dask collections on the client these votes live on (a progress bar
        labelled ``desc``: :func:`annokit.scale.progress.compute`)."""
        return tuple(compute(self.client, collections, desc=desc))

    def n_gold_items(self) -> int:
        """Items with a gold value (one of the labels, or one that is not), as
        ``(Votes.gold != GOLD_NONE).sum()`` in memory: 0 without gold (no pass then), and 0
        for a gold column left blank on every item."""
        if not self.has_gold:
            return 0
        import dask

        return int(sum(self.compute(*[dask.delayed(_n_gold)(p) for p in self.items.to_delayed()],
                                    desc="gold labels")))

    @property
    def npartitions(self) -> int:
        return int(self.frame.npartitions)

    @property
    def has_annotators(self) -> bool:
        return self.annotator_ids is not None

    def require_annotators(self, what: str) -> np.ndarray:
        """The annotator ids; :class:`SchemaError` saying that ``what`` needs them when these
        votes have none."""
        if self.annotator_ids is None:
            raise SchemaError(f"{what} needs annotator ids; {self.source} has none")
        return self.annotator_ids

    def __repr__(self) -> str:
        return (f"DaskVotes({self.source}: {self.n_items} items, {self.n_votes} votes, "
                f"{self.n_annotators} annotators, labels {list(self.labels.names)}, "
                f"{self.npartitions} partitions)")


# -- reading -----------------------------------------------------------------------------


def _file_bytes(path: str) -> bytes:
    """The bytes of a file fsspec opens (a message's line is looked up in them)."""
    import fsspec

    with fsspec.open(path, "rb") as fh:
        return fh.read()


def _read_file(path: str, columns: list[str] | None) -> pd.DataFrame:
    """One file as a frame of strings (ids and labels exactly as written)."""
    import fsspec

    kind = _SUFFIXES[os.path.splitext(path)[1].lower()]
    name = os.path.basename(path)
    try:
        with fsspec.open(path, "rb") as fh:
            if kind == "parquet":
                import pyarrow.parquet as pq

                table = pq.read_table(fh, columns=columns)
                df = table.to_pandas(types_mapper=pd.ArrowDtype)  # no Python str per row
                df.attrs["annokit_line_offset"] = 0
            else:
                df = pd.read_csv(fh, sep="," if kind == "csv" else "\t", dtype=str,
                                 keep_default_na=False, na_filter=False, usecols=columns)
                df = df.replace("", np.nan)
                df.attrs["annokit_line_offset"] = 2
                # the file line of a row, found on the worker when a message needs one
                df.attrs["annokit_lines"] = LineMap(path, sep="," if kind == "csv" else "\t",
                                                    blank_rows="kept", opener=_file_bytes)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise DataFormatError(f"{name}: cannot parse as {kind}: "
                              f"{' '.join(str(exc).split())}") from None
    df.attrs["annokit_source"] = name
    return df


def _header(path: str) -> list[str]:
    import fsspec

    kind = _SUFFIXES[os.path.splitext(path)[1].lower()]
    with fsspec.open(path, "rb") as fh:
        if kind == "parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(fh).names)
        return list(pd.read_csv(fh, sep="," if kind == "csv" else "\t", nrows=0, dtype=str).columns)


def _warn_unknown_gold(gold_u: np.ndarray, labels: LabelSet, where: str) -> None:
    """One warning listing the gold values that are not among the labels (items are counted
    beside each accuracy: the values are seen here per partition, not per item)."""
    codes = gold_value_codes(gold_u, labels)
    unknown = gold_u[codes == GOLD_UNKNOWN]
    if unknown.size:
        warnings.warn(UnknownGold(tuple((str(v), None) for v in unknown), labels).message(where),
                      DegenerateInputWarning, stacklevel=3)


def _side(coded: tuple) -> tuple:
    """What the client needs of a coded partition (:func:`~annokit.scale.vote_parts.code_part`):
    label, annotator and gold uniques, sorted item keys, the number of votes."""
    return coded[2], coded[3], coded[4], coded[5], len(coded[0])


def _remap_finish(coded: tuple, label_map: np.ndarray, annotators: Any, gold_map: np.ndarray,
                  part: int, check: bool, name: str, count: bool
                  ) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """:func:`~annokit.scale.vote_parts.remap` then
    :func:`~annokit.scale.vote_parts.finish_part`, in one task (no shuffle between them)."""
    frame, items = remap(coded, label_map, annotators, gold_map)
    return finish_part(frame, items, part, check, name, annotators, count)


def _raise_first_error(cl: Any, nodes: list[Any]) -> None:
    """Wait for persisted tasks and raise the first failed one's error (in partition order)."""
    if cl is None:
        return  # persisted in this process: computed already
    from distributed import futures_of, wait

    futures = futures_of(nodes)
    with cl.as_current():
        wait(futures)
    for f in futures:
        if f.status == "error":
            f.result()


def _union_first_seen(arrays: Sequence[np.ndarray]) -> np.ndarray:
    if not arrays:
        return np.zeros(0, dtype=object)
    return pd.unique(np.concatenate([np.asarray(a, dtype=object) for a in arrays]))


def read_votes_dask(source: Any, *, columns: Mapping[str, str | None] | None = None,
                    labels: LabelSet | Sequence[Any] | None = None,
                    duplicates: str = "error", npartitions: int | None = None,
                    client: Any = None, scheduler: str | None = None,
                    scale: str | None = None) -> DaskVotes:
    """Read and code votes on Dask (see the module docstring).

    Parameters
    ----------
    source : path, glob, directory, list of paths, pandas or dask DataFrame
        Long tables (one row per vote): Parquet, CSV or TSV files.
    columns : mapping, optional
        Column roles ``item``, ``annotator``, ``label``, ``gold``, detected as in memory
        (:func:`annokit.io.detect_columns`) when not given.
    labels : LabelSet or sequence of names, optional
        Label order; default the distinct labels in natural order, as in memory.
    duplicates : {"error", "keep"}
        Two votes of one annotator on one item: refused, or kept. ("first"/"last" depend on
        row order across files and are refused on Dask.)
    npartitions : int, optional
        Partitions after the shuffle by item; default as many as were read (and no shuffle
        when those are item-disjoint).
    client : distributed.Client, optional
        Default :func:`annokit.scale.client.get_client`; ``False`` computes in this process
        (tests, doctests).
    scheduler : str, optional
        Address of a running Dask scheduler to connect to (when ``client`` is not given).
    scale : {"nominal", "ordinal", "interval", "ratio"}, optional
        The label set's level of measurement, as in :func:`annokit.io.read_votes`
        (:func:`annokit.io.ratings.scaled_labels`): the order of ``labels`` is kept,
        numeric labels read without ``labels`` are put in numeric order. None keeps
        the label set's own (nominal when inferred).

    Returns
    -------
    DaskVotes
        Persisted on the workers.

    Raises
    ------
    DataFormatError, SchemaError, InvalidValueError
        As in memory; locations name the file and line (or partition and row).
    """
    require_dask()
    import dask

    if duplicates not in ("error", "keep"):
        raise InvalidValueError(f"duplicates={duplicates!r} is not available on Dask (row order "
                                "across files is not defined); use 'error' or 'keep'")
    raw_parts, roles, name = _raw_parts(source, columns)
    cl = engine_client(client, scheduler=scheduler)
    coded = [dask.delayed(code_part)(p, i, roles) for i, p in enumerate(raw_parts)]
    coded = persist(cl, coded, desc="reading votes")
    side = compute(cl, [dask.delayed(_side)(c) for c in coded], desc="reading votes")
    labelset, label_maps, gold_maps = _label_set(side, raw_parts, roles, name, labels, scale, cl)
    annotators = None  # the merged annotator dictionary (Arrow), one graph key
    annotator_ids = None
    if roles["annotator"]:
        import pyarrow as pa

        merged = pa.chunked_array([s[1] for s in side], pa.string()).unique()  # first seen
        annotator_ids = merged.to_numpy(zero_copy_only=False).astype(object)
        annotators = dask.delayed(merged, pure=True)
    check = duplicates == "error" and annotator_ids is not None
    count = duplicates == "keep" and annotator_ids is not None  # repeated pairs are counted
    frame, items, sizes = _by_item(coded, side, label_maps, gold_maps, annotators,
                                   int(npartitions or max(len(coded), 1)), check=check,
                                   name=name, count=count, cl=cl)
    n_votes = int(sum(s[0] for s in sizes))
    n_items = int(sum(s[1] for s in sizes))
    if n_votes == 0:
        raise SchemaError(f"{name}: no votes")
    info = None if duplicates == "error" else {
        "policy": "keep", "repeated_pairs": int(sum(s[2] for s in sizes)) if count else None,
        "votes_removed": 0}
    return DaskVotes(frame=frame, items=items, labels=labelset, annotator_ids=annotator_ids,
                     n_items=n_items, n_votes=n_votes,
                     n_annotators=None if annotator_ids is None else len(annotator_ids),
                     source=name, client=cl, has_gold=roles["gold"] is not None,
                     duplicates_info=info)


def _raw_parts(source: Any, columns: Mapping[str, str | None] | None
               ) -> tuple[list[Any], dict[str, Any], str]:
    """The source's raw partitions (delayed), the column roles detected in its header, and its
    name for messages."""
    import dask
    import dask.dataframe as dd

    if isinstance(source, pd.DataFrame):
        source = dd.from_pandas(source, npartitions=max(1, min(len(source), 8)), sort=False)
    if isinstance(source, dd.DataFrame):
        names = [str(c) for c in source.columns]
        roles = detect_columns(names, given=columns, source="votes")
        raw_parts = source.to_delayed()
        name = "votes"
    else:
        if isinstance(source, (str, os.PathLike)) and os.path.isfile(source) and \
                os.path.splitext(source)[1].lower() not in _SUFFIXES:
            # ChaosNLI / LeWiDi JSON, counts tables, tool exports: the in-memory readers'
            raise DataFormatError(f"{os.path.basename(source)}: the Dask engine reads long "
                                  "tables in .parquet, .csv or .tsv files; read this file with "
                                  "--engine memory (Python: annokit.io.read_votes)")
        files = partition_files(source)
        names = _header(files[0])
        roles = detect_columns(names, given=columns, source=os.path.basename(files[0]))
        wanted = [c for c in (roles["item"], roles["annotator"], roles["label"], roles["gold"])
                  if c]
        raw_parts = [dask.delayed(_read_file)(f, wanted) for f in files]
        name = str(source) if isinstance(source, (str, os.PathLike)) else f"{len(files)} files"
    if roles["item"] is None or roles["label"] is None:
        raise SchemaError(f"{name}: a long table needs item and label columns; got {names} "
                          "(name them with --item-col and --label-col; Python: columns={'item': "
                          "..., 'label': ...})")
    warn_unused_columns(names, roles, columns, name)
    return list(raw_parts), roles, name


def _label_set(side: list[tuple], raw_parts: list[Any], roles: dict[str, Any], name: str,
               labels: LabelSet | Sequence[Any] | None, scale: str | None, cl: Any
               ) -> tuple[LabelSet, list[np.ndarray], list[np.ndarray]]:
    """The label set (the votes' labels, or the caller's) and each partition's label and gold
    codes in it; gold values that are not labels are warned about, never added."""
    lab_u = _union_first_seen([s[0] for s in side])
    gold_u = _union_first_seen([s[2] for s in side])
    labelset = LabelSet.coerce(labels, lab_u if labels is None else ())
    if len(labelset) == 0:
        raise SchemaError(f"{name}: no votes")
    if scale is not None:
        labelset = scaled_labels(labelset, scale, declared=labels is not None)
    label_maps = [_label_codes(labelset, s[0], raw, i, roles["label"], name, cl)
                  for i, (s, raw) in enumerate(zip(side, raw_parts, strict=True))]
    gold_maps = [gold_value_codes(s[2], labelset) for s in side]
    _warn_unknown_gold(gold_u, labelset, f"{name}, column {roles['gold']!r}")
    return labelset, label_maps, gold_maps


def _by_item(coded: list[Any], side: list[tuple], label_maps: list[np.ndarray],
             gold_maps: list[np.ndarray], annotators: Any, n_out: int, *, check: bool,
             name: str, count: bool, cl: Any) -> tuple[Any, Any, list[tuple]]:
    """The coded partitions with the merged dictionaries, each item's votes in one partition
    (shuffled by item unless already item-disjoint), persisted: frame, items, and each
    partition's (votes, items, repeated pairs)."""
    import dask
    import dask.dataframe as dd

    meta_f = pd.DataFrame({"item": np.zeros(0, np.int64), "annotator": np.zeros(0, np.int32),
                           "label": np.zeros(0, np.int16)})
    meta_i = pd.DataFrame({"item": np.zeros(0, np.int64), "item_id": np.zeros(0, object),
                           "gold": np.zeros(0, np.int16), "first": np.zeros(0, np.int64)})
    getter = dask.delayed(lambda t, i: t[i])
    if n_out == len(coded) and disjoint([s[3] for s in side]):
        # every item's votes already share a partition: no shuffle; one task per partition
        # codes it with the merged dictionaries and puts it in item order
        finished = [dask.delayed(_remap_finish)(c, lm, annotators, gm, p, check, name, count)
                    for p, (c, lm, gm) in enumerate(zip(coded, label_maps, gold_maps,
                                                        strict=True))]
        sizes = [(s[4], len(s[3]), 0) for s in side]
    else:
        remapped = [dask.delayed(remap)(c, lm, annotators, gm)
                    for c, lm, gm in zip(coded, label_maps, gold_maps, strict=True)]
        frame = dd.from_delayed([getter(r, 0) for r in remapped], meta=meta_f, verify_meta=False)
        items = dd.from_delayed([getter(r, 1) for r in remapped], meta=meta_i, verify_meta=False)
        with dask.config.set({"dataframe.shuffle.method": shuffle_method(cl)}):
            frame = frame.shuffle("item", npartitions=n_out)
            items = items.shuffle("item", npartitions=n_out)
        finished = [dask.delayed(finish_part)(f, i, p, check, name, annotators, count)
                    for p, (f, i) in enumerate(zip(frame.to_delayed(), items.to_delayed(),
                                                   strict=True))]
        sizes = None
    finished = persist(cl, finished, desc="grouping votes by item")
    frame = dd.from_delayed([getter(f, 0) for f in finished], meta=meta_f, verify_meta=False)
    items = dd.from_delayed([getter(f, 1) for f in finished], meta=meta_i, verify_meta=False)
    if sizes is None or count:  # after a shuffle (items merged across partitions), or pairs
        sizes = compute(cl, [dask.delayed(lambda t: (len(t[0]), len(t[1]), t[2]))(f)
                             for f in finished], desc="grouping votes by item")
    else:
        _raise_first_error(cl, finished)  # refused votes are refused here, not later
    if cl is not None:
        frame, items = cl.persist([frame, items])
    return frame, items, sizes


def _label_codes(labelset: LabelSet, uniques: np.ndarray, raw: Any, part: int, column: str,
                 name: str, cl: Any) -> np.ndarray:
    """Codes of one partition's distinct labels; an unknown one is named where it first
    occurs in its file (line, file, column), as the in-memory reader names it."""
    if not len(uniques):
        return np.zeros(0, np.int64)
    try:
        return labelset.encode(uniques, where=f"{name}, label")
    except InvalidValueError as exc:
        message = str(exc)
        bad = next(u for u in uniques if not _is_label(labelset, u))
        import dask

        where = compute(cl, [dask.delayed(where_value)(raw, part, column, bad)],
                        desc="reading votes")[0]
        raise DataFormatError(f"{where}: unknown label {bad!r}"
                                f"{message[message.index('; expected'):]}") from None


def _is_label(labelset: LabelSet, value: Any) -> bool:
    try:
        labelset.index_of(value)
    except InvalidValueError:
        return False
    return True


# -- a separate gold file ----------------------------------------------------------------


def _gold_part(items: pd.DataFrame, ids: pd.Index, codes: np.ndarray
               ) -> tuple[pd.DataFrame, np.ndarray, tuple]:
    """One partition's items with the gold file's codes over the gold column's (GOLD_NONE
    where neither has gold; :func:`~annokit.core.gold.merge_gold`), the gold rows it matched,
    and its items whose two gold codes differ (count, then the first-seen one's ``first`` key,
    item id and both codes)."""
    pos = ids.get_indexer(pd.Index(items["item_id"].to_numpy(dtype=object))) if len(items) else \
        np.zeros(0, np.int64)
    found = pos >= 0
    gold = np.full(len(items), GOLD_NONE, dtype=np.int64)
    gold[found] = codes[pos[found]]
    column = items["gold"].to_numpy()
    gold, clashes = merge_gold(column, gold)
    if not clashes.size:
        return items.assign(gold=gold.astype(np.int16)), pos[found], (0,)
    c = clashes[np.argmin(items["first"].to_numpy()[clashes])]
    clash = (clashes.size, items["first"].iloc[c], items["item_id"].iloc[c], gold[c], column[c])
    return items.assign(gold=gold.astype(np.int16)), pos[found], clash


def attach_gold_dask(votes: DaskVotes, gold: pd.Series) -> DaskVotes:
    """``votes`` with the gold labels of a separate gold file, joined by item id on the workers.

    ``gold`` is :func:`annokit.io.read_gold`'s Series (label strings indexed by item id):
    read once on the client, it is far smaller than the votes. As
    :func:`annokit.io.attach_gold` in memory, it fills the gold the votes' column left blank
    and refuses an item where the two differ (:func:`~annokit.core.gold.merge_gold`); gold
    values that are not labels are coded unknown (left out of accuracy) and counted in one
    warning; gold rows naming items without votes are counted in another.
    """
    import dask
    import dask.dataframe as dd

    source = str(gold.attrs.get("source", "gold"))
    value_index, distinct = factorize_gold(gold)
    value_codes = gold_value_codes(distinct, votes.labels)
    codes = np.where(value_index >= 0, value_codes[np.maximum(value_index, 0)], GOLD_NONE)
    ids = dask.delayed(pd.Index(np.asarray(gold.index, dtype=object)), pure=True)
    codes_d = dask.delayed(codes, pure=True)
    done = [dask.delayed(_gold_part, nout=3)(i, ids, codes_d) for i in votes.items.to_delayed()]
    done = persist(votes.client, done, desc="joining gold")
    items = dd.from_delayed([d[0] for d in done], meta=votes.items._meta, verify_meta=False)
    if votes.client is not None:
        items = votes.client.persist(items)
    matched = np.zeros(len(gold), dtype=bool)
    found = compute(votes.client, [(d[1], d[2]) for d in done], desc="joining gold")
    for rows, _ in found:
        matched[rows] = True
    clashes = [c for _, c in found if c[0]]
    if clashes:
        first = min(clashes, key=lambda c: c[1])  # the first-seen item, as in memory
        raise gold_clash_error(votes.labels, first[2], first[3], first[4],
                               sum(c[0] for c in clashes),
                               file_name=source, votes_name=votes.source)
    rows = np.flatnonzero(matched & (value_index >= 0))
    unknown = unknown_gold(value_index[rows][codes[rows] == GOLD_UNKNOWN], distinct, votes.labels)
    if unknown is not None:
        warnings.warn(unknown.message(source), DegenerateInputWarning, stacklevel=2)
    voteless = np.flatnonzero(~matched & (value_index >= 0))
    if voteless.size:
        warnings.warn(voteless_gold_message(source, voteless.size,
                                            np.asarray(gold.index, dtype=object)[voteless[:3]]),
                      DegenerateInputWarning, stacklevel=2)
    return replace(votes, items=items, has_gold=True)


# -- round trips (tests and small data) --------------------------------------------------


def from_votes(votes: Votes, *, npartitions: int, client: Any = None) -> DaskVotes:
    """Scatter in-memory votes into ``npartitions`` partitions (coded as on read)."""
    long = votes.to_long()
    if votes.gold is not None:
        names = np.asarray(votes.labels.names, dtype=object)
        g = votes.gold[votes.item_index]
        gold = names[np.maximum(g, 0)]
        gold[g < 0] = None
        long["gold"] = gold
        warn_unknown_gold_dropped(votes.gold, votes.source)
    import dask.dataframe as dd

    ddf = dd.from_pandas(long, npartitions=max(1, npartitions), sort=False)
    roles = {"item": "item", "label": "label",
             "annotator": "annotator" if votes.annotator_index is not None else None,
             "gold": "gold" if votes.gold is not None else None}
    return read_votes_dask(ddf, columns=roles, labels=votes.labels, duplicates="keep",
                           npartitions=npartitions, client=client)


def to_votes(dv: DaskVotes) -> Votes:
    """Collect Dask votes into memory (small data only), items in key order; annotators
    without a vote (removed by a filter) are not kept."""
    frame, items = dv.compute(dv.frame, dv.items)
    items = items.sort_values("item").reset_index(drop=True)
    code = pd.Index(items["item"].to_numpy()).get_indexer(frame["item"].to_numpy())
    gold = items["gold"].to_numpy().astype(np.int64)
    return Votes(code, frame["label"].to_numpy().astype(np.int64),
                 item_ids=items["item_id"].to_numpy(dtype=object), labels=dv.labels,
                 annotator_index=None if dv.annotator_ids is None else
                 frame["annotator"].to_numpy().astype(np.int64),
                 annotator_ids=dv.annotator_ids,
                 gold=gold if (gold != GOLD_NONE).any() else None,
                 duplicates="keep", source=dv.source).compact_annotators()
