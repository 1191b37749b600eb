"""What :class:`~annokit.core.votes.Votes` shows of itself: its repr, soft labels, labelled
pandas frames, and the same votes on another scale.

A mixin of :class:`~annokit.core.votes.Votes` (which keeps the model itself: codes, checks,
constructors); it imports nothing of ``votes`` at run time, building new votes with
``type(self)``. Its methods read ``self`` as the ``Votes`` it is part of (``_votes``), so the type
checker knows the attributes they use.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Literal, cast, overload

import numpy as np
import pandas as pd

from annokit.core.frames import long_frame
from annokit.core.scales import NUMERIC_SCALES, check_scale, not_a_number, number_name
from annokit.core.soft_labels import distributions
from annokit.errors import InvalidValueError

if TYPE_CHECKING:
    from annokit.core.votes import Votes

__all__ = ["VoteViews"]


class VoteViews:
    """Views of votes (mixed into :class:`~annokit.core.votes.Votes`)."""

    def _votes(self) -> Votes:
        """``self``, typed as the :class:`~annokit.core.votes.Votes` this mixin is part of."""
        return cast("Votes", self)

    def __repr__(self) -> str:
        """``Votes(n_items=..., n_annotators=..., n_votes=..., labels=[...], scale=...)``;
        ``n_annotators=None`` without annotator ids, and at most 8 labels written out.

        Examples
        --------
        >>> from annokit.core.votes import Votes
        >>> slider = Votes.from_counts([[1] * 101], labels=[str(v) for v in range(101)])
        >>> slider.with_scale("interval")  # doctest: +NORMALIZE_WHITESPACE
        Votes(n_items=1, n_annotators=None, n_votes=101,
              labels=['0', '1', '2', '3', '4', '5', ..., '100'] (101), scale='interval')
        """
        votes = self._votes()
        names = list(votes.labels.names)
        shown = (repr(names) if len(names) <= 8 else
                 f"[{', '.join(map(repr, names[:6]))}, ..., {names[-1]!r}] ({len(names)})")
        return (f"Votes(n_items={votes.n_items}, n_annotators={votes.n_annotators}, "
                f"n_votes={votes.n_votes}, labels={shown}, scale={votes.labels.scale!r})")

    @overload
    def distributions(self, *, smoothing: float = ...,
                      as_frame: Literal[False] = ...) -> np.ndarray: ...
    @overload
    def distributions(self, *, smoothing: float = ..., as_frame: Literal[True]) -> pd.DataFrame: ...
    @overload
    def distributions(self, *, smoothing: float = ...,
                      as_frame: bool) -> np.ndarray | pd.DataFrame: ...

    def distributions(self, *, smoothing: float = 0.0,
                      as_frame: bool = False) -> np.ndarray | pd.DataFrame:
        """Soft labels: each item's share of votes per label, shape (n_items, n_labels).

        :func:`annokit.core.soft_labels.distributions` of :meth:`counts` (``smoothing`` is
        added to every count first); ``as_frame=True`` labels rows by item id and columns
        by label name, as :meth:`counts`.

        Examples
        --------
        >>> from annokit.core.votes import Votes
        >>> df = pd.DataFrame({"task": ["q1", "q1", "q2"], "worker": ["a", "b", "a"],
        ...                    "answer": ["yes", "no", "yes"]})
        >>> soft = Votes.from_long(df, labels=["yes", "no"]).distributions(as_frame=True)
        >>> soft
        label  yes   no
        item
        q1     0.5  0.5
        q2     1.0  0.0
        >>> float(soft.loc["q1", "no"]), soft.idxmax(axis=1).tolist()
        (0.5, ['yes', 'yes'])
        """
        probs = distributions(self._votes().counts(), smoothing=smoothing)
        return self._frame(probs) if as_frame else probs

    def _frame(self, matrix: np.ndarray) -> pd.DataFrame:
        """An (n_items, n_labels) matrix labelled by item id and label name."""
        votes = self._votes()
        return pd.DataFrame(matrix, index=pd.Index(votes.item_ids, name="item"),
                            columns=pd.Index(list(votes.labels.names), name="label"))

    def with_scale(self, scale: str, *, declared: bool = False) -> Votes:
        """These votes with their labels on ``scale`` (:meth:`LabelSet.to_scale`).

        On ordinal (numeric labels), interval and ratio scales labels are numbers: votes and
        gold labels written ``1``, ``1.0``, ``" 1"`` or ``"+1"`` become one label, in numeric
        order unless ``declared``. Counts per number are the sums of the merged labels' counts.

        Parameters
        ----------
        scale : {"nominal", "ordinal", "interval", "ratio"}
        declared : bool, default=False
            Whether the label order was declared (kept) rather than inferred.

        Raises
        ------
        InvalidValueError
            A label that is not a number on an interval or ratio scale: one line naming the
            source, the value, the item and annotator of its first vote, and ``--scale nominal``.

        Examples
        --------
        >>> from annokit.core.votes import Votes
        >>> df = pd.DataFrame({"item": ["q", "q", "q"], "annotator": ["a", "b", "c"],
        ...                    "label": ["1", "1.0", "+2"]})
        >>> v = Votes.from_long(df).with_scale("interval")
        >>> v.labels, v.counts().tolist()
        (LabelSet(['1', '2'], scale='interval'), [[2, 1]])
        """
        votes = self._votes()
        check_scale(scale)
        if scale in NUMERIC_SCALES:
            bad = [j for j, n in enumerate(votes.labels.names) if number_name(n) is None]
            if bad:
                raise InvalidValueError(f"{votes.source}: {self._first_use(bad[0])} "
                                        f"{not_a_number(votes.labels.names[bad[0]], scale)}")
        labels, codes = votes.labels.to_scale(scale, declared=declared)
        # gold codes -1 (none) and -2 (a gold label not among the labels) stay as they are
        gold = (None if votes.gold is None
                else np.where(votes.gold >= 0, codes[np.maximum(votes.gold, 0)], votes.gold))
        out = type(votes)(votes.item_index, codes[votes.label_index], item_ids=votes._item_ids,
                          labels=labels, annotator_index=votes.annotator_index,
                          annotator_ids=votes.annotator_ids, item_metadata=votes.item_metadata,
                          gold=gold, duplicates="keep", source=votes.source, _ids_unique=True,
                          _coded=True)
        out._unique_pairs = votes._unique_pairs
        out.n_duplicates_removed = votes.n_duplicates_removed
        for attr, value in self.__dict__.items():  # what a reader added (read_info, ...)
            out.__dict__.setdefault(attr, value)
        return out

    def _first_use(self, code: int) -> str:
        """Where label ``code`` is first used: its first vote, or else a gold label."""
        votes = self._votes()
        rows = np.flatnonzero(votes.label_index == code)
        if rows.size:
            r = int(rows[0])
            annotators, annotator_ids = votes.annotator_index, votes.annotator_ids
            who = ("" if annotators is None or annotator_ids is None
                   else f" by annotator {str(annotator_ids[annotators[r]])!r}")
            return f"the vote on item {str(votes.item_ids[votes.item_index[r]])!r}{who}:"
        item = int(np.argmax(votes.gold == code)) if votes.gold is not None else 0
        return f"the gold label of item {str(votes.item_ids[item])!r}:"

    # -- tallies ---------------------------------------------------------------

    def compact_annotators(self) -> Votes:
        """These votes with only the annotators who have a vote: ``annotator_ids`` (and the
        rows of ``annotator_metadata``) restricted to them, in their order, codes renumbered;
        ``self`` when every annotator has a vote.

        Examples
        --------
        >>> from annokit.core.votes import Votes
        >>> df = pd.DataFrame({"item": ["q", "q", "r"], "annotator": ["a", "b", "c"],
        ...                    "label": ["x", "y", "x"]})
        >>> v = Votes.from_long(df).select_items([0])
        >>> v.n_annotators, v.annotator_ids.tolist()
        (2, ['a', 'b'])
        """
        votes = self._votes()
        if votes.annotator_index is None or votes.annotator_ids is None:
            return votes
        present = np.zeros(len(votes.annotator_ids), dtype=bool)
        present[votes.annotator_index] = True
        if present.all():
            return votes
        out = copy.copy(votes)
        out.annotator_index = (np.cumsum(present) - 1)[votes.annotator_index]
        out.annotator_ids = votes.annotator_ids[present]
        meta = votes.annotator_metadata
        if meta is not None:
            out.annotator_metadata = meta[meta.index.astype(str).isin(
                out.annotator_ids.astype(str))]
        return out

    def votes_per_item(self) -> np.ndarray:
        """Number of votes on each item, shape (n_items,)."""
        v = self._votes()
        return np.bincount(v.item_index, minlength=v.n_items)

    def votes_per_annotator(self) -> np.ndarray:
        """Number of votes by each annotator, shape (n_annotators,)."""
        annotators, annotator_ids = self._votes().annotator_codes("votes_per_annotator")
        return np.bincount(annotators, minlength=len(annotator_ids))

    def annotator_label_counts(self) -> np.ndarray:
        """How often each annotator used each label, shape (n_annotators, n_labels)."""
        v = self._votes()
        annotators, annotator_ids = v.annotator_codes("annotator_label_counts")
        flat = annotators.astype(np.int64) * v.n_labels + v.label_index
        return np.bincount(flat, minlength=len(annotator_ids) * v.n_labels).reshape(
            len(annotator_ids), v.n_labels
        )

    # -- exporters ------------------------------------------------------------

    def to_frame(self) -> pd.DataFrame:
        """One row per vote, plain strings: ``item``, ``annotator`` (when known), ``label``
        and, with gold, ``gold`` (label name, missing where unknown); :meth:`to_long` round-trips.
        """
        v = self._votes()
        return long_frame(v.item_ids, v.item_index, v.annotator_ids,
                          v.annotator_index, v.labels.names, v.label_index, v.gold)

    def to_long(self) -> pd.DataFrame:
        """One row per vote: ``item``, ``annotator`` (when known) and ``label`` columns.

        Ids and labels are categoricals whose categories keep the id tables and
        label order; label aliases, item metadata and gold ride in
        ``df.attrs["annokit"]``, so :meth:`from_long` restores an equal object.
        For Hugging Face datasets see :func:`annokit.io.to_hf`.
        """
        v = self._votes()
        data = {"item": pd.Categorical.from_codes(v.item_index,
                                                  categories=pd.Index(v.item_ids))}
        if v.annotator_index is not None and v.annotator_ids is not None:
            data["annotator"] = pd.Categorical.from_codes(v.annotator_index,
                                                          categories=pd.Index(v.annotator_ids))
        data["label"] = pd.Categorical.from_codes(v.label_index,
                                                  categories=pd.Index(list(v.labels.names)))
        df = pd.DataFrame(data)
        df.attrs["annokit"] = {
            "labels": v.labels.to_dict(),
            "item_metadata": v.item_metadata.to_dict(orient="list"),
        }
        if v.gold is not None:
            df.attrs["annokit"]["gold"] = v.gold.tolist()
        return df
