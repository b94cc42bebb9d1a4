"""The everyday-mistakes table (benchmarks/everyday_mistakes.py): its classes can fail, and
every case is answered clearly (the same run the reliability table shows)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from everyday_mistakes import Answer, Case, cases, verdict


def _case(**kw) -> Case:
    return Case("c", lambda tmp: Answer(), ("freq='1d'", "'1D'"), **kw)


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (Answer("freq='1d': pandas spells this unit 'D', not 'd'; pass '1D'"), "clear"),
        (Answer("freq='1d' is wrong\nand a second line '1D'"), "unclear"),  # several lines
        (Answer("", ("FutureWarning: 'd' is deprecated: freq='1d' '1D'",)), "unclear"),
        (Answer("[transactions-mint] {'error': 1} freq='1d' '1D'"), "unclear"),  # a raw dict
        (Answer("bad frequency"), "unclear"),  # names neither the value nor what to pass
        (Answer("", rows=0), "unclear"),  # 0 rows without a word
        (Answer("Traceback (most recent call last):\n  KeyError", unexpected=True), "traceback"),
    ],
)
def test_each_class_can_be_given(answer, kind):
    assert verdict(_case(), answer)[0] == kind


def test_a_case_that_must_work_fails_on_an_error_or_no_rows():
    assert verdict(_case(works=True), Answer("", rows=3))[0] == "clear"
    assert verdict(_case(works=True), Answer("", rows=0))[0] == "unclear"
    assert verdict(_case(works=True), Answer("cctx-research: error: x", status=1))[0] == "unclear"


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("case", cases(), ids=lambda c: c.name)
def test_every_everyday_mistake_is_answered_clearly(case, tmp_path):
    kind, said = verdict(case, case.run(tmp_path))
    assert kind == "clear", said
