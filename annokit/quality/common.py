"""Shared helpers of the annotator-quality estimators (also used by the Dask engine, annokit.scale.em).

Everything here works on the integer-coded vote arrays of :class:`~annokit.core.votes.Votes`
and is vectorised: sparse matrices, ``np.bincount`` and index arithmetic, never a
Python loop over votes or items.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from annokit.core.checks import check_int
from annokit.core.gold import GOLD_NONE, check_gold_codes
from annokit.core.votes import Votes
from annokit.errors import AlignmentError, ConvergenceWarning, InvalidValueError, SchemaError

__all__ = [
    "gold_codes",
    "label_names",
    "normalize_log",
    "require_annotators",
    "require_votes",
    "vote_matrix",
    "warn_not_converged",
    "with_influence",
    "withhold_verdicts",
]


def label_names(votes: Votes, codes: np.ndarray) -> np.ndarray:
    """Label names (object ndarray) of label ``codes``: what a fitted ``labels_`` holds."""
    return np.asarray(list(votes.labels.names), dtype=object)[np.asarray(codes, dtype=np.int64)]


def require_votes(votes: Any, what: str) -> Votes:
    """Raise unless ``votes`` is a :class:`Votes` object."""
    if not isinstance(votes, Votes):
        raise SchemaError(f"{what} expects an annokit.core.votes.Votes object; got "
                          f"{type(votes).__name__}")
    return votes


def require_annotators(votes: Any, what: str) -> Votes:
    """Raise a clear error when the votes carry no annotator ids (e.g. ChaosNLI)."""
    votes = require_votes(votes, what)
    if not votes.has_annotators:
        raise SchemaError(
            f"{what} needs annotator ids, but {votes.source} has none (counts-only data such as "
            "ChaosNLI publish no annotator ids); if a column of the file holds them, name it with "
            "--annotator-col (Python: columns={'annotator': ...}); else use majority vote or "
            "soft labels instead"
        )
    return votes


def vote_matrix(votes: Votes) -> sparse.csr_matrix:
    """Sparse (n_items, n_annotators * n_labels) count matrix, column ``j * n_labels + l``.

    Entry ``[i, j * L + l]`` counts the votes of annotator ``j`` for label ``l`` on item
    ``i`` (1 for ordinary data; more when duplicate votes are kept).
    """
    annotators, annotator_ids = votes.annotator_codes("vote_matrix")
    n_labels = votes.n_labels
    n_cols = len(annotator_ids) * n_labels
    idx = np.int32 if max(n_cols, votes.n_items) < 2**31 - 1 else np.int64  # scipy's index type
    cols = annotators.astype(idx) * idx(n_labels) + votes.label_index.astype(idx)
    data = np.ones(votes.n_votes, dtype=np.float64)
    coo = sparse.coo_matrix((data, (votes.item_index.astype(idx, copy=False), cols)),
                            shape=(votes.n_items, n_cols))
    # Duplicate (item, annotator, label) entries, if any, may stay separate entries: the
    # products add them. Marking the temporary COO canonical makes ``tocsr`` skip sorting
    # each row and merging duplicates (0.06 s of 0.15 s on 5M votes); the CSR it returns
    # works out its own format flags.
    coo.has_canonical_format = True
    return coo.tocsr()


def gold_codes(votes: Votes, gold: Any = None, *, what: str) -> np.ndarray:
    """Gold label codes per item from ``gold`` or ``votes.gold``: a label index, -1 for no
    gold, -2 for a gold label not among the labels (:mod:`annokit.core.gold`; never right
    or wrong).

    ``gold`` may be an array of codes of shape (n_items,), or a mapping of item id
    to label name/alias.
    """
    if gold is None:
        if votes.gold is None:
            return np.full(votes.n_items, GOLD_NONE, dtype=np.int64)
        return np.asarray(votes.gold, dtype=np.int64)
    if isinstance(gold, dict):
        codes = np.full(votes.n_items, GOLD_NONE, dtype=np.int64)
        ids = list(gold)
        pos = votes.item_positions(ids)
        if (pos < 0).any():
            unknown = [ids[i] for i in np.flatnonzero(pos < 0)[:5]]
            raise AlignmentError(f"{what}: gold names {int((pos < 0).sum())} item(s) that are not "
                                 f"in the votes, e.g. {unknown}")
        codes[pos] = votes.labels.encode(list(gold.values()), where=f"{what}: gold")
        return codes
    return check_gold_codes(gold, votes.n_items, votes.n_labels, what)


def normalize_log(log_post: np.ndarray,
                  out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise softmax of unnormalised log posteriors; returns (posteriors, log normaliser).

    ``out``, optional: an array of the same shape to write the posteriors into.
    Row maxima and sums run over the (few) label columns with ufuncs: numpy's
    reductions along a short last axis are several times slower on 1M rows.
    """
    n_labels = log_post.shape[1]
    top = log_post[:, 0].copy()
    for k in range(1, n_labels):
        np.maximum(top, log_post[:, k], out=top)
    top[~np.isfinite(top)] = 0.0
    post = np.subtract(log_post, top[:, None], out=out)
    np.exp(post, out=post)
    norm = post[:, 0].copy()
    for k in range(1, n_labels):
        norm += post[:, k]
    post /= norm[:, None]
    return post, np.log(norm) + top


def clamp(post: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Replace the rows of items with a gold label (code >= 0) by one-hot rows, in place."""
    known = np.flatnonzero(gold >= 0)
    if known.size:
        post[known] = 0.0
        post[known, gold[known]] = 1.0
    return post


def check_positive_int(name: str, value: Any) -> int:
    return check_int(name, value, low=1)


def check_nonneg_float(name: str, value: Any, *, positive: bool = False) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InvalidValueError(f"{name} must be a number; got {value!r}") from None
    if not np.isfinite(out) or out < 0 or (positive and out == 0):
        bound = "> 0" if positive else ">= 0"
        raise InvalidValueError(f"{name} must be a finite number {bound}; got {value!r}")
    return out


def warn_not_converged(name: str, n_iter: int, change: float, tol: float, *,
                       what: str = "log-likelihood") -> None:
    warnings.warn(
        f"{name} stopped after {n_iter} iterations without converging (last change of the "
        f"{what} per vote {change:.3g} > tol {tol:g}); raise max_iter or tol",
        ConvergenceWarning, stacklevel=3,
    )


def withhold_verdicts(table: Any, min_votes: int) -> Any:
    """An annotator table (``n_votes``, ``flagged``, ``reason``) with no verdict for annotators
    with fewer than ``min_votes`` votes: a score on so few votes says little about the
    annotator, so they are never flagged, their ``reason`` "too few votes (n < min_votes)"."""
    check_positive_int("min_votes", min_votes)
    table = table.copy()
    few = (table["n_votes"] < min_votes).to_numpy()
    table.loc[few, "flagged"] = False
    table["reason"] = table["reason"].astype(object)
    table.loc[few, "reason"] = [f"too few votes ({n} < {min_votes})"
                                for n in table.loc[few, "n_votes"]]
    return table


def with_influence(table: pd.DataFrame, influence: pd.DataFrame) -> pd.DataFrame:
    """``table`` (an ``annotator`` column) with ``alpha_without`` and ``alpha_change`` of
    ``influence`` (:func:`annokit.core.annotator_agreement.alpha_influence`, by annotator)."""
    joined = influence.reindex(table["annotator"].astype(str))
    return table.assign(alpha_without=joined["alpha_without"].to_numpy(),
                        alpha_change=joined["alpha_change"].to_numpy())
