"""Dawid-Skene, one-coin Dawid-Skene and MACE as map-reduce EM on Dask.

The votes are already shuffled so that an item's votes share a partition
(:class:`~annokit.scale.votes.DaskVotes`). One task per partition, next to its data, builds
its vote matrix once (items x annotator-label, sparse: an
:class:`annokit.quality.em_blocks.Block`) and keeps it on that worker; the partitions a
worker holds form a **group**. An iteration is then one task per group that runs the
in-memory estimators' own pass over each of its blocks
(:func:`annokit.quality.em_blocks.block_pass` for Dawid-Skene and one-coin,
:func:`annokit.quality.mace.mace_e_step` for MACE) with the parameters the client sent,
keeps the next posteriors on the worker and returns the blocks' summed
:class:`~annokit.quality.em_blocks.BlockSums`; the client adds the groups' sums and runs
the in-memory M-step, objective and stopping rule. So an iteration costs two tasks per
worker and one round trip, whatever the number of partitions, and the EM formulas are
written once (:mod:`annokit.quality.dawid_skene`, :mod:`annokit.quality.mace`).

Posteriors and parameters equal the in-memory ones to about 1e-12 (the sums over
partitions are added in another order) whatever the partitioning; MACE draws its
restarts' initial parameters on the client from the same ``rng`` stream as in memory.
Every result on the workers is a task's result (the parameters travel inside the tasks),
so a lost worker's share is recomputed from the graph and gives the same result.
"""

from __future__ import annotations

import operator
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from annokit.core.checks import check_option, check_rng
from annokit.core.progress import progress
from annokit.quality import dawid_skene as dsm
from annokit.quality import mace as macem
from annokit.quality.common import check_positive_int, clamp, warn_not_converged
from annokit.quality.em_blocks import Block, BlockSums, block_pass, column_sums, start_sums
from annokit.scale.votes import DaskVotes

__all__ = ["DaskEMResult", "fit_dask"]

METHODS = ("ds", "onecoin", "mace")


# -- what runs on the workers ------------------------------------------------------------


@dataclass
class _Pass:
    """One pass over a group: the next posteriors (per part, kept) and the summed sums."""

    post: list[np.ndarray]
    sums: BlockSums


#: A read-only array of ones the blocks of a worker share as their matrices' values (each
#: vote is 1): 8 bytes a vote less, 400 MB a worker at 1e8 votes on 2 workers.
_ONES = np.ones(0)


def _ones(n: int) -> np.ndarray:
    global _ONES
    if _ONES.size < n:
        _ONES = np.ones(max(n, 1 << 20))
        _ONES.flags.writeable = False
    return _ONES[:n]


def _block(frame: pd.DataFrame, items: pd.DataFrame, n_labels: int, n_annotators: int,
           clamp_gold: bool) -> Block:
    """One partition's vote matrix (rows: its items in order), without a Python loop. Only
    the block is kept: anything of the size of the parameters (n_annotators * n_labels
    rows) would cost as much per partition as the votes of a 1M-vote partition."""
    keys = items["item"].to_numpy()
    votes = frame["item"].to_numpy()
    if keys.size > 1 and not (keys[1:] > keys[:-1]).all():  # items sorted by key (normally)
        order = np.argsort(keys, kind="stable")
        rows = order[np.searchsorted(keys[order], votes)]
    else:
        rows = np.searchsorted(keys, votes)
    n, n_cols = len(keys), n_annotators * n_labels
    idx = np.int32 if max(n_cols, n) < 2**31 - 1 else np.int64  # scipy's index type
    cols = frame["annotator"].to_numpy().astype(idx) * idx(n_labels) \
        + frame["label"].to_numpy().astype(idx)
    if rows.size < 2 or (rows[1:] >= rows[:-1]).all():  # votes sorted by item (normally)
        indptr = np.zeros(n + 1, dtype=idx)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        x = sparse.csr_matrix((np.ones(len(frame)), cols, indptr), shape=(n, n_cols))
    else:
        coo = sparse.coo_matrix((np.ones(len(frame)), (rows.astype(idx), cols)),
                                shape=(n, n_cols))
        coo.has_canonical_format = True  # as annokit.quality.common.vote_matrix: no sorting
        x = coo.tocsr()
    gold = items["gold"].to_numpy().astype(np.int64) if clamp_gold else np.full(n, -1, np.int64)
    x.data = _ones(x.nnz)  # after construction: scipy's constructors copy a view
    xt = x.T
    xt.data = x.data
    return Block(slice(0, n), x, xt, gold)


