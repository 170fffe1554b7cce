"""One JSON row per model of ``compare_evaluator.models()``, for the benches that compare
something model by model (``compare_check_with_jax.py``, ``compare_jax_gradient.py``,
``count_guarded_distances.py``)."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable


def model_parser(doc: str) -> argparse.ArgumentParser:
    """A parser of ``--models`` (comma-separated names, or ``all``) and ``--markdown``, described
    by ``doc``'s first line."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--models", required=True,
                        help="comma-separated names of the zoo, its held-out set and the user "
                             "sweep (compare_evaluator.models()), or 'all'")
    parser.add_argument("--markdown", metavar="FILE", help="also write a markdown table here")
    return parser


def chosen_models(parser: argparse.ArgumentParser, spec: str) -> tuple[list[str], dict]:
    """The names ``spec`` asks for (comma-separated, or ``all``) and every model's builder;
    ``parser`` reports an unknown name."""
    from compare_evaluator import models as every_model

    models = every_model()
    names = list(models) if spec == "all" else spec.split(",")
    unknown = [n for n in names if n not in models]
    if unknown:
        parser.error(f"unknown models: {', '.join(unknown)}")
    return names, models


def rows_here(names: list[str], models: dict, compare: Callable[[str, Callable], dict],
              ) -> list[dict]:
    """``compare(name, build)`` for each of ``names`` in this process, each row printed as a
    JSON line as it is found; a model whose comparison raises gets a row saying so."""
    rows = []
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                row = compare(name, models[name])
            except Exception as exc:  # one model's failure is a row, not the end of the run
                row = {"model": name, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main_of(doc: str, compare: Callable[[str, Callable], dict],
            markdown: Callable[[list[dict], str], str]) -> None:
    """A bench's whole command line: ``--models`` and ``--markdown`` parsed (:func:`model_parser`
    of ``doc``), ``compare`` run on each model in this process (:func:`rows_here`), and the
    table ``markdown(rows, command)`` written where ``--markdown`` says."""
    from pathlib import Path

    parser = model_parser(doc)
    args = parser.parse_args()
    names, models = chosen_models(parser, args.models)
    rows = rows_here(names, models, compare)
    if args.markdown:
        command = "JAX_PLATFORMS=cpu PYMC_ACCEL_HISTORY=off python " + " ".join(sys.argv)
        Path(args.markdown).write_text(markdown(rows, command))
