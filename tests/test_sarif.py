"""SARIF 2.1.0 output validated against the official schema."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import jsonschema
import pytest

from spectrace.contracts.check import check_catalog
from spectrace.contracts.extract import extract
from spectrace.contracts.report import sarif

VENDORED = Path(__file__).resolve().parents[1] / "contracts" / "schemas" / "sarif-schema-2.1.0.json"
URLS = [
    "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/main/sarif-2.1/schema/sarif-schema-2.1.0.json",
    "https://json.schemastore.org/sarif-2.1.0.json",
]


def _schema():
    if VENDORED.is_file():
        return json.loads(VENDORED.read_text())
    for url in URLS:
        try:
            with urllib.request.urlopen(url, timeout=20) as resp:
                return json.loads(resp.read().decode())
        except Exception:
            continue
    pytest.skip("the SARIF 2.1.0 schema is neither vendored nor reachable")


def test_sarif_validates(sglang_source):
    x = extract(sglang_source("0.5.9"))
    doc = sarif(x, check_catalog(x))
    assert doc["version"] == "2.1.0"
    assert doc["runs"][0]["results"], "unconditional reads are reported as notes"
    jsonschema.validate(doc, _schema())
