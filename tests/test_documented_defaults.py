"""Every default a public docstring states equals the signature's (``align``'s ``ties``
once was documented as "report" while it defaulted to "first")."""

from __future__ import annotations

import ast
import importlib
import inspect
import math
import pkgutil
import re

import annokit

#: ``name : type, default=VALUE`` (numpydoc), VALUE up to the end of the line.
_DOCUMENTED = re.compile(r"^\s{0,8}(\w+)\s*:\s*[^\n]*?default\s*=\s*([^\n]+?)\s*$", re.M)
#: Names docstrings use for a value.
_NAMES = {"e": math.e, "None": None, "True": True, "False": False}


def _public() -> list[tuple[str, object]]:
    """Public functions, classes and their public methods of every annokit module (not the
    CLI, whose defaults click shows)."""
    names = ["annokit"] + [m.name for m in pkgutil.walk_packages(annokit.__path__, "annokit.")
                           if not m.name.rsplit(".", 1)[-1].startswith("_")
                           and not m.name.startswith(("annokit.cli", "annokit.scale"))]
    seen: set[int] = set()
    out = []
    for module_name in names:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            found = [(f"{module_name}.{name}", obj)]
            if inspect.isclass(obj):
                found += [(f"{module_name}.{name}.{k}", v) for k, v in vars(obj).items()
                          if not k.startswith("_") and inspect.isfunction(v)]
            for label, target in found:
                if callable(target) and id(target) not in seen:
                    seen.add(id(target))
                    out.append((label, target))
    return out


def _value(text: str, target: object) -> object:
    """The documented value: a literal, or a name of the target's module (``DEFAULT_TIES``)."""
    text = text.split(" (")[0].split(";")[0].rstrip(".,")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    if text in _NAMES:
        return _NAMES[text]
    func = target.__init__ if inspect.isclass(target) else target
    module = inspect.getmodule(func)
    if hasattr(module, text):
        return getattr(module, text)
    return _UNREAD


_UNREAD = object()


def test_documented_defaults_equal_the_signatures():
    wrong, read = [], 0
    for label, target in _public():
        try:
            params = inspect.signature(target).parameters
        except (TypeError, ValueError):
            continue
        for name, text in _DOCUMENTED.findall(inspect.getdoc(target) or ""):
            if name not in params or params[name].default is inspect.Parameter.empty:
                continue
            value = _value(text, target)
            if value is _UNREAD:
                continue  # prose ("the votes' labels"): not a value to compare
            read += 1
            if value != params[name].default:
                wrong.append(f"{label}({name}=): documented {text!r}, signature "
                             f"{params[name].default!r}")
    assert read > 50  # the pattern still reads the docstrings
    assert not wrong, "\n".join(wrong)
