"""What every reader of an annotation tool's export shares: answers to votes, and the counts.

A tool export holds *answers*: one annotator's response to one item, which may tick several
labels (a multi-choice answer is several votes of one annotator on one item). The readers
(:mod:`annokit.io.toloka`, :mod:`annokit.io.prodigy`, :mod:`annokit.io.argilla`,
:mod:`annokit.io.labelstudio_flat`) turn a file into :class:`Answers` and call
:func:`answers_to_votes`, which applies ``duplicates`` to whole answers (an annotator who
answered an item twice), keeps every label of one answer, and sets the attributes
``read_votes`` reports (``n_duplicate_pairs``, ``n_duplicates_removed``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from annokit.core.labels import LabelSet, scalar_to_str
from annokit.core.votes import DuplicatePolicy, Votes
from annokit.errors import DataFormatError, SchemaError

__all__ = ["Answers", "answers_to_votes", "counted", "label_values"]


@dataclass
class Answers:
    """The answers read from an export, in file order, and what was left out (by reason)."""

    items: list[str] = field(default_factory=list)
    annotators: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    answer: list[int] = field(default_factory=list)  # the answer each vote belongs to
    gold: list[str | None] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)
    n_answers: int = 0
    multi: int = 0  # answers with more than one label

    def add(self, item: str, annotator: str, values: list[str], gold: str | None = None) -> None:
        """One answer: its votes (one per label ticked)."""
        for value in values:
            self.items.append(item)
            self.annotators.append(annotator)
            self.labels.append(value)
            self.answer.append(self.n_answers)
            self.gold.append(gold)
        self.multi += len(values) > 1
        self.n_answers += 1


def label_values(value: Any, where: str) -> list[str]:
    """The label texts of one answer's value: a scalar, or a list of scalars (multi-choice).

    Raises
    ------
    DataFormatError
        A nested value (a span, a ranking, an object), naming ``where``.
    """
    values = value if isinstance(value, list) else [value]
    out = []
    for v in values:
        if isinstance(v, (list, dict)):
            raise DataFormatError(f"{where}: answer {value!r} is not a label or a list of labels "
                                  "(spans, rankings and nested answers are not votes)")
        if v is None or (isinstance(v, str) and v.strip() == ""):
            continue
        out.append(scalar_to_str(v))
    return out


def counted(counts: Counter[str] | dict[str, int]) -> str:
    """``"rejected 2, ignored 1"`` (reasons in the order counted), or ``"none"``."""
    return ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "none"


def answers_to_votes(answers: Answers, *, name: str, labels: LabelSet | Any,
                     duplicates: DuplicatePolicy, nothing: str) -> Votes:
    """Votes from the answers; ``duplicates`` decides between two answers of one annotator on
    one item (``first``/``last`` keep one answer whole, ``keep`` both), the labels of one
    answer are always kept.

    Raises
    ------
    SchemaError
        No votes (``nothing`` says what was read), or an annotator who answered an item twice
        under ``duplicates="error"`` (naming ``--duplicates``).
    """
    if not answers.labels:
        raise SchemaError(f"{name}: no votes: {nothing}")
    long = pd.DataFrame({"item": answers.items, "annotator": answers.annotators,
                         "label": answers.labels, "answer": answers.answer,
                         "gold": answers.gold})
    per_pair = long.groupby(["item", "annotator"], sort=False)["answer"]
    n_answers = per_pair.transform("nunique")
    repeated = n_answers > 1
    n_pairs = int(long.loc[repeated, ["item", "annotator"]].drop_duplicates().shape[0])
    removed = 0
    if n_pairs and duplicates == "error":
        first = long[repeated].iloc[0]
        raise SchemaError(f"{name}: annotator {first['annotator']!r} answered item "
                          f"{first['item']!r} more than once ({n_pairs} such pair(s)); keep "
                          "one answer of each with --duplicates first|last, or all with "
                          "--duplicates keep")
    if labels is None:  # the labels of every answer, whichever answer of a pair is kept
        labels = LabelSet.infer(long["label"])
    if n_pairs and duplicates in ("first", "last"):
        pick = per_pair.transform("min" if duplicates == "first" else "max")
        keep = long["answer"] == pick
        removed = int((~keep).sum())
        long = long[keep.to_numpy()]
    has_gold = long["gold"].notna().any()
    votes = Votes.from_long(long.drop(columns=["answer"] if has_gold else ["answer", "gold"]),
                            labels=labels, gold="gold" if has_gold else None,
                            duplicates="keep", source=name)
    votes.n_duplicate_pairs = n_pairs
    votes.n_duplicates_removed = removed
    return votes
