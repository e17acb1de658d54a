"""The Python binding against ratekeeper-core's registry of the algorithms,
as the vector generator writes it (tests/conformance/algorithms.json): every
registered algorithm is a class of the package taking the registry's
parameters, by their names and in their order, and the stubs declare them
with the types of their kinds. (stubtest checks the stubs against the
module; the conformance vectors check what the classes decide.)"""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path
from typing import Any

import ratekeeper
from ratekeeper import _ratekeeper

HERE = Path(__file__).resolve().parent
REGISTRY = HERE.parents[1] / "tests" / "conformance" / "algorithms.json"
STUBS = HERE.parent / "ratekeeper" / "_ratekeeper.pyi"

# How the stubs annotate a parameter of each kind.
ANNOTATIONS = {"count": "int", "rate": "float", "duration": "float | timedelta"}


def registry() -> list[dict[str, Any]]:
    algorithms: list[dict[str, Any]] = json.loads(REGISTRY.read_text())["algorithms"]
    assert algorithms, REGISTRY
    return algorithms


def test_every_registered_algorithm_is_a_class_of_the_package() -> None:
    for algorithm in registry():
        name = algorithm["display_name"]
        cls = getattr(ratekeeper, name, None)
        assert cls is not None, f"ratekeeper has no class {name}"
        assert name in ratekeeper.__all__, name
        assert issubclass(cls, ratekeeper.Limiter), name
        assert issubclass(cls, getattr(_ratekeeper, name)), name
        parameters = list(inspect.signature(cls).parameters.values())
        expected = [p["name"] for p in algorithm["parameters"]]
        assert [p.name for p in parameters] == [*expected, "clock"], name
        assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters[:-1]), name
        # A parameter with a default in the registry may be left out, for it.
        defaults = [p.get("default", inspect.Parameter.empty) for p in algorithm["parameters"]]
        assert [p.default for p in parameters[:-1]] == defaults, name
        assert parameters[-1].kind is inspect.Parameter.KEYWORD_ONLY, name


def test_every_class_of_one_algorithm_is_registered() -> None:
    registered = {a["display_name"] for a in registry()}
    for name in ratekeeper.__all__:
        cls = getattr(ratekeeper, name)
        one_algorithm = (
            isinstance(cls, type)
            and issubclass(cls, ratekeeper.Limiter)
            and cls not in (ratekeeper.Limiter, ratekeeper.CompositeLimiter)
        )
        assert not one_algorithm or name in registered, f"{name} is not in {REGISTRY.name}"


def test_the_stubs_declare_the_registrys_parameters() -> None:
    classes = {
        node.name: node
        for node in ast.parse(STUBS.read_text()).body
        if isinstance(node, ast.ClassDef)
    }
    for algorithm in registry():
        name = algorithm["display_name"]
        assert name in classes, f"{STUBS.name} has no class {name}"
        new = next(
            (
                f
                for f in classes[name].body
                if isinstance(f, ast.FunctionDef) and f.name == "__new__"
            ),
            None,
        )
        assert new is not None, f"{name} has no __new__ in {STUBS.name}"
        declared = [
            (a.arg, ast.unparse(a.annotation) if a.annotation else None) for a in new.args.args[1:]
        ]
        expected = [(p["name"], ANNOTATIONS[p["kind"]]) for p in algorithm["parameters"]]
        assert declared == expected, name
        defaults = [str(p["default"]) for p in algorithm["parameters"] if "default" in p]
        assert [ast.unparse(d) for d in new.args.defaults] == defaults, name
        assert [a.arg for a in new.args.kwonlyargs] == ["clock"], name