def _start_post(block: Block, n_labels: int) -> np.ndarray:
    """The vote distributions, gold rows clamped (q_0; recomputed when needed rather than
    kept: the label of column ``c`` is ``c % n_labels``)."""
    n_cols = block.x.shape[1]
    by_label = np.zeros((n_cols, n_labels))
    by_label[np.arange(n_cols), np.arange(n_cols) % n_labels] = 1.0
    counts = np.asarray(block.x @ by_label)
    with np.errstate(invalid="ignore"):
        return clamp(counts / counts.sum(axis=1, keepdims=True), block.gold)


def _start(*blocks: Block, n_labels: int) -> tuple[BlockSums, np.ndarray]:
    """A group's sums of the starting posteriors, and its votes per annotator-label column
    ``j * n_labels + l``."""
    sums = _total([start_sums(b, _start_post(b, n_labels)) for b in blocks])
    columns = np.zeros(blocks[0].x.shape[1])
    for b in blocks:
        columns += np.bincount(b.x.indices, minlength=columns.size)
    return sums, columns


def _ds_pass(prev: _Pass | None, *blocks: Block, table: np.ndarray,
             log_priors: np.ndarray) -> _Pass:
    """:func:`annokit.quality.em_blocks.block_pass` over each block; ``prev``: the pass
    whose posteriors come in (None: the starting ones)."""
    total: BlockSums | None = None
    out: list[np.ndarray] = []
    for i, b in enumerate(blocks):
        post = _start_post(b, table.shape[1]) if prev is None else prev.post[i]
        new = np.empty_like(post)
        sums = block_pass(b, table, log_priors, post, new)
        total = sums if total is None else total + sums
        out.append(new)
    assert total is not None  # a group holds at least one block
    return _Pass(out, total)


def _mace_pass(*blocks: Block, log_p: np.ndarray, log_prior: np.ndarray) -> _Pass:
    """MACE's E-step (:func:`annokit.quality.mace.mace_e_step`) over each block."""
    total: BlockSums | None = None
    out: list[np.ndarray] = []
    for b in blocks:
        post, ll = macem.mace_e_step(b.x, log_p, log_prior, b.gold)
        sums = BlockSums(np.asarray(b.xt @ post), column_sums(post), 0.0, 0.0, ll)
        total = sums if total is None else total + sums
        out.append(post)
    assert total is not None  # a group holds at least one block
    return _Pass(out, total)


def _table(final: _Pass, names: list[str], *items: pd.DataFrame) -> pd.DataFrame:
    """A group's per-item rows (``items``: its items partitions, the blocks' rows):
    ``item``, ``p_<label>``..., ``label``, ``_gold``, ``_first`` (the first-seen order)."""
    post = np.concatenate([np.zeros((0, len(names)))] + final.post)
    df = pd.concat(items) if items else \
        pd.DataFrame({"item_id": pd.Series([], dtype=object), "gold": np.zeros(0, np.int64),
                      "first": np.zeros(0, np.int64)})
    table = pd.DataFrame({"item": df["item_id"].reset_index(drop=True)})  # its own dtype
    for j, name in enumerate(names):
        table[f"p_{name}"] = post[:, j]
    table["label"] = np.asarray(names, dtype=object)[post.argmax(axis=1)] if len(post) else \
        np.zeros(0, dtype=object)
    table["_gold"] = df["gold"].to_numpy().astype(np.int64)
    table["_first"] = df["first"].to_numpy().astype(np.int64)
    return table


# -- the client's loop -------------------------------------------------------------------


