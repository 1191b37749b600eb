"""The vote model: items x annotators x labels as integer-coded arrays.

A :class:`Votes` object holds one row per vote as three aligned integer arrays
(``item_index``, ``annotator_index`` — optional, since some datasets such as
ChaosNLI publish counts without annotator ids — and ``label_index``) plus the
lookup tables that give them meaning: ``item_ids``, ``annotator_ids`` and an
ordered :class:`LabelSet` with aliases. Per-item metadata (texts, original gold
labels) and gold labels travel with it.

Everything downstream (soft labels, subsampling, annotator quality, aligned
records) consumes this object or the ``counts()`` matrix derived from it.
Vote rows keep the order in which they were read, so "vote order" (used by
ChaosNLI's consecutive-wrong-answers rule) is the row order.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any, Literal, overload

import numpy as np
import pandas as pd

from annokit.core.checks import check_counts, check_option, first_offenders
from annokit.core.frames import frames_equal, long_columns, long_parts, wide_parts
from annokit.core.gold import check_gold_codes
from annokit.core.ids import has_repeated_pairs, id_positions, pair_keys
from annokit.core.labels import (
    CHAOSNLI_NLI_LABELS,
    LabelSet,
    as_str_values,
)
from annokit.core.read_info import ReadInfo, reader_details
from annokit.core.vote_views import VoteViews
from annokit.errors import InvalidValueError, Option, SchemaError

__all__ = ["CHAOSNLI_NLI_LABELS", "LabelSet", "ReadInfo", "Votes"]

DuplicatePolicy = Literal["error", "first", "last", "keep"]
#: The options that accept repeated (item, annotator) votes, named in :data:`DUPLICATES_HINT`.
DUPLICATES_OPTIONS = (Option("duplicates", ("first", "last")), Option("duplicates", "keep"),
                      Option("duplicates", ("first", "last", "keep"), aside=True))
#: How to accept repeated (item, annotator) votes, for messages: a template naming
#: :data:`DUPLICATES_OPTIONS` (an error raised with ``options=DUPLICATES_OPTIONS`` spells them).
_ONE, _ALL, _PYTHON = DUPLICATES_OPTIONS
DUPLICATES_HINT = f"keep one vote of each with {_ONE}, or all as multi-label votes with {_ALL}{_PYTHON}"


class Votes(VoteViews):
    """Votes of annotators on items, as integer-coded arrays.

    Build one with :meth:`from_long`, :meth:`from_wide` or :meth:`from_counts`,
    or with a loader from :mod:`annokit.io` (files, Arrow tables and record
    batches, Hugging Face datasets). The constructor takes already-coded arrays.

    Parameters
    ----------
    item_index : ndarray of shape (n_votes,)
        Item code of each vote, in ``range(n_items)``.
    label_index : ndarray of shape (n_votes,)
        Label code of each vote, in ``range(len(labels))``.
    item_ids : array-like of str, shape (n_items,)
        Stored as an object ndarray of str; a pyarrow string array is kept as given and
        converted the first time ``item_ids`` is read.
    labels : LabelSet
    annotator_index : ndarray of shape (n_votes,), optional
        Annotator code of each vote; None when annotator ids are unknown.
    annotator_ids : array-like of str, shape (n_annotators,), optional
    item_metadata : DataFrame with n_items rows, optional
        Per-item fields (texts, original labels), row ``i`` describing item ``i``.
    gold : ndarray of shape (n_items,), optional
        Gold label code per item: a label index, -1 (no gold) or -2 (a gold label not among
        ``labels``: counted beside accuracies, never right or wrong; :mod:`annokit.core.gold`).
        Read it as ``votes.gold`` (None without gold); as names, ``gold`` of :meth:`to_frame`.
    duplicates : {"error", "first", "last", "keep"}, default="error"
        What to do with repeated (item, annotator) votes: raise listing the first
        offenders, keep the first or last of each, or keep them all.

    Attributes
    ----------
    n_items, n_votes, n_labels, n_annotators : int (n_annotators is None without ids)
    n_duplicates_removed : int
        Votes dropped by ``duplicates="first" | "last"``.
    n_duplicate_pairs : int
        (item, annotator) pairs that had more than one vote before ``duplicates="first" |
        "last"`` kept one (0 otherwise).
    read_info : str or None
        Set by :mod:`annokit.io`: one line saying how the input was read.
    read_details : ReadInfo or None
        Set by the readers of platform exports, LeWiDi splits and Hugging Face responses
        (:mod:`annokit.core.read_info`); ``hf_info``, ``mturk_info``, ``lewidi_info``, ... are
        its deprecated read-only aliases, kept for one release.
    ``a == b`` is :meth:`equals` (value equality), so ``Votes.from_long(v.to_long()) == v``;
    a ``Votes`` is therefore unhashable, like other mutable containers.
    """

    item_index: np.ndarray
    label_index: np.ndarray
    annotator_index: np.ndarray | None
    annotator_ids: np.ndarray | None
    item_metadata: pd.DataFrame
    gold: np.ndarray | None
    #: Item ids as given: an object ndarray of str, or a loader's pyarrow string array.
    _item_ids: Any
    # What the readers of :mod:`annokit.io` add (None for votes built in Python): how the input
    # was read, how repeated (item, annotator) votes were treated, the reader's details.
    read_info: str | None = None
    duplicates_info: dict[str, Any] | None = None
    read_details: ReadInfo | None = None
    hf_info = reader_details("hf")
    labelstudio_info = reader_details("labelstudio")
    mturk_info = reader_details("mturk")
    toloka_info = reader_details("toloka")
    prodigy_info = reader_details("prodigy")
    argilla_info = reader_details("argilla")
    lewidi_info = reader_details("lewidi")
    #: "counts" or "soft labels" when the input was published already counted
    #: (:mod:`annokit.io.counts`); ``row_ids``: its item ids are the array's row positions.
    input_kind: str | None = None
    row_ids: bool = False
    annotator_metadata: pd.DataFrame | None = None
    #: Gold rows of a separate gold file naming items without votes (warned about, not used).
    n_gold_without_votes: int | None = None

    def __init__(
        self,
        item_index: Any,
        label_index: Any,
        *,
        item_ids: Any,
        labels: LabelSet,
        annotator_index: Any = None,
        annotator_ids: Any = None,
        item_metadata: pd.DataFrame | None = None,
        gold: Any = None,
        duplicates: DuplicatePolicy = "error",
        source: str = "votes",
        _ids_unique: bool = False,
        _coded: bool = False,
    ):
        check_option("duplicates", duplicates, ("error", "first", "last", "keep"))
        if not isinstance(labels, LabelSet):
            raise SchemaError(f"labels must be a LabelSet; got {type(labels).__name__}")
        self.labels = labels
        self.source = source
        self.item_ids = item_ids
        # _coded: the codes come from a loader's dictionary coding of the votes themselves, so
        # they are in range and every item has a vote by construction; those scans are skipped
        self._set_codes(np.asarray(item_index), np.asarray(label_index), _coded, _ids_unique)
        self._set_annotators(annotator_index, annotator_ids, _coded)
        self._set_item_fields(item_metadata, gold)
        self.n_duplicates_removed = 0
        self.n_duplicate_pairs = 0
        # every (item, annotator) pair is unique once duplicates were refused or resolved
        self._unique_pairs = self.annotator_index is None or duplicates != "keep"
        if self.annotator_index is not None and duplicates != "keep":
            self._resolve_duplicates(duplicates)
        if not _coded:
            self._check_every_item_voted()

    # -- construction helpers -------------------------------------------------

    def _set_codes(self, item_index: np.ndarray, label_index: np.ndarray, coded: bool,
                   ids_unique: bool) -> None:
        """The item and label codes, checked against the item ids and labels; unique item ids."""
        if item_index.shape != label_index.shape or item_index.ndim != 1:
            raise SchemaError(
                f"{self.source}: item_index and label_index must be 1-D of equal length; got "
                f"{item_index.shape} and {label_index.shape}"
            )
        self.item_index = self._check_codes(item_index, self.n_items, "item_index", coded)
        self.label_index = self._check_codes(label_index, len(self.labels), "label_index", coded)
        if not ids_unique and pd.Index(self.item_ids).has_duplicates:
            dup = pd.Index(self.item_ids)[pd.Index(self.item_ids).duplicated()].unique()
            raise SchemaError(f"{self.source}: item ids must be unique; repeated "
                              f"{first_offenders(dup)}")

    def _set_annotators(self, annotator_index: Any, annotator_ids: Any, coded: bool) -> None:
        """The annotator codes and ids (ids ``"0"``, ``"1"``, ... when only codes are given),
        or None for both when annotators are unknown."""
        if annotator_index is None:
            if annotator_ids is not None:
                raise SchemaError(f"{self.source}: annotator_ids given without annotator_index")
            self.annotator_index = None
            self.annotator_ids = None
            return
        annotator_index = np.asarray(annotator_index)
        if annotator_index.shape != self.item_index.shape:
            raise SchemaError(
                f"{self.source}: annotator_index has shape {annotator_index.shape}, "
                f"expected {self.item_index.shape}"
            )
        if annotator_ids is None:
            annotator_ids = np.arange(int(annotator_index.max()) + 1 if annotator_index.size
                                      else 0).astype(str)
        self.annotator_ids = np.asarray(annotator_ids, dtype=object).reshape(-1)
        self.annotator_index = self._check_codes(
            annotator_index, len(self.annotator_ids), "annotator_index", coded
        )

    def _set_item_fields(self, item_metadata: pd.DataFrame | None, gold: Any) -> None:
        """Per-item metadata (an empty frame of n_items rows by default) and gold codes."""
        n_items = self.n_items
        if item_metadata is None:
            item_metadata = pd.DataFrame(index=pd.RangeIndex(n_items))
        elif len(item_metadata) != n_items:
            raise SchemaError(
                f"{self.source}: item_metadata has {len(item_metadata)} rows for {n_items} items"
            )
        self.item_metadata = item_metadata.reset_index(drop=True)
        self.gold = (None if gold is None
                     else check_gold_codes(gold, n_items, len(self.labels), self.source))

    def _check_every_item_voted(self) -> None:
        voted = np.zeros(self.n_items, dtype=bool)
        voted[self.item_index] = True  # not a bincount: no int64 copy of the codes
        empty = np.flatnonzero(~voted)
        if empty.size:
            raise SchemaError(
                f"{self.source}: {empty.size} item(s) have zero votes, e.g. "
                f"{first_offenders(self.item_ids[empty])}"
            )

    def _check_codes(self, codes: np.ndarray, n: int, name: str, coded: bool = False) -> np.ndarray:
        if codes.size and codes.dtype.kind not in "iu":
            raise SchemaError(f"{self.source}: {name} must be integers; got dtype {codes.dtype}")
        codes = codes.astype(np.int32 if n < 2**31 - 1 else np.int64, copy=False)
        if codes.size and not coded and (codes.min() < 0 or codes.max() >= n):
            raise InvalidValueError(f"{self.source}: {name} has codes outside range({n})")
        return codes

    def _resolve_duplicates(self, policy: DuplicatePolicy) -> None:
        if not self._scan_duplicate_pairs():
            return
        annotators, annotator_ids = self.annotator_codes("resolving repeated votes")
        key = self._pair_keys(self.item_index, annotators)
        dup_mask = pd.Series(key).duplicated(keep=False).to_numpy()
        if policy == "error":
            rows = np.flatnonzero(dup_mask)
            pairs = list(dict.fromkeys(
                (self.item_ids[self.item_index[r]], annotator_ids[annotators[r]])
                for r in rows[:50]
            ))
            n_pairs = int(pd.Series(key[dup_mask]).nunique())
            raise SchemaError(
                f"{self.source}: {n_pairs} (item, annotator) pair(s) have more than one vote, e.g. "
                f"{first_offenders(pairs)}; {DUPLICATES_HINT}", options=DUPLICATES_OPTIONS
            )
        self.n_duplicate_pairs = int(pd.Series(key[dup_mask]).nunique())
        keep = ~pd.Series(key).duplicated(keep=policy).to_numpy()
        self.n_duplicates_removed = int((~keep).sum())
        self.item_index = self.item_index[keep]
        self.label_index = self.label_index[keep]
        self.annotator_index = annotators[keep]

    def pair_keys(self) -> np.ndarray:
        """One int64 key per vote for its (item, annotator) pair: ``item * n_annotators +
        annotator`` (votes with annotator ids).

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"item": ["q", "q", "r"], "annotator": ["a", "b", "a"],
        ...                    "label": ["x", "y", "x"]})
        >>> Votes.from_long(df).pair_keys().tolist()
        [0, 1, 2]
        """
        if self.annotator_index is None:
            raise SchemaError(f"{self.source}: (item, annotator) pairs need annotator ids")
        return self._pair_keys(self.item_index, self.annotator_index)

    def _pair_keys(self, items: np.ndarray, annotators: np.ndarray) -> np.ndarray:
        return pair_keys(items, annotators, self.n_annotators or 0)

    def has_duplicate_pairs(self) -> bool:
        """Whether some (item, annotator) pair has more than one vote.

        Only votes built with ``duplicates="keep"`` can have them (multi-label
        responses, or repeated votes kept on purpose); for the others the answer is
        known without a pass over the votes. False without annotator ids.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"item": ["q", "q"], "annotator": ["a", "a"], "label": ["x", "y"]})
        >>> Votes.from_long(df, duplicates="keep").has_duplicate_pairs()
        True
        >>> Votes.from_long(df, duplicates="first").has_duplicate_pairs()
        False
        """
        return not self._unique_pairs and self._scan_duplicate_pairs()

    def _scan_duplicate_pairs(self, block: int = 1 << 20) -> bool:
        """Whether some (item, annotator) pair has more than one vote (a pass over the votes;
        :func:`annokit.core.ids.has_repeated_pairs`)."""
        annotators, _ = self.annotator_codes("checking for repeated votes")
        return has_repeated_pairs(self.item_index, annotators, self.n_items,
                                  self.n_annotators or 0, block=block)

    # -- basic properties -----------------------------------------------------

    @property
    def item_ids(self) -> np.ndarray:
        """Item ids, an object ndarray of str of shape (n_items,)."""
        ids = self._item_ids
        if not isinstance(ids, np.ndarray):  # Arrow strings from a loader, converted on first use
            ids = self._item_ids = ids.to_numpy(zero_copy_only=False)
        return ids

    @item_ids.setter
    def item_ids(self, ids: Any) -> None:
        # A loader can hand over its pyarrow string array of (millions of) ids: turning them into
        # Python strings costs more than reading them, and many uses (counts, entropy, stats)
        # never look at them.
        self._item_ids = ids if _is_arrow_strings(ids) else np.asarray(ids, dtype=object).reshape(-1)

    @property
    def n_items(self) -> int:
        return len(self._item_ids)

    @property
    def n_votes(self) -> int:
        return len(self.item_index)

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @property
    def has_annotators(self) -> bool:
        return self.annotator_index is not None

    @property
    def n_annotators(self) -> int | None:
        return None if self.annotator_ids is None else len(self.annotator_ids)

    def __len__(self) -> int:
        return self.n_votes

    # -- derived views --------------------------------------------------------

    @overload
    def counts(self, *, as_frame: Literal[False] = ...) -> np.ndarray: ...
    @overload
    def counts(self, *, as_frame: Literal[True]) -> pd.DataFrame: ...
    @overload
    def counts(self, *, as_frame: bool) -> np.ndarray | pd.DataFrame: ...

    def counts(self, *, as_frame: bool = False) -> np.ndarray | pd.DataFrame:
        """Vote counts, an int64 ndarray of shape (n_items, n_labels).

        Parameters
        ----------
        as_frame : bool, default=False
            Return a DataFrame indexed by item id (index name ``item``) with one column
            per label name (columns name ``label``), in label order.

        Examples
        --------
        >>> df = pd.DataFrame({"item": ["q1", "q1", "q2"], "annotator": ["a", "b", "a"],
        ...                    "label": ["yes", "no", "yes"]})
        >>> Votes.from_long(df, labels=["yes", "no"]).counts(as_frame=True)
        label  yes  no
        item
        q1       1   1
        q2       1   0
        """
        if as_frame:
            return self._frame(self.counts())
        counts = np.zeros(self.n_items * self.n_labels, dtype=np.int64)
        block = 1 << 20  # flat cell indices of a block of votes at a time, not of every vote
        for a in range(0, self.n_votes, block):
            flat = self.item_index[a:a + block].astype(np.int64)
            flat *= self.n_labels
            flat += self.label_index[a:a + block]
            np.add.at(counts, flat, 1)
        return counts.reshape(self.n_items, self.n_labels)

    def annotator_codes(self, what: str) -> tuple[np.ndarray, np.ndarray]:
        """``(annotator_index, annotator_ids)``, for code that needs annotator ids.

        Raises
        ------
        SchemaError
            Votes without annotator ids, naming ``what`` needs them.
        """
        if self.annotator_index is None or self.annotator_ids is None:
            raise SchemaError(
                f"{what} needs annotator ids, but {self.source} has none (counts-only data such "
                "as ChaosNLI)"
            )
        return self.annotator_index, self.annotator_ids

    # -- subsetting -----------------------------------------------------------

    def select_votes(self, mask: Any, *, keep_annotators: bool = False) -> Votes:
        """Keep the votes where ``mask`` is true; items left with no vote are removed, and so are
        annotators (``n_annotators`` and ``annotator_ids`` count those with a vote kept), unless
        ``keep_annotators`` (codes unchanged, for loops comparing annotators between rounds).

        The caller is responsible for reporting removed items (see ``item_ids``
        of the result against this object's).
        """
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (self.n_votes,):
            raise SchemaError(f"vote mask has shape {mask.shape}, expected ({self.n_votes},)")
        keep_items = np.bincount(self.item_index[mask], minlength=self.n_items) > 0
        remap = np.cumsum(keep_items) - 1
        out = self._rebuild(
            item_index=remap[self.item_index[mask]],
            label_index=self.label_index[mask],
            annotator_index=None if self.annotator_index is None else self.annotator_index[mask],
            item_keep=keep_items,
        )
        return out if keep_annotators else out.compact_annotators()

    def select_items(self, items: Any) -> Votes:
        """Keep the given items (a boolean mask over items or integer positions), in that order;
        annotators left without a vote are removed (:meth:`compact_annotators`)."""
        items = np.asarray(items)
        if items.dtype == bool:
            if items.shape != (self.n_items,):
                raise SchemaError(f"item mask has shape {items.shape}, expected ({self.n_items},)")
            positions = np.flatnonzero(items)
        else:
            positions = items.astype(np.int64)
            if positions.size and (positions.min() < 0 or positions.max() >= self.n_items):
                raise InvalidValueError(f"item positions must be in range({self.n_items})")
            if len(np.unique(positions)) != len(positions):
                raise InvalidValueError("item positions must not repeat")
        remap = np.full(self.n_items, -1, dtype=np.int64)
        remap[positions] = np.arange(len(positions))
        new_item = remap[self.item_index]
        mask = new_item >= 0
        # stable sort by new item position keeps within-item vote order
        order = np.argsort(new_item[mask], kind="stable")
        return self._subset(Votes(
            new_item[mask][order], self.label_index[mask][order], item_ids=self.item_ids[positions],
            labels=self.labels,
            annotator_index=None if self.annotator_index is None
            else self.annotator_index[mask][order],
            annotator_ids=self.annotator_ids,
            item_metadata=self.item_metadata.iloc[positions],
            gold=None if self.gold is None else self.gold[positions],
            duplicates="keep", source=self.source,
        )).compact_annotators()

    def _rebuild(self, *, item_index, label_index, annotator_index, item_keep) -> Votes:
        return self._subset(Votes(
            item_index, label_index, item_ids=self.item_ids[item_keep], labels=self.labels,
            annotator_index=annotator_index, annotator_ids=self.annotator_ids,
            item_metadata=self.item_metadata.loc[item_keep],
            gold=None if self.gold is None else self.gold[item_keep],
            duplicates="keep", source=self.source,
        ))

    def _subset(self, votes: Votes) -> Votes:
        """``votes``, a subset of these votes: unique (item, annotator) pairs stay unique."""
        votes._unique_pairs = votes._unique_pairs or self._unique_pairs
        return votes

    def with_gold(self, gold: Any) -> Votes:
        """These votes (arrays shared) with ``gold`` codes (see the class docstring), or none."""
        out = copy.copy(self)
        out.gold = None if gold is None else check_gold_codes(gold, self.n_items, self.n_labels, self.source)
        return out

    def item_positions(self, ids: Iterable[Any]) -> np.ndarray:
        """Positions of item ids (compared as text, :func:`~annokit.core.labels.scalar_to_str`);
        -1 for ids that are not present. One hash join (:func:`~annokit.core.ids.id_positions`)."""
        return id_positions(self._item_ids, ids)

    # -- equality -------------------------------------------------------------

    def equals(self, other: Votes) -> bool:
        """True when both hold the same votes, ids, labels, metadata and gold, in the same order."""
        if not isinstance(other, Votes):
            return False

        def same(a, b):
            if a is None or b is None:
                return a is None and b is None
            return np.array_equal(np.asarray(a), np.asarray(b))

        return (
            self.labels == other.labels
            and same(self.item_ids, other.item_ids)
            and same(self.item_index, other.item_index)
            and same(self.label_index, other.label_index)
            and same(self.annotator_index, other.annotator_index)
            and same(self.annotator_ids, other.annotator_ids)
            and same(self.gold, other.gold)
            and frames_equal(self.item_metadata, other.item_metadata)
        )

    def __eq__(self, other: object) -> bool:
        return self.equals(other) if isinstance(other, Votes) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # value equality on mutable arrays

    # -- constructors ---------------------------------------------------------

    @classmethod
    def from_long(
        cls,
        df: pd.DataFrame,
        *,
        item: str | None = None,
        label: str | None = None,
        annotator: str | None = "annotator",
        labels: LabelSet | Sequence[Any] | None = None,
        gold: str | None = None,
        item_columns: Sequence[str] = (),
        duplicates: DuplicatePolicy = "error",
        source: str = "votes",
    ) -> Votes:
        """Votes from a long DataFrame, one row per vote.

        Parameters
        ----------
        df : DataFrame
            One row per vote.
        item, label : str, optional
            Column names of the item id and the label. Default: the column named ``item``
            (``label``), else the one column with a known spelling of the role
            (``task``, ``question``, ...; ``answer``, ``response``, ...), detected by
            :func:`annokit.core.columns.detect_columns` exactly as for files.
        annotator : str or None
            Column of annotator ids. Default ``"annotator"``: that column, else one
            with a known spelling (``worker``, ``rater``, ...), else annotator ids are
            unknown; None: annotator ids are unknown.
        labels : LabelSet or sequence of names, optional
            Label order. Default: a categorical column's categories (a
            :meth:`to_long` frame round-trips), else the distinct values in
            natural order.
        gold : str, optional
            Column holding each item's gold label (constant within an item).
        item_columns : sequence of str
            Columns holding per-item metadata (constant within an item).

        Raises
        ------
        SchemaError
            Missing columns, missing or empty ids or labels, duplicate
            (item, annotator) votes, or item fields that vary within an item.
        InvalidValueError
            A label outside the given label set.

        Examples
        --------
        >>> df = pd.DataFrame({"item": ["q1", "q1", "q2"], "annotator": ["a", "b", "a"],
        ...                    "label": ["yes", "no", "yes"]})
        >>> Votes.from_long(df).counts().tolist()
        [[1, 1], [0, 1]]
        >>> crowd = pd.DataFrame({"task": ["q1", "q1"], "worker": ["w1", "w2"],
        ...                       "answer": [1, 0]})
        >>> Votes.from_long(crowd)
        Votes(n_items=1, n_annotators=2, n_votes=2, labels=['0', '1'], scale='nominal')
        """
        item, annotator, label = long_columns(df, item, annotator, label, source)
        parts = long_parts(df, item=item, label=label, annotator=annotator,
                                   labels=labels, gold=gold, item_columns=item_columns,
                                   source=source)
        return cls(**parts, duplicates=duplicates, source=source)

    @classmethod
    def from_wide(
        cls,
        df: pd.DataFrame,
        *,
        item: str = "item",
        annotator_columns: Sequence[str] | None = None,
        labels: LabelSet | Sequence[Any] | None = None,
        gold: str | None = None,
        item_columns: Sequence[str] = (),
        source: str = "votes",
    ) -> Votes:
        """Votes from a wide DataFrame: one row per item, one column per annotator.

        A blank cell (NaN, None or empty string) means the annotator did not vote
        on that item. ``annotator_columns`` defaults to every column other than
        ``item``, ``gold`` and ``item_columns``.

        Examples
        --------
        >>> wide = pd.DataFrame({"item": ["q1", "q2"], "ann1": ["yes", None], "ann2": ["no", "no"]})
        >>> Votes.from_wide(wide).counts().tolist()
        [[1, 1], [1, 0]]
        """
        parts = wide_parts(df, item=item, annotator_columns=annotator_columns,
                                   labels=labels, gold=gold, item_columns=item_columns,
                                   source=source)
        return cls(**parts, source=source)

    @classmethod
    def from_counts(
        cls,
        counts: Any,
        *,
        labels: LabelSet | Sequence[Any] | None = None,
        item_ids: Sequence[Any] | np.ndarray | None = None,
        item_metadata: pd.DataFrame | None = None,
        gold: Any = None,
        source: str = "counts",
    ) -> Votes:
        """Votes from an (n_items, n_labels) count matrix (annotator ids unknown).

        A DataFrame's index gives the item ids and its columns the labels.

        Examples
        --------
        >>> Votes.from_counts([[3, 1], [0, 2]], labels=["yes", "no"]).n_votes
        6
        """
        if isinstance(counts, pd.DataFrame):
            item_ids = list(counts.index) if item_ids is None else item_ids
            labels = list(counts.columns) if labels is None else labels
            counts = counts.to_numpy()
        arr = check_counts(counts, name=source, allow_empty_rows=True)
        if item_ids is None:
            item_ids = np.arange(arr.shape[0]).astype(str)
        ids = as_str_values(item_ids, what="item id", where=source)
        if len(ids) != arr.shape[0]:
            raise SchemaError(f"{source}: {len(ids)} item ids for {arr.shape[0]} rows")
        empty = np.flatnonzero(arr.sum(axis=1) == 0)
        if empty.size:
            raise SchemaError(
                f"{source}: {empty.size} item(s) have zero votes, e.g. {first_offenders(ids[empty])}"
            )
        labelset = LabelSet.coerce(labels if labels is not None else
                                   [str(j) for j in range(arr.shape[1])])
        if len(labelset) != arr.shape[1]:
            raise SchemaError(f"{source}: {len(labelset)} labels for {arr.shape[1]} columns")
        flat = arr.reshape(-1)
        cells = np.repeat(np.arange(flat.size), flat)
        item_index, label_index = np.divmod(cells, arr.shape[1])
        return cls(item_index, label_index, item_ids=ids, labels=labelset,
                   item_metadata=item_metadata, gold=gold, source=source)

# -- private helpers ----------------------------------------------------------

def _is_arrow_strings(values: Any) -> bool:
    """Whether ``values`` is a pyarrow (chunked) string array, without importing pyarrow."""
    cls = type(values)
    return (cls.__module__.split(".")[0] == "pyarrow"
            and cls.__name__ in ("StringArray", "LargeStringArray", "ChunkedArray")
            and str(values.type) in ("string", "large_string"))
