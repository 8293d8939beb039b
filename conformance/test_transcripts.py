"""Every transcript under `conformance/transcripts/<protocol>/` is one test."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.transcript import play

TRANSCRIPTS = sorted((Path(__file__).parent / "transcripts").glob("*/*.txt"))


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[f"{p.parent.name}/{p.stem}" for p in TRANSCRIPTS])
def test_transcript(path: Path) -> None:
    play(path)
