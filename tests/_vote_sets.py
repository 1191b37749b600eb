"""Vote generators shared by the quality tests (importable: pytest's ``pythonpath`` includes tests/)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from annokit.core.votes import LabelSet, Votes


@st.composite
def vote_sets(draw, min_labels=2, max_labels=4):
    """Random votes with annotator ids: every item has at least one vote."""
    n_items = draw(st.integers(1, 10))
    n_ann = draw(st.integers(1, 6))
    n_labels = draw(st.integers(min_labels, max_labels))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    present = rng.random((n_items, n_ann)) < 0.7
    present[np.arange(n_items), rng.integers(0, n_ann, n_items)] = True
    item, ann = np.nonzero(present)
    order = rng.permutation(len(item))          # arbitrary vote order
    item, ann = item[order], ann[order]
    labels = rng.integers(0, n_labels, len(item))
    return Votes(item, labels, item_ids=[f"i{k}" for k in range(n_items)],
                 labels=LabelSet([f"l{k}" for k in range(n_labels)]), annotator_index=ann,
                 annotator_ids=[f"a{k}" for k in range(n_ann)])


def relabel(votes: Votes, perm: np.ndarray) -> Votes:
    """Same votes with label k renamed to position perm[k] (names travel with the codes)."""
    names = np.empty(votes.n_labels, dtype=object)
    names[perm] = np.asarray(votes.labels.names, dtype=object)
    return Votes(votes.item_index, perm[votes.label_index], item_ids=votes.item_ids,
                 labels=LabelSet(list(names)), annotator_index=votes.annotator_index,
                 annotator_ids=votes.annotator_ids,
                 gold=None if votes.gold is None else np.where(votes.gold >= 0,
                                                              perm[np.maximum(votes.gold, 0)], -1))


def synthetic(n_items=300, n_ann=12, n_labels=3, per_item=5, n_spam=2, seed=0):
    """Votes from good annotators (80% accurate) and uniform spammers, with truth."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_labels, n_items)
    ann = np.argsort(rng.random((n_items, n_ann)), axis=1)[:, :per_item].reshape(-1)
    item = np.repeat(np.arange(n_items), per_item)
    right = rng.random(len(item)) < 0.8
    labels = np.where(right, truth[item], rng.integers(0, n_labels, len(item)))
    spam = ann < n_spam
    labels[spam] = rng.integers(0, n_labels, spam.sum())
    votes = Votes(item, labels, item_ids=[f"i{k}" for k in range(n_items)],
                  labels=LabelSet([f"c{k}" for k in range(n_labels)]), annotator_index=ann,
                  annotator_ids=[f"a{k}" for k in range(n_ann)], gold=truth)
    return votes, truth


def synthetic_annotators(n_items=120, n_ann=15, k=3, seed=0, gold=False):
    """Seeded votes of annotators with accuracies in [0.3, 0.95], 1-5 votes per item, gold on
    every fourth item when asked (the Dask engine tests' in-memory reference)."""
    import pandas as pd

    from annokit.core.votes import Votes

    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n_items)
    acc = rng.uniform(0.3, 0.95, n_ann)
    rows = []
    for i in range(n_items):
        for a in rng.choice(n_ann, size=int(rng.integers(1, 6)), replace=False):
            lab = truth[i] if rng.random() < acc[a] else int(rng.integers(0, k))
            g = f"l{truth[i]}" if gold and i % 4 == 0 else None
            rows.append((f"it{i}", f"w{a}", f"l{lab}", g))
    df = pd.DataFrame(rows, columns=["item", "annotator", "label", "gold"])
    return Votes.from_long(df, gold="gold" if gold else None, labels=[f"l{j}" for j in range(k)])
