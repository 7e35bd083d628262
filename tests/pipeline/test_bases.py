"""Which base ``python -m pipeline train`` starts from when none is named."""

import json

from pipeline.bases import best_base
from pipeline.score import DEFAULT_BASE_MODEL


def model_folder(path):
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (path / "model.safetensors").write_bytes(b"weights")
    (path / "vocab.txt").write_text("[PAD]\n")
    return path


def test_the_best_base_there_is_comes_first(tmp_path):
    starter = model_folder(tmp_path / "starter")
    nli = model_folder(tmp_path / "nli")
    env = {"STARTER_SCORER": str(starter), "NLI_BASE": str(nli), "NLI_MODEL": "hub/x"}
    assert best_base(env) == (str(starter), "the starter scorer")
    env["STARTER_SCORER"] = str(tmp_path / "not-built")
    # A hub NLI model the deployment names beats the one built here.
    assert best_base(env) == ("hub/x", "the NLI model NLI_MODEL names")
    del env["NLI_MODEL"]
    assert best_base(env) == (str(nli), "the entailment base")
    (nli / "model.safetensors").unlink()  # a half-written build is passed over
    base, what = best_base(env)
    assert base == DEFAULT_BASE_MODEL and "knows no entailment" in what
