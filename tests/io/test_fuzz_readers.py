"""Fuzzing every reader: random bytes, random CSV dialects, random JSON shapes and random Parquet
schemas give a result or an AnnokitError, nothing else.

Bounded (50 examples per test, no deadline) so the suite stays fast in CI.
"""

from __future__ import annotations

import csv
import io
import json
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annokit.errors import AnnokitError
from annokit.io import read_gold, read_votes
from annokit.io.chaosnli import read_chaosnli
from annokit.io.predictions import read_predictions
from annokit.io.tabular import read_long, read_wide

FUZZ = settings(max_examples=50, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

VOTE_READERS = {
    "auto": lambda p: read_votes(p),
    "long": lambda p: read_votes(p, format="long"),
    "wide": lambda p: read_votes(p, format="wide"),
    "chaosnli": lambda p: read_votes(p, format="chaosnli"),
    "missing": lambda p: read_votes(p, missing=["NA", "null"]),
    "no_header": lambda p: read_long(p, no_header=True),
    "read_wide": lambda p: read_wide(p),
    "gold": lambda p: read_gold(p),
    "chaosnli_direct": lambda p: read_chaosnli(p),
    "predictions": lambda p: read_predictions(p),
}


def _all_readers(path, readers=VOTE_READERS):
    """Every reader on ``path``: each returns or raises an AnnokitError."""
    for name, reader in readers.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                reader(path)
            except AnnokitError:
                pass
            except Exception as exc:  # pragma: no cover - what the test hunts for
                raise AssertionError(f"reader {name!r} on {path.name} raised "
                                     f"{type(exc).__name__}: {exc}") from exc


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


_SUFFIXES = [".csv", ".tsv", ".jsonl", ".json", ".parquet", ".txt", ".npy"]


@FUZZ
@given(data=st.binary(max_size=400), suffix=st.sampled_from(_SUFFIXES),
       prefix=st.sampled_from([b"", b"\xef\xbb\xbf", b"item,annotator,label\n", b"PAR1", b"{"]))
def test_random_bytes(fuzz_dir, data, suffix, prefix):
    path = fuzz_dir / f"bytes{suffix}"
    path.write_bytes(prefix + data)
    _all_readers(path)


_CELL = st.one_of(
    st.sampled_from(["", " ", "NA", "nan", "None", "null", "N/A", "x", "y", "1", "1.0", "-0",
                     "007", "=1+1", "\u00e9", "a,b", 'q"uote', "\t", "1e400", "inf", "true"]),
    st.text(max_size=6),
)
_HEADER = st.sampled_from(["item", "annotator", "label", "answer", "worker", "question", "gold",
                           "truth", " item ", "uid", "id", "probs", "prob_a", "prob_b", "x", ""])


@FUZZ
@given(header=st.lists(_HEADER, min_size=1, max_size=5),
       rows=st.lists(st.lists(_CELL, min_size=0, max_size=6), max_size=8),
       delimiter=st.sampled_from([",", "\t", ";", "|"]),
       quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]),
       terminator=st.sampled_from(["\n", "\r\n", "\r"]),
       suffix=st.sampled_from([".csv", ".tsv", ".txt"]),
       bom=st.booleans())
def test_random_csv_dialects(fuzz_dir, header, rows, delimiter, quoting, terminator, suffix, bom):
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, quoting=quoting, lineterminator=terminator)
    writer.writerow(header)
    writer.writerows(rows)
    path = fuzz_dir / f"dialect{suffix}"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + buffer.getvalue().encode("utf-8"))
    _all_readers(path)


_JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                         st.floats(allow_nan=False), st.text(max_size=5),
                         st.sampled_from(["NA", "nan", "e", "n", "c", ""]))
_JSON = st.recursive(_JSON_SCALAR,
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=4) | _HEADER, inner, max_size=4),
                     max_leaves=12)
_KEYS = st.sampled_from(["item", "annotator", "label", "uid", "label_counter", "label_count",
                         "label_dist", "old_label", "entropy", "probs", "logits", "gold", "id"])
_RECORD = st.dictionaries(_KEYS, _JSON, max_size=6)
_COUNTER = st.dictionaries(st.sampled_from(["e", "n", "c", "1", "2", "x"]),
                           st.one_of(st.integers(-3, 2**70), st.floats(), st.text(max_size=2)),
                           max_size=3)


@FUZZ
@given(records=st.lists(st.one_of(_RECORD, _JSON,
                                  st.fixed_dictionaries({"uid": _JSON_SCALAR,
                                                         "label_counter": _COUNTER})),
                        max_size=6),
       suffix=st.sampled_from([".jsonl", ".json", ".ndjson"]),
       as_array=st.booleans())
def test_random_json_shapes(fuzz_dir, records, suffix, as_array):
    if as_array:  # NaN and Infinity literals included: readers must refuse or report them
        text = json.dumps(records)
    else:
        text = "".join(json.dumps(r) + "\n" for r in records)
    path = fuzz_dir / f"shapes{suffix}"
    path.write_text(text, encoding="utf-8")
    _all_readers(path)


_ARROW_TYPES = {
    "string": (pa.string(), st.one_of(st.none(), _CELL)),
    "large_string": (pa.large_string(), st.one_of(st.none(), _CELL)),
    "int64": (pa.int64(), st.one_of(st.none(), st.integers(-2**63, 2**63 - 1))),
    "int8": (pa.int8(), st.one_of(st.none(), st.integers(-128, 127))),
    "float": (pa.float64(), st.one_of(st.none(), st.floats())),
    "bool": (pa.bool_(), st.one_of(st.none(), st.booleans())),
    "binary": (pa.binary(), st.one_of(st.none(), st.binary(max_size=4))),
    "list": (pa.list_(pa.string()), st.one_of(st.none(), st.lists(_CELL, max_size=3))),
    "float_list": (pa.list_(pa.float64()), st.lists(st.floats(0, 1), max_size=3)),
    "struct": (pa.struct([("k", pa.int64())]), st.one_of(st.none(), st.fixed_dictionaries(
        {"k": st.integers(0, 5)}))),
    "null": (pa.null(), st.none()),
    "dictionary": (pa.dictionary(pa.int32(), pa.string()), st.one_of(st.none(), _CELL)),
}


@st.composite
def _parquet_tables(draw):
    n_rows = draw(st.integers(0, 6))
    names = draw(st.lists(_HEADER, min_size=1, max_size=4, unique=True))
    columns = {}
    for name in names:
        kind = draw(st.sampled_from(sorted(_ARROW_TYPES)))
        arrow_type, values = _ARROW_TYPES[kind]
        cells = draw(st.lists(values, min_size=n_rows, max_size=n_rows))
        if kind == "dictionary":
            columns[name] = pa.array(cells, pa.string()).dictionary_encode()
        else:
            columns[name] = pa.array(cells, arrow_type)
    return pa.table(columns)


@FUZZ
@given(table=_parquet_tables(), row_group=st.sampled_from([None, 1, 2]))
def test_random_parquet_schemas(fuzz_dir, table, row_group):
    path = fuzz_dir / "schema.parquet"
    pq.write_table(table, path, row_group_size=row_group)
    _all_readers(path)
