"""crowd-kit's toy YSDA fixture (Toloka/crowd-kit, tests/conftest.py, ``toy_answers_df`` and
``toy_ground_truth_df``), as annokit votes."""

from __future__ import annotations

import pandas as pd

from annokit.core.votes import Votes

#: (annotator, item, label) rows of crowd-kit's toy YSDA data set
TOY_YSDA = [
    ("w1", "t1", "no"), ("w1", "t2", "yes"), ("w1", "t3", "yes"), ("w1", "t4", "yes"),
    ("w1", "t5", "yes"), ("w2", "t1", "yes"), ("w2", "t2", "yes"), ("w2", "t3", "no"),
    ("w2", "t4", "yes"), ("w2", "t5", "no"), ("w3", "t2", "yes"), ("w3", "t3", "no"),
    ("w3", "t4", "yes"), ("w3", "t5", "no"), ("w4", "t1", "yes"), ("w4", "t2", "no"),
    ("w4", "t3", "yes"), ("w4", "t4", "yes"), ("w4", "t5", "no"), ("w5", "t1", "no"),
    ("w5", "t2", "no"), ("w5", "t3", "no"), ("w5", "t4", "yes"), ("w5", "t5", "no"),
]
TOY_YSDA_TRUTH = {"t1": "yes", "t2": "yes", "t3": "no", "t4": "yes", "t5": "no"}


def toy_ysda() -> Votes:
    df = pd.DataFrame(TOY_YSDA, columns=["annotator", "item", "label"])
    return Votes.from_long(df, labels=["no", "yes"])
