"""Dawid-Skene, one-coin Dawid-Skene and MACE as map-reduce EM on Dask.

The votes are already shuffled so that an item's votes share a partition
(:class:`~annokit.scale.votes.DaskVotes`). Each partition keeps, on its worker, its
vote matrix (items x annotator-label, sparse) and its items' posteriors; an iteration
sends the parameters to every partition, which computes its E-step (posteriors from the
parameters) and returns the sufficient statistics of the next M-step (the expected
annotator-label counts ``X.T @ post``, the class totals) and its terms of the objective;
a tree reduction adds them and the client does the M-step. The formulas are the
in-memory estimators' own (:mod:`annokit.quality.dawid_skene`, :mod:`annokit.quality.mace`),
with the same initialisation, smoothing, gold clamping, objective and stopping rule, so
posteriors and parameters equal the in-memory ones to about 1e-12 (sums over partitions
are added in another order) whatever the partitioning. MACE draws its restarts' initial
parameters on the client from the same ``rng`` stream as in memory.
"""

from __future__ import annotations

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
from annokit.quality.common import (
    check_positive_int,
    clamp,
    normalize_log,
    warn_not_converged,
)
from annokit.scale.votes import DaskVotes

__all__ = ["DaskEMResult", "fit_dask"]

METHODS = ("ds", "onecoin", "mace")


# -- what runs on the workers ------------------------------------------------------------


def _prep(frame: pd.DataFrame, items: pd.DataFrame, n_labels: int, n_annotators: int,
          clamp_gold: bool) -> dict[str, Any]:
    """One partition's vote matrix, counts and gold, items in key order."""
    keys = items["item"].to_numpy()
    order = np.argsort(keys, kind="stable")
    local = order[np.searchsorted(keys[order], frame["item"].to_numpy())] if len(frame) else \
        np.zeros(0, np.int64)
    n = len(keys)
    cols = frame["annotator"].to_numpy().astype(np.int64) * n_labels \
        + frame["label"].to_numpy().astype(np.int64)
    x = sparse.csr_matrix((np.ones(len(frame)), (local, cols)),
                          shape=(n, n_annotators * n_labels))
    counts = np.bincount(local * n_labels + frame["label"].to_numpy().astype(np.int64),
                         minlength=n * n_labels).reshape(n, n_labels).astype(np.float64)
    gold = items["gold"].to_numpy().astype(np.int64) if clamp_gold else np.full(n, -1, np.int64)
    return {"x": x, "xt": x.T, "counts": counts, "gold": gold,
            "item_id": items["item_id"].to_numpy(dtype=object), "n_votes": len(frame)}


def _annotator_counts(prep: dict[str, Any]) -> np.ndarray:
    return np.asarray(prep["x"].sum(axis=0)).ravel()


def _init_post(prep: dict[str, Any]) -> np.ndarray:
    counts = prep["counts"]
    with np.errstate(invalid="ignore"):
        return clamp(counts / counts.sum(axis=1, keepdims=True), prep["gold"])


def _suff(prep: dict[str, Any], post: np.ndarray) -> dict[str, Any]:
    return {"mass": np.asarray(prep["xt"] @ post), "post_sum": post.sum(axis=0)}


def _log_joint(method: str, x: Any, params: Any, shape: dict[str, int]) -> np.ndarray:
    if method == "ds":
        return dsm.ds_log_joint(x, params, **shape)
    return dsm.onecoin_log_joint(x, params, **shape)


def _em_step(prep: dict[str, Any], post: np.ndarray, params: Any, method: str,
             shape: dict[str, int]) -> dict[str, Any]:
    """From (post_{t-1}, params_{t-1}): the objective terms of iteration t-1, the
    log-likelihood at params_{t-1}, post_t and the statistics of the M-step of t."""
    joint = _log_joint(method, prep["x"], params, shape)
    expected, ent = dsm.objective_terms(post, joint)
    new, log_norm = normalize_log(joint)
    new = clamp(new, prep["gold"])
    small = {"expected": expected, "entropy": ent, "ll": float(log_norm.sum()),
             **_suff(prep, new)}
    return {"post": new, "small": small}


def _mace_e_step(prep: dict[str, Any], log_p: np.ndarray,
                 log_prior: np.ndarray) -> dict[str, Any]:
    """MACE's E-step on one partition: posteriors (kept) and the reduced quantities."""
    post, ll = macem.mace_e_step(prep["x"], log_p, log_prior, prep["gold"])
    return {"post": post, "small": {"ll": ll, **_suff(prep, post)}}


