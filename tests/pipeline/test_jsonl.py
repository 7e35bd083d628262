import json

from pipeline.jsonl import (
    document_from_json,
    label_from_json,
    prediction_from_json,
    prediction_to_json,
    read_jsonl,
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


def test_prediction_round_trips_and_keeps_extra_keys():
    raw = {
        "id": "p1",
        "document_id": "d1",
        "model": "m",
        "type": "HearingDate",
        "value": {"yyyy": "2012"},
        "context": "hearing 2012",
        "kind": "exact",
    }
    p = prediction_from_json(raw)
    assert p.extra == {"kind": "exact"}
    assert prediction_to_json(p) == raw


def test_label_must_be_safe_or_unsafe(tmp_path):
    path = write(
        tmp_path / "l.jsonl",
        [
            b'{"prediction_id": "p", "label": "maybe"}',
            b'{"prediction_id": "q", "label": "safe"}',
        ],
    )
    report = read_jsonl(path, label_from_json)
    assert [lab.prediction_id for lab in report.records] == ["q"]
    assert "'safe' or 'unsafe'" in str(report.errors[0])


def test_prediction_without_value_key_is_an_error_but_null_is_fine():
    import pytest

    with pytest.raises(ValueError, match="value"):
        prediction_from_json(
            {"id": "p", "document_id": "d", "type": "T", "context": ""}
        )
    p = prediction_from_json(
        {"id": "p", "document_id": "d", "type": "T", "value": None, "context": None}
    )
    assert p.value is None and p.context == ""
