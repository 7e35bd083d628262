import json
import socket
from pathlib import Path

import pytest

from pipeline.cli import main
from tools.demo_corpus import generate_corpus, write_corpus


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def corpus(tmp_path):
    """The demo corpus's files: the library's commands take them from here."""
    out = tmp_path / "corpus"
    write_corpus(generate_corpus(docs=12, seed=3), out)
    return out


def test_demo_corpus_check_and_evaluate_chain_through_files(corpus, tmp_path, capsys):
    checked = tmp_path / "checked.jsonl"
    status = main(
        [
            "check",
            "--documents", str(corpus / "documents.jsonl"),
            "--claims", str(corpus / "claims.jsonl"),
            "--out", str(checked),
            "--scorer", "none",
        ]
    )  # fmt: skip
    assert status == 0
    rows = read_jsonl(checked)
    assert len(rows) == len(read_jsonl(corpus / "claims.jsonl"))
    first = rows[0]
    assert set(first) >= {"hypothesis", "align", "nli_score", "verdict", "reason"}
    assert first["nli_score"] is None
    hallucinated = [r for r in rows if r["kind"] == "hallucinated_context"]
    assert hallucinated and all(
        r["reason"] == "not_in_document"
        for r in hallucinated
        if r["align"]["score"] < 0.6
    )
    capsys.readouterr()
    assert (
        main(
            [
                "evaluate",
                "--checked",
                str(checked),
                "--labels",
                str(corpus / "labels.jsonl"),
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == len(rows) and {"precision", "recall", "f1", "by_kind"} <= set(
        result
    )
    assert set(result["by_model"]) <= {r["model"] for r in rows}


def test_bad_lines_are_named_by_file_and_line_and_the_rest_is_checked(
    corpus, tmp_path, capsys
):
    claims = (corpus / "claims.jsonl").read_bytes().splitlines()
    broken = tmp_path / "broken.jsonl"
    unknown = json.loads(claims[1])
    unknown["document_id"] = "no-such-doc"
    broken.write_bytes(
        b"\n".join(
            [
                claims[0],
                json.dumps(unknown).encode(),
                b"{oops",
                b"\xff\xfe",
                *claims[4:],
            ]
        )
        + b"\n"
    )
    out = tmp_path / "out.jsonl"
    status = main(
        [
            "check",
            "--documents", str(corpus / "documents.jsonl"),
            "--claims", str(broken),
            "--out", str(out),
            "--scorer", "none",
        ]
    )  # fmt: skip
    assert status == 1
    err = capsys.readouterr().err
    assert f"{broken}:2: unknown document id 'no-such-doc'" in err
    assert f"{broken}:3: invalid JSON" in err
    assert f"{broken}:4: not UTF-8" in err
    assert len(read_jsonl(out)) == len(claims) - 3


STARTER = Path(__file__).resolve().parents[2] / "var" / "scorers" / "starter"


@pytest.mark.skipif(not STARTER.is_dir(), reason="make setup builds the starter")
def test_check_scores_with_the_starter_scorer_unless_told_to_align_only(
    corpus, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("STARTER_SCORER", str(STARTER))
    args = ["check", "--documents", str(corpus / "documents.jsonl"),
            "--claims", str(corpus / "claims.jsonl")]  # fmt: skip
    assert main([*args, "--out", str(tmp_path / "scored.jsonl")]) == 0
    assert "scorer: the starter scorer" in capsys.readouterr().err
    scored = read_jsonl(tmp_path / "scored.jsonl")
    assert all(r["nli_score"] is not None for r in scored if r["align"]["score"] >= 0.6)
    monkeypatch.setenv("STARTER_SCORER", str(tmp_path / "not-built"))
    assert main([*args, "--out", str(tmp_path / "aligned.jsonl")]) == 0
    assert "alignment only" in capsys.readouterr().err
    assert all(r["nli_score"] is None for r in read_jsonl(tmp_path / "aligned.jsonl"))


def test_missing_input_file_stops_with_a_clear_error(tmp_path, capsys):
    status = main(
        [
            "check",
            "--documents", str(tmp_path / "nope.jsonl"),
            "--claims", str(tmp_path / "nope.jsonl"),
            "--out", str(tmp_path / "o.jsonl"),
        ]
    )  # fmt: skip
    assert status == 2
    assert "nope.jsonl: cannot open" in capsys.readouterr().err


def test_extract_runs_the_real_client_against_an_openai_compatible_server(
    fake_openai, corpus, tmp_path, capsys
):
    documents = read_jsonl(corpus / "documents.jsonl")[:2]
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in documents))
    text = documents[0]["text"]
    fake_openai.reply_json(
        {
            "entities": [
                {"type": "GPE", "value": "Canada", "raw": None, "context": text[:40]}
            ]
        }
    )
    fake_openai.reply_text("not json at all")
    fake_openai.reply_text("still not json")
    out = tmp_path / "pred.jsonl"
    status = main(
        [
            "extract",
            "--documents", str(docs),
            "--schema", str(corpus / "schema.json"),
            "--model", "fake-model",
            "--out", str(out),
            "--base-url", fake_openai.base_url,
            "--max-retries", "0",
        ]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert status == 1
    assert f"extraction failed for document {documents[1]['id']!r}" in captured.err
    rows = read_jsonl(out)
    assert [(r["type"], r["value"], r["model"]) for r in rows] == [
        ("GPE", "Canada", "fake-model")
    ]
    assert json.loads(captured.out.splitlines()[-1])["failed"] == 1


def test_extract_with_no_model_server_answering_stops_with_status_2(
    corpus, tmp_path, capsys
):
    """Nothing extracted is not "some skipped": the run stops with 2 and
    says where it looked for a model server."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        base_url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    out = tmp_path / "pred.jsonl"
    status = main(
        [
            "extract",
            "--documents", str(corpus / "documents.jsonl"),
            "--schema", str(corpus / "schema.json"),
            "--model", "llama3.1",
            "--out", str(out),
            "--base-url", base_url,
            "--max-retries", "0",
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2
    assert "extraction failed for every document" in err
    assert f"server answer at {base_url} with model 'llama3.1'" in err


def test_check_can_score_with_an_llm_grader_instead_of_a_cross_encoder(
    fake_openai, corpus, tmp_path
):
    def grade(body):
        # Supports only the judge: every other hypothesis is insufficient.
        supported = "Judge Name:" in body["messages"][-1]["content"]
        return {"reasoning": "r", "label": "SUPPORTS" if supported else "INSUFFICIENT"}

    fake_openai.responder = grade
    out = tmp_path / "graded.jsonl"
    status = main(
        [
            "check",
            "--documents", str(corpus / "documents.jsonl"),
            "--claims", str(corpus / "claims.jsonl"),
            "--out", str(out),
            "--grader", "fake-grader",
            "--base-url", fake_openai.base_url,
        ]
    )  # fmt: skip
    assert status == 0
    aligned = [r for r in read_jsonl(out) if r["reason"] != "not_in_document"]
    assert aligned and len(fake_openai.bodies) == len(aligned)
    for row in aligned:
        judge = row["type"] == "JudgeName"
        assert row["nli_score"] == (1.0 if judge else 0.0)
        assert row["verdict"] == ("safe" if judge else "unsafe")


def test_check_still_takes_the_last_release_s_predictions_option(corpus, tmp_path):
    new, old = tmp_path / "new.jsonl", tmp_path / "old.jsonl"
    for option, out in (("--claims", new), ("--predictions", old)):
        status = main(
            [
                "check",
                "--documents", str(corpus / "documents.jsonl"),
                option, str(corpus / "claims.jsonl"),
                "--out", str(out),
                "--scorer", "none",
            ]
        )  # fmt: skip
        assert status == 0
    assert old.read_text() == new.read_text() != ""
