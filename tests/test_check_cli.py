"""``verify check``: JSON output against the schema, text output, bad input."""
from __future__ import annotations

import json

import jsonschema
import pytest
from click.testing import CliRunner

from verify.cli import main
from verify.cli.check import load_schema


@pytest.fixture(scope="module")
def all_json():
    res = CliRunner().invoke(main, ["check", "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_check_json_validates_against_schema(all_json):
    jsonschema.validate(all_json, load_schema())
    from lemmas import REGISTRY
    assert [r["id"] for r in all_json] == list(REGISTRY)
    for r in all_json:
        assert r["convention"]["profile"] == "ci"


def test_schema_rejects_a_bad_verdict(all_json):
    bad = [dict(all_json[0], verdict="probably")]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, load_schema())
    bad = [dict(all_json[0], evidence=[{"route": "x", "kind": "guess", "regimes": [], "result": "", "holds": True}])]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, load_schema())


def test_check_text_and_selection():
    res = CliRunner().invoke(main, ["check", "neg-rate-exponential"])
    assert res.exit_code == 0, res.output
    assert "neg-rate-exponential: REFUTED" in res.output and "replay: verify run" in res.output


def test_check_list():
    res = CliRunner().invoke(main, ["check", "--list"])
    assert res.exit_code == 0 and "lemma-C.2" in res.output


@pytest.mark.parametrize("args, name", [(["check", "no-such-claim"], "ID"), (["check", "--profile", "fast"], "profile")])
def test_bad_input(args, name):
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2 and name in res.output
