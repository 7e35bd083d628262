import json

from pipeline.jsonl import (
    claim_from_json,
    claim_to_json,
    document_from_json,
    label_from_json,
    read_jsonl,
    value_problem,
)


def write(path, lines: list[bytes]):
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_bad_lines_are_reported_by_line_and_good_lines_kept(tmp_path):
    path = write(
        tmp_path / "docs.jsonl",
        [
            json.dumps({"id": "a", "text": "first"}).encode(),
            b"{not json",
            json.dumps({"id": "b", "text": "caf\u00e9"}).encode(),
            b'{"id": "c", "text": "\xff\xfe"}',
            json.dumps({"id": "d", "text": "  "}).encode(),
            json.dumps(["a list"]).encode(),
            json.dumps({"id": "a", "text": "again"}).encode(),
        ],
    )
    report = read_jsonl(path, document_from_json)
    assert [d.id for d in report.records] == ["a", "b"]
    assert report.lines == [1, 3]
    messages = [str(e) for e in report.errors]
    assert [e.line for e in report.errors] == [2, 4, 5, 6, 7]
    assert "invalid JSON" in messages[0] and str(path) in messages[0]
    assert "not UTF-8" in messages[1]
    assert "'text'" in messages[2]
    assert "duplicate id 'a'" in messages[4]


def test_claim_round_trips_and_keeps_extra_keys():
    raw = {
        "id": "p1",
        "document_id": "d1",
        "model": "m",
        "type": "HearingDate",
        "value": {"yyyy": "2012"},
        "context": "hearing 2012",
        "kind": "exact",
    }
    p = claim_from_json(raw)
    assert p.extra == {"kind": "exact"}
    assert claim_to_json(p) == raw


def test_label_must_be_safe_or_unsafe(tmp_path):
    path = write(
        tmp_path / "l.jsonl",
        [
            b'{"claim_id": "p", "label": "maybe"}',
            b'{"claim_id": "q", "label": "safe"}',
        ],
    )
    report = read_jsonl(path, label_from_json)
    assert [lab.claim_id for lab in report.records] == ["q"]
    assert "'safe' or 'unsafe'" in str(report.errors[0])


def test_claim_without_value_key_is_an_error_but_null_is_fine():
    import pytest

    with pytest.raises(ValueError, match="value"):
        claim_from_json({"id": "p", "document_id": "d", "type": "T", "context": ""})
    p = claim_from_json(
        {"id": "p", "document_id": "d", "type": "T", "value": None, "context": None}
    )
    assert p.value is None and p.context == ""


def test_lines_no_store_could_keep_are_reported_not_read(tmp_path):
    path = write(
        tmp_path / "docs.jsonl",
        [
            b'\xef\xbb\xbf{"id": "a", "text": "byte-order mark on line 1"}',
            b'{"id": "b", "text": "x", "metadata": {"n": NaN}}',
            b'{"id": "c", "text": "nul \\u0000"}',
            b'{"id": "d", "text": "half a pair \\ud83d"}',
            b'{"id": "e", "text": "deep", "metadata": {"m": '
            + b"[" * 5000
            + b"]" * 5000
            + b"}}",
            b'{"id": "f", "text": "fine"}',
        ],
    )
    report = read_jsonl(path, document_from_json)
    assert [d.id for d in report.records] == ["a", "f"]
    messages = {e.line: str(e) for e in report.errors}
    assert "NaN is not a JSON number" in messages[2]
    assert "NUL" in messages[3]
    assert "lone surrogate" in messages[4]
    assert "nested deeper" in messages[5]


def test_value_problem_walks_keys_values_and_depth():
    assert value_problem({"a": [1, 2.5, "ok", None, True]}) is None
    assert value_problem({"a\x00": 1}) == "has a key that contains a NUL character"
    assert value_problem([float("inf")]).startswith("contains a number that is not")
    assert value_problem([[[]]], max_depth=2) == "is nested deeper than 2 levels"
    assert value_problem({1: "a"}) == "has a key that is not text"


def test_a_label_line_of_the_last_release_names_its_claim_prediction_id():
    old = label_from_json({"prediction_id": "p", "label": "safe", "by": "ann"})
    assert (old.claim_id, old.extra) == ("p", {"by": "ann"})
    both = label_from_json({"claim_id": "c", "prediction_id": "p", "label": "safe"})
    assert both.claim_id == "c"