class _Exec:
    """Run a function per group of blocks on the cluster (results stay on the workers), or
    in this process."""

    def __init__(self, client: Any, groups: list[list[Any]], items: list[list[Any]],
                 meta: Any):
        self.client, self.groups, self.items, self.meta = client, groups, items, meta

    def map(self, fn: Any, *lists: Any, **kwargs: Any) -> list[Any]:
        """``fn(*row, *blocks, **kwargs)`` per group (``lists``: one value per group)."""
        rows = [(*row, *parts) for parts, *row in zip(self.groups, *lists, strict=True)]
        if self.client is None:
            return [fn(*row, **kwargs) for row in rows]
        # the parameters travel inside the tasks (a lost worker's results are recomputed from
        # the graph; scattered data would be forgotten): Dask's "Sending large graph"
        # warning for a large confusion array would repeat at every iteration
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            return [self.client.submit(fn, *row, **kwargs, pure=False) for row in rows]

    def gather(self, handles: list[Any], key: str | int | None = None) -> list[Any]:
        """The results (their ``key`` item or attribute), computed next to their data."""
        get = (lambda h: h) if key is None else (
            (lambda h: getattr(h, key)) if isinstance(key, str) else operator.itemgetter(key))
        if self.client is None:
            return [get(h) for h in handles]
        picked = handles if key is None else [
            self.client.submit(_pick, h, key, pure=False) for h in handles]
        return self.client.gather(picked)


def _pick(handle: Any, key: str | int) -> Any:
    return getattr(handle, key) if isinstance(key, str) else handle[key]


def _total(sums: list[Any]) -> Any:
    total = sums[0]
    for s in sums[1:]:
        total = total + s
    return total


@dataclass
class DaskEMResult:
    """A fitted EM model on Dask: parameters on the client, posteriors on the workers.

    Attributes
    ----------
    method : str
    priors_, confusions_ (ds, onecoin), skills_ (onecoin), competence_, strategies_ (mace)
        As in the in-memory estimators.
    n_iter_, converged_, log_likelihood_
    posteriors : dask.dataframe.DataFrame
        ``item`` (id), ``p_<label>`` per label, ``label`` (most probable, first on ties);
        one partition per worker group.
    table : dask.dataframe.DataFrame
        ``posteriors`` with ``_gold`` (gold code) and ``_first`` (first-seen position).
    """

    method: str
    params: dict[str, Any]
    n_iter_: int
    converged_: bool
    log_likelihood_: float
    table: Any

    @property
    def posteriors(self) -> Any:
        return self.table.drop(columns=["_gold", "_first"])

    def __getattr__(self, name: str) -> Any:
        params = self.__dict__.get("params", {})
        if name in params:
            return params[name]
        raise AttributeError(name)


def _frame(ex: _Exec, final: list[Any], names: list[str]) -> Any:
    """The per-item table, one partition per group: lazy (computed only when used: the
    annotator scores never need it)."""
    import dask
    import dask.dataframe as dd

    meta = _table(_Pass([], BlockSums(np.zeros(0), np.zeros(0), 0.0)), names, ex.meta)
    if ex.client is None:
        return dd.from_pandas(_table(final[0], names, *ex.items[0]), npartitions=1, sort=False)
    tables = [dask.delayed(_table, pure=False)(f, names, *items)
              for f, items in zip(final, ex.items, strict=True)]
    return dd.from_delayed(tables, meta=meta, verify_meta=False)