def _pick(d: dict[str, Any], key: str) -> Any:
    return d[key]


def _add(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {k: a[k] + b[k] for k in a}


def _same(value: Any) -> Any:
    return value


def _frame(prep: dict[str, Any], post: np.ndarray, names: list[str]) -> pd.DataFrame:
    df = pd.DataFrame({"item": prep["item_id"]})
    for j, name in enumerate(names):
        df[f"p_{name}"] = post[:, j] if len(post) else np.zeros(0)
    df["label"] = np.asarray(names, dtype=object)[post.argmax(axis=1)] if len(post) else \
        np.zeros(0, dtype=object)
    return df


# -- the client's loop -------------------------------------------------------------------


class _Exec:
    """Run functions on the cluster (futures stay on the workers) or in this process."""

    def __init__(self, client: Any):
        self.client = client

    def map(self, fn: Any, *lists: Any, **kwargs: Any) -> list[Any]:
        if self.client is None:
            return [fn(*args, **kwargs) for args in zip(*lists, strict=True)]
        return [self.client.submit(fn, *args, **kwargs, pure=False)
                for args in zip(*lists, strict=True)]

    def scatter(self, value: Any) -> Any:
        """``value`` on the cluster as the result of a task, not as scattered data: when a
        worker is lost, the scheduler recomputes its partitions' posteriors from the graph,
        back through every iteration, each of which needs its parameters. Scattered data
        has no recipe: once released it is forgotten, and with it every task that depends
        on it (the run failed with "FutureCancelledError: ... already forgotten")."""
        if self.client is None:
            return value
        with warnings.catch_warnings():  # the parameters travel once per iteration either way
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            return self.client.submit(_same, value, pure=False)

    def reduce(self, handles: list[Any]) -> Any:
        """Elementwise sum of dicts of arrays, as a tree."""
        while len(handles) > 1:
            pairs = [handles[i:i + 2] for i in range(0, len(handles), 2)]
            handles = [p[0] if len(p) == 1 else
                       (_add(*p) if self.client is None else
                        self.client.submit(_add, *p, pure=False)) for p in pairs]
        return handles[0] if self.client is None else self.client.gather(handles[0])

    def pick(self, handles: list[Any], key: str) -> list[Any]:
        return self.map(_pick, handles, [key] * len(handles))


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
        ``item`` (id), ``p_<label>`` per label, ``label`` (most probable, first on ties).
    """

    method: str
    params: dict[str, Any]
    n_iter_: int
    converged_: bool
    log_likelihood_: float
    posteriors: Any

    def __getattr__(self, name: str) -> Any:
        params = self.__dict__.get("params", {})
        if name in params:
            return params[name]
        raise AttributeError(name)


def _posteriors(ex: _Exec, prep: list[Any], post: list[Any], names: list[str]) -> Any:
    import dask.dataframe as dd

    meta = _frame({"item_id": np.zeros(0, dtype=object)}, np.zeros((0, len(names))), names)
    parts = ex.map(_frame, prep, post, names=names)
    if ex.client is None:  # one partition per votes partition, in the same order
        return dd.from_map(lambda i: parts[i], range(len(parts)), meta=meta,
                           enforce_metadata=False) if parts else dd.from_pandas(meta, 1)
    return dd.from_delayed(parts, meta=meta, verify_meta=False)


def _fit_ds(ex: _Exec, prep: list[Any], method: str, est: Any, shape: dict[str, int],
            n_votes: int, names: list[str]) -> DaskEMResult:
    a = est.smoothing
    n_per_ann = None
    if method == "onecoin":
        per_col = ex.reduce(ex.map(lambda p: {"c": _annotator_counts(p)}, prep))["c"]
        n_per_ann = per_col.reshape(shape["n_annotators"], shape["n_labels"]).sum(axis=1)

    def m_step(small: dict[str, Any]) -> Any:
        if method == "ds":
            return dsm.ds_m_step(small["mass"], small["post_sum"], smoothing=a, **shape)
        return dsm.onecoin_m_step(small["mass"], small["post_sum"], n_per_ann, smoothing=a,
                                  **shape)

    log_prior = (lambda p: dsm.ds_log_prior(p, a)) if method == "ds" else \
        (lambda p: dsm.onecoin_log_prior(p, a))
    post = ex.map(_init_post, prep)
    params = m_step(ex.reduce(ex.map(_suff, prep, post)))
    prev, change, converged, n_iter = None, np.inf, False, 0
    with progress(total=est.max_iter, desc=f"{method} EM (Dask)", unit="iter") as bar:
        for step in range(1, est.max_iter + 2):
            out = ex.map(_em_step, prep, post, method=method, params=ex.scatter(params),
                         shape=shape)
            small = ex.reduce(ex.pick(out, "small"))
            value = (small["expected"] + small["entropy"] + log_prior(params)) / n_votes
            n_iter = step - 1
            if n_iter >= 1:
                change, prev = value - prev, value
                bar.update(1)
                if abs(change) < est.tol:
                    converged = True
                    break
                if n_iter == est.max_iter:
                    break
            else:
                prev = value
            post = ex.pick(out, "post")
            params = m_step(small)
    if not converged and est.tol > 0:
        warn_not_converged(type(est).__name__, n_iter, change, est.tol, what="objective")
    if method == "ds":
        named = {"priors_": params[0], "confusions_": params[1]}
    else:
        named = {"priors_": params[0], "skills_": params[1],
                 "confusions_": dsm.onecoin_confusions(params[1], shape["n_labels"])}
    return DaskEMResult(method, named, n_iter, converged, small["ll"],
                        _posteriors(ex, prep, post, names))


def _fit_mace(ex: _Exec, prep: list[Any], est: Any, shape: dict[str, int], n_votes: int,
              names: list[str]) -> DaskEMResult:
    n_ann, n_labels = shape["n_annotators"], shape["n_labels"]
    model = est.model(n_labels)
    gen = check_rng(est.rng)
    n_ja = ex.reduce(ex.map(lambda p: {"c": _annotator_counts(p)}, prep))["c"].reshape(
        n_ann, n_labels)

    def e_step(params: dict[str, Any]) -> tuple[list[Any], float, dict[str, Any]]:
        out = ex.map(_mace_e_step, prep, log_p=ex.scatter(model.log_p(params)),
                     log_prior=params["log_prior"])
        small = ex.reduce(ex.pick(out, "small"))
        bar.update(1)
        return (ex.pick(out, "post"), small["ll"],
                model.counts(small["mass"], small["post_sum"], n_ja, params))

    best: dict[str, Any] = {}
    objectives = []
    with progress(total=est.n_restarts * est.max_iter, desc="MACE (Dask)", unit="iter") as bar:
        for restart in range(est.n_restarts):
            if restart == 0 and est.majority_start:
                small = ex.reduce(ex.map(_suff, prep, ex.map(_init_post, prep)))
                counts = model.counts(small["mass"], small["post_sum"], n_ja,
                                      model.neutral_params(n_ann))
            else:
                counts = e_step(model.random_params(gen, n_ann))[2]
            result = macem.run_restart(model, counts, e_step, est.max_iter, est.tol, n_votes)
            objectives.append(result["objective"])
            if not best or result["objective"] > best["objective"]:
                best = dict(result, restart=restart)
    named = dict(model.summary(best["counts"]), objective_=best["objective"],
                 restart_objectives_=np.asarray(objectives), best_restart_=best["restart"])
    return DaskEMResult("mace", named, best["n_iter"], best["converged"], best["ll"],
                        _posteriors(ex, prep, best["post"], names))


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
    ex = _Exec(votes.client)
    shape = {"n_annotators": len(votes.require_annotators(method)), "n_labels": len(votes.labels)}
    frames, items = votes.frame.to_delayed(), votes.items.to_delayed()
    if ex.client is None:
        import dask

        parts = dask.compute(*[dask.delayed(_prep)(f, i, shape["n_labels"],
                                                   shape["n_annotators"], clamp_gold)
                               for f, i in zip(frames, items, strict=True)])
        prep = list(parts)
    else:
        fparts = ex.client.compute(frames)
        iparts = ex.client.compute(items)
        prep = ex.map(_prep, fparts, iparts, n_labels=shape["n_labels"],
                      n_annotators=shape["n_annotators"], clamp_gold=clamp_gold)
    names = list(votes.labels.names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 0/0 on partitions without items
        if method == "mace":
            return _fit_mace(ex, prep, est, shape, votes.n_votes, names)
        return _fit_ds(ex, prep, method, est, shape, votes.n_votes, names)
