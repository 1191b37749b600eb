"""One evaluate workflow, two engines (annokit/scale/workflow.py, annokit/scale/evaluate.py):
the options Dask now honours (a fixed temperature, one fitted on dev files with each objective,
``model``) give the in-memory results to 1e-12, and what it cannot honour is refused in one line.

The reference is the in-memory workflow (:func:`annokit.metrics.workflow.evaluate_memory`),
itself the path ``annokit evaluate`` took before the workflow moved out of the CLI.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from _shared import assert_close_documents

dask = pytest.importorskip("dask")
pytest.importorskip("distributed", reason="the Dask engine needs annokit[dask]")

from annokit.core.votes import Votes  # noqa: E402
from annokit.errors import (  # noqa: E402
    AlignmentError,
    DegenerateInputWarning,
    InvalidValueError,
    OptionConflictError,
)
from annokit.metrics.workflow import EvaluateOptions  # noqa: E402
from annokit.scale.evaluate import evaluate_dask  # noqa: E402
from annokit.scale.votes import from_votes  # noqa: E402
from annokit.scale.workflow import dask_refusals, evaluate_files  # noqa: E402

LABELS = ["pos", "neg", "neu"]


_close = assert_close_documents


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Seeded votes (items in a shuffled first-seen order, many tied majorities) and a
    ChaosNLI-style ``{model: {uid: {"uid", "logits"}}}`` file of two models for the test
    items, another for the dev items (overlapping the test items by 10), as model scripts
    write them."""
    root = tmp_path_factory.mktemp("workflow")
    rng = np.random.default_rng(25)
    n = 240
    rows = [(f"q{i}", f"w{a}", LABELS[int(rng.choice(3, p=[0.5, 0.3, 0.2]))])
            for i in rng.permutation(n) for a in rng.choice(12, size=4, replace=False)]
    long = pd.DataFrame(rows, columns=["item", "annotator", "label"])

    def model_file(name, items, seed):
        r = np.random.default_rng(seed)
        doc = {}
        for m, scale in (("sharp", 3.0), ("flat", 0.7)):
            logits = r.normal(size=(len(items), 3)) * scale
            doc[m] = {f"q{i}": {"uid": f"q{i}", "logits": z.tolist()}
                      for i, z in zip(items, logits, strict=True)}
        path = root / name
        path.write_text(json.dumps(doc), encoding="utf-8")
        return path

    test = model_file("test.json", range(100, n), 1)
    dev = model_file("dev.json", range(0, 110), 2)
    return Votes.from_long(long), test, dev


def _doc(result):
    """``result.to_dict()``, the dropped ids as a list: both engines list them in the votes'
    first-seen order (here a permutation of the item numbers, so an order by id or by item
    code would differ)."""
    doc = result.to_dict()
    assert doc["n_dropped_items"] == len(doc["dropped_item_ids"]) > 1
    return doc


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, sorted(str(w.message) for w in caught
                       if not issubclass(w.category, DegenerateInputWarning))


def _both(votes, preds, options, npart=4):
    mem, mem_w = _quiet(evaluate_files, votes, [preds], options=options)
    with dask.config.set(scheduler="synchronous"):
        got, got_w = _quiet(evaluate_files, from_votes(votes, npartitions=npart, client=False),
                            [preds], options=options, engine="dask")
    assert got_w == mem_w
    return mem.result, got.result, mem_w


@pytest.mark.parametrize("extra", [
    pytest.param({"temperature": 2.5}, id="fixed"),
    pytest.param({"temperature": 0.4, "n_boot": 30, "by": "agreement"}, id="fixed-boot-by"),
    pytest.param({"fit": True}, id="fit-nll_majority"),
    pytest.param({"fit": True, "temperature_objective": "nll_soft"}, id="fit-nll_soft"),
    pytest.param({"fit": True, "temperature_objective": "ece_grid", "n_bins": 7},
                 id="fit-ece_grid"),
    pytest.param({"fit": True, "n_boot": 25, "metrics": "all"}, id="fit-boot-all-metrics"),
    pytest.param({"model": "sharp"}, id="model-only"),
])
@pytest.mark.parametrize("model", ["flat", "sharp"])
def test_temperature_and_model_on_dask_equal_memory(files, extra, model):
    votes, test, dev = files
    extra = dict(extra)
    if extra.pop("fit", False):
        extra["fit_temperature_on"] = [dev]
    options = EvaluateOptions(**{"model": model, **extra, "on_missing": "drop",
                                 "pred_labels": LABELS})
    mem, got, caught = _both(votes, test, options)
    _close(_doc(mem), _doc(got))
    assert list(mem.dropped_item_ids) != sorted(mem.dropped_item_ids)  # first-seen, not by id
    assert got.temperature == (None if mem.temperature is None else
                               {**mem.temperature, "value": pytest.approx(
                                   mem.temperature["value"], rel=1e-12)})
    if options.fit_temperature_on:  # dev items 100..109 are evaluated too: warned, counted
        assert mem.temperature["n_overlap_items"] == 10
        assert "10 items used to fit the temperature are also evaluated" in caught
        assert got.temperature["n_fit_items"] == 110
    if options.temperature_mode:
        assert got.metrics["temperature"] == pytest.approx(mem.temperature["value"], rel=1e-12)