def _fit_ds(ex: _Exec, method: str, est: Any, shape: dict[str, int], n_votes: int,
            names: list[str]) -> DaskEMResult:
    """:meth:`annokit.quality.dawid_skene._EMBase._run`, one pass per group and iteration."""
    a = est.smoothing
    starts = ex.gather(ex.map(_start, n_labels=shape["n_labels"]))
    sums = _total([s[0] for s in starts])
    if method == "ds":
        def m_step(s: BlockSums) -> Any:
            return dsm.ds_m_step(s.mass, s.post_sum, smoothing=a, **shape)

        def log_table(params: Any) -> Any:
            return dsm.ds_log_table(params, **shape)

        def log_prior(params: Any) -> float:
            return dsm.ds_log_prior(params, a)
    else:
        per_col = _total([s[1] for s in starts])
        n_per_ann = per_col.reshape(shape["n_annotators"], shape["n_labels"]).sum(axis=1)

        def m_step(s: BlockSums) -> Any:
            return dsm.onecoin_m_step(s.mass, s.post_sum, n_per_ann, smoothing=a, **shape)

        def log_table(params: Any) -> Any:
            return dsm.onecoin_log_table(params, **shape)

        def log_prior(params: Any) -> float:
            return dsm.onecoin_log_prior(params, a)

    def step(params: Any, prev: list[Any]) -> tuple[list[Any], BlockSums]:
        table, log_priors = log_table(params)
        passes = ex.map(_ds_pass, prev, table=table, log_priors=log_priors)
        return passes, _total(ex.gather(passes, "sums"))

    post_entropy = sums.entropy
    params = m_step(sums)
    current, (following, sums) = None, step(params, [None] * len(ex.groups))
    prev = (sums.expected + post_entropy + log_prior(params)) / n_votes
    change, converged, n_iter = np.inf, False, 0
    with progress(total=est.max_iter, desc=f"{method} EM (Dask)", unit="iter") as bar:
        while n_iter < est.max_iter:
            n_iter += 1
            bar.update(1)
            current, post_entropy = following, sums.entropy          # E-step
            params = m_step(sums)                                     # M-step
            following, sums = step(params, current)
            value = (sums.expected + post_entropy + log_prior(params)) / n_votes
            change, prev = value - prev, value
            if abs(change) < est.tol:
                converged = True
                break
    if not converged and est.tol > 0:
        warn_not_converged(type(est).__name__, n_iter, change, est.tol, what="objective")
    if method == "ds":
        named = {"priors_": params[0], "confusions_": params[1]}
    else:
        named = {"priors_": params[0], "skills_": params[1],
                 "confusions_": dsm.onecoin_confusions(params[1], shape["n_labels"])}
    assert current is not None  # max_iter >= 1: one iteration ran
    return DaskEMResult(method, named, n_iter, converged, sums.log_likelihood,
                        _frame(ex, current, names))


def _fit_mace(ex: _Exec, est: Any, shape: dict[str, int], n_votes: int,
              names: list[str]) -> DaskEMResult:
    n_ann, n_labels = shape["n_annotators"], shape["n_labels"]
    model = est.model(n_labels)
    gen = check_rng(est.rng)
    starts = ex.gather(ex.map(_start, n_labels=shape["n_labels"]))
    n_ja = _total([s[1] for s in starts]).reshape(n_ann, n_labels)

    def e_step(params: dict[str, Any]) -> tuple[list[Any], float, dict[str, Any]]:
        passes = ex.map(_mace_pass, log_p=model.log_p(params), log_prior=params["log_prior"])
        sums = _total(ex.gather(passes, "sums"))
        bar.update(1)
        return passes, sums.log_likelihood, model.counts(sums.mass, sums.post_sum, n_ja, params)

    best: dict[str, Any] = {}
    objectives = []
    with progress(total=est.n_restarts * est.max_iter, desc="MACE (Dask)", unit="iter") as bar:
        for restart in range(est.n_restarts):
            if restart == 0 and est.majority_start:
                sums = _total([s[0] for s in starts])
                counts = model.counts(sums.mass, sums.post_sum, n_ja, model.neutral_params(n_ann))
            else:
                counts = e_step(model.random_params(gen, n_ann))[2]
            result = macem.run_restart(model, counts, e_step, est.max_iter, est.tol, n_votes)
            objectives.append(result["objective"])
            if not best or result["objective"] > best["objective"]:
                best = dict(result, restart=restart)
    named = dict(model.summary(best["counts"]), objective_=best["objective"],
                 restart_objectives_=np.asarray(objectives), best_restart_=best["restart"])
    return DaskEMResult("mace", named, best["n_iter"], best["converged"], best["ll"],
                        _frame(ex, best["post"], names))


