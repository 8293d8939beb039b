"""`cb-async cnp-schema`: print the JSON Schema of CNP, the Chess Node Protocol.

The schema comes from the CNP adapter's pydantic models, so it always describes the messages
the engine really takes and gives; docs/cnp.schema.json is this command's output.
"""

from __future__ import annotations

import argparse
import sys

from cb_async.adapters.cnp import schema_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No arguments: the schema has one form."""


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(schema_text())
    return 0