def test_fitted_temperature_with_per_item_file(files, tmp_path):
    votes, test, dev = files
    out = {}
    for engine in ("memory", "dask"):
        options = EvaluateOptions(model="sharp", on_missing="drop", fit_temperature_on=[dev],
                                  pred_labels=LABELS, per_item=tmp_path / f"{engine}.csv",
                                  metrics=["ece", "kl"])
        v = votes if engine == "memory" else from_votes(votes, npartitions=3, client=False)
        with dask.config.set(scheduler="synchronous"):
            out[engine] = _quiet(evaluate_files, v, [test], options=options, engine=engine)[0]
    mem = pd.read_csv(tmp_path / "memory.csv", dtype={"item": str})
    got = pd.read_csv(tmp_path / "dask.csv", dtype={"item": str})
    pd.testing.assert_frame_equal(got, mem, check_exact=False, rtol=1e-12, atol=1e-15)


def test_on_a_cluster(files, dask_client):
    votes, test, dev = files
    options = EvaluateOptions(model="flat", on_missing="drop", fit_temperature_on=[dev],
                              pred_labels=LABELS, n_boot=20, temperature_objective="nll_soft")
    mem = _quiet(evaluate_files, votes, [test], options=options)[0].result
    got = _quiet(evaluate_files, from_votes(votes, npartitions=5, client=dask_client), [test],
                 options=options, engine="dask", client=dask_client)[0].result
    _close(_doc(mem), _doc(got))


def test_refused_in_one_line(files):
    votes, test, dev = files
    dv = from_votes(votes, npartitions=2, client=False)
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(OptionConflictError, match=r"^--oracle-temperature runs in memory "
                                                      r"only: its fit reads every evaluated item"):
            evaluate_files(dv, [test], options=EvaluateOptions(oracle_temperature=True,
                                                               model="flat"), engine="dask")
        with pytest.raises(OptionConflictError, match=r"^--ties random runs in memory only"):
            evaluate_dask(dv, test, EvaluateOptions(ties="random", model="flat"))
        with pytest.raises(OptionConflictError, match=r"^multi-label votes take --predictions, "
                                                      r".*not temperatures"):
            evaluate_files(dv, [test], engine="dask", multilabel=True,
                           options=EvaluateOptions(temperature=2.0))
        with pytest.raises(OptionConflictError, match="a temperature applies to one model's "
                                                      "predictions; evaluate the models one at"):
            evaluate_dask(dv, {"a": test, "b": test}, EvaluateOptions(temperature=2.0))
        far = test.parent / "far.json"
        far.write_text(json.dumps({"flat": {"zz": {"uid": "zz", "logits": [0, 1, 2]}}}))
        with pytest.raises(AlignmentError, match=r"--fit-temperature-on: none of the 1 dev "
                                                 r"prediction rows names an item of the votes"):
            evaluate_dask(dv, test, EvaluateOptions(model="flat", on_missing="drop",
                                                    fit_temperature_on=[far]))
    assert dask_refusals(EvaluateOptions()) is None
    assert dask_refusals(EvaluateOptions(), multilabel=True) is None
    assert dask_refusals(EvaluateOptions(), annotator_predictions=True) is None
    assert dask_refusals(EvaluateOptions(by="agreement"), multilabel=True) is not None
    with pytest.raises(InvalidValueError, match="engine must be one of"):
        evaluate_files(votes, [test], engine="spark")


def test_paths_read_by_either_engine(files, tmp_path, dask_client):
    """Votes given as a path: one CSV file in memory, a directory of Parquet partitions on
    Dask (read with the given client), the same numbers."""
    votes, test, dev = files
    frame = votes.to_long()
    frame.to_csv(tmp_path / "votes.csv", index=False)
    (tmp_path / "parts").mkdir()
    for j, idx in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[idx].to_parquet(tmp_path / "parts" / f"p{j}.parquet", index=False)
    options = EvaluateOptions(model="sharp", on_missing="drop", pred_labels=LABELS,
                              temperature=1.3, n_boot=10)
    mem = _quiet(evaluate_files, tmp_path / "votes.csv", [test], options=options,
                 read_options={"format": "long"})[0]
    got = _quiet(evaluate_files, tmp_path / "parts", [test], options=options, engine="dask",
                 client=dask_client)[0]
    assert got.votes.n_votes == mem.votes.n_votes == len(frame)
    _close(_doc(mem.result), _doc(got.result))


def test_items_without_predictions_named_in_the_memory_order(files):
    """The error names the first vote items without a prediction in the votes' first-seen
    order on both engines (Dask named the lowest item codes)."""
    votes, test, _ = files
    options = EvaluateOptions(model="sharp", pred_labels=LABELS)
    messages = []
    for engine in ("memory", "dask"):
        v = votes if engine == "memory" else from_votes(votes, npartitions=4, client=False)
        with dask.config.set(scheduler="synchronous"), \
                pytest.raises(AlignmentError, match="100 of 240 vote items have no prediction") \
                as caught:
            evaluate_files(v, [test], options=options, engine=engine)
        messages.append(str(caught.value))
    first = [i for i in votes.item_ids if int(i[1:]) < 100][:5]
    assert messages[1] == messages[0] and f"e.g. {str(first)[:-1]} and 95 more]" in messages[0]