def _futures(client: Any, collection: Any) -> list[Any]:
    """The futures of a persisted collection's partitions, in order, once computed
    (``to_delayed`` would make new keys: a second copy of every partition); computed when
    the collection is not persisted."""
    from distributed import futures_of, wait

    by_index = {f.key[1]: f for f in futures_of(collection)
                if isinstance(f.key, tuple) and len(f.key) == 2}
    if sorted(by_index) == list(range(collection.npartitions)) and \
            len({f.key[0] for f in by_index.values()}) == 1:
        futures = [by_index[i] for i in range(collection.npartitions)]
    else:
        futures = client.compute(collection.to_delayed())
    with client.as_current():  # (the client need not be the default one)
        wait(futures)  # persisting is asynchronous: where they are is known once they are there
    return futures


def _groups(votes: DaskVotes, shape: dict[str, int], clamp_gold: bool) -> _Exec:
    """The blocks (one task per partition, next to its data: only that partition is held
    while its block is built), grouped by the worker that holds them; in this process, one group
    of every partition."""
    frames, items = votes.frame.to_delayed(), votes.items.to_delayed()
    options: dict[str, Any] = dict(n_labels=shape["n_labels"],
                                   n_annotators=shape["n_annotators"], clamp_gold=clamp_gold)
    client = votes.client
    if client is None:
        import dask

        got = dask.compute(*frames, *items)
        n = len(frames)
        parts = [_block(f, i, **options) for f, i in zip(got[:n], got[n:], strict=True)]
        return _Exec(None, [parts], [list(got[n:])], votes.items._meta)
    fparts, iparts = _futures(client, votes.frame), _futures(client, votes.items)
    where = client.who_has(fparts)
    members: dict[str, list[int]] = {}
    for i, f in enumerate(fparts):
        holders = sorted(where.get(f.key, ())) or [""]
        members.setdefault(holders[0], []).append(i)
    parts = [client.submit(_block, f, i, **options, pure=False)
             for f, i in zip(fparts, iparts, strict=True)]
    order = sorted(members.values(), key=lambda index: index[0])
    return _Exec(client, [[parts[i] for i in index] for index in order],
                 [[iparts[i] for i in index] for index in order], votes.items._meta)


def fit_dask(votes: DaskVotes, method: str = "ds", *, clamp_gold: bool = False,
             rng: np.random.Generator | int | None = None, **options: Any) -> DaskEMResult:
    """Fit Dawid-Skene (``"ds"``), one-coin (``"onecoin"``) or MACE (``"mace"``) on Dask.

    ``options`` are the in-memory estimator's (``max_iter``, ``tol``, ``smoothing``; MACE's
    ``method``, ``n_restarts``, ``alpha``, ``beta``), with the same defaults.

    Examples
    --------
    >>> import dask, pandas as pd
    >>> from annokit.core.votes import Votes
    >>> from annokit.scale.votes import from_votes
    >>> df = pd.DataFrame({"item": list("aaabbbccc"), "annotator": list("xyzxyzxyz"),
    ...                    "label": list("110000111")})
    >>> with dask.config.set(scheduler="synchronous"):
    ...     fit = fit_dask(from_votes(Votes.from_long(df), npartitions=2), "ds")
    ...     post = fit.posteriors.compute().sort_values("item")
    >>> post["label"].tolist(), fit.converged_
    (['1', '0', '1'], True)
    """
    check_option("method", method, METHODS)
    if votes.annotator_ids is None:
        from annokit.errors import SchemaError

        raise SchemaError(f"{method} needs annotator ids; {votes.source} has none")
    est: macem.MACE | dsm.DawidSkene | dsm.OneCoinDawidSkene
    if method == "mace":
        est = macem.MACE(clamp_gold=clamp_gold, rng=rng, **options)
        check_option("method", est.method, ("vb", "em"))
        check_positive_int("n_restarts", est.n_restarts)  # as MACE.fit: one restart at least
    else:
        cls = dsm.DawidSkene if method == "ds" else dsm.OneCoinDawidSkene
        est = cls(clamp_gold=clamp_gold, **options)
        est._check_params()
    shape = {"n_annotators": len(votes.require_annotators(method)), "n_labels": len(votes.labels)}
    names = list(votes.labels.names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 0/0 on partitions without items
        ex = _groups(votes, shape, clamp_gold)
        if method == "mace":
            return _fit_mace(ex, est, shape, votes.n_votes, names)
        return _fit_ds(ex, method, est, shape, votes.n_votes, names)
