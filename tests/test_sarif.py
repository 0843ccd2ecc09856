"""SARIF 2.1.0 output validated against the official schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema

from spectrace.contracts.check import check_catalog
from spectrace.contracts.extract import extract
from spectrace.contracts.report import sarif
from spectrace.source import from_path

SCHEMA = Path(__file__).resolve().parents[1] / "contracts" / "schemas" / "sarif-schema-2.1.0.json"


def _schema():
    return json.loads(SCHEMA.read_text())


def test_sarif_validates(sglang_source):
    x = extract(sglang_source("0.5.9"))
    doc = sarif(x, check_catalog(x))
    assert doc["version"] == "2.1.0"
    assert doc["runs"][0]["results"], "unconditional reads are reported as notes"
    jsonschema.validate(doc, _schema())


def test_sarif_has_what_github_code_scanning_needs(sglang_source):
    """GitHub rejects uploads without a driver name, rule ids, and file locations with a start line."""
    x = extract(sglang_source("0.5.9"))
    doc = sarif(x, check_catalog(x))
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "spectrace"
    rule_ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    for result in run["results"]:
        assert result["ruleId"] in rule_ids
        loc = result["locations"][0]["physicalLocation"]
        assert not loc["artifactLocation"]["uri"].startswith("/")
        assert loc["region"]["startLine"] >= 1
    seeds = [r for r in run["results"] if r["locations"][0]["physicalLocation"]["region"]["startLine"] in (2347, 2357)
             and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("sglang/srt/managers/scheduler.py")]
    assert len(seeds) == 2


def test_sarif_driver_version(sglang_source):
    from spectrace import __version__

    x = extract(sglang_source("0.5.9"))
    driver = sarif(x, check_catalog(x))["runs"][0]["tool"]["driver"]
    assert driver["version"] == __version__
    assert driver["semanticVersion"] == __version__


def test_sarif_paths_relative_to_git_checkout(sglang_copy, tmp_path):
    """A tree under a git checkout's python/ is reported as python/sglang/..., based at the checkout."""
    copy = sglang_copy("0.5.9", subdirs=("sglang/srt/managers",))
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.move(str(copy), str(repo / "python"))
    x = extract(from_path(repo / "python"), use_cache=False)
    doc = sarif(x, check_catalog(x))
    run = doc["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in run["results"] for loc in r["locations"] + r.get("relatedLocations", [])]
    assert uris
    assert all(u.startswith("python/sglang/") for u in uris), uris[:5]
    assert "python/sglang/srt/managers/scheduler.py" in uris
    jsonschema.validate(doc, _schema())


def test_sarif_paths_outside_git_stay_relative_to_python_root(sglang_copy):
    copy = sglang_copy("0.5.9", subdirs=("sglang/srt/managers",))
    x = extract(from_path(copy), use_cache=False)
    run = sarif(x)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == copy.resolve().as_uri() + "/"
    assert all(loc["physicalLocation"]["artifactLocation"]["uri"].startswith("sglang/")
               for r in run["results"] for loc in r["locations"])
