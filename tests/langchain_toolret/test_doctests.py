"""The examples in langchain_toolret's docstrings are documentation: they must run."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import langchain_toolret

MODULES = sorted(name for _, name, _ in pkgutil.walk_packages(langchain_toolret.__path__, prefix="langchain_toolret."))


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_run(module_name):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {module_name}"
