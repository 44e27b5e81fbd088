"""Library kinds, decorators, ownership and cleanup."""

from __future__ import annotations

import pytest

import tensorplug as tp
from fakes import FakeTensor


def test_decorator_forms_with_explicit_library(ns):
    with tp.Library(ns, "FRAGMENT") as lib:
        op = tp.library.define(f"{ns}::double(Tensor x) -> Tensor", lib=lib)
        assert op is getattr(tp.ops, ns).double.default

        @tp.library.impl(f"{ns}::double", "CPU", lib=lib)
        def double_cpu(x):
            return ("cpu", x.tag)

        assert getattr(tp.ops, ns).double(FakeTensor("CPU", tag="t")) == ("cpu", "t")
        assert tp.dispatcher.registrations(f"{ns}::double") == {"CPU": "test_library:test_decorator_forms_with_explicit_library"}
    assert f"{ns}::double.default" not in {o.name for o in tp.dispatcher.all_ops()}


def test_decorator_forms_with_global_libraries(ns):
    tp.library.define(f"{ns}::g", "(Tensor x) -> Tensor")

    @tp.library.impl(f"{ns}::g", "CPU")
    def g_cpu(x):
        return 7

    try:
        assert getattr(tp.ops, ns).g(FakeTensor("CPU")) == 7
    finally:
        for kind in ("IMPL", "FRAGMENT"):
            tp.library._decorator_libraries.pop((ns, kind)).close()
    assert not [o for o in tp.dispatcher.all_ops() if o.namespace == ns]


def test_bad_library_arguments(ns):
    with pytest.raises(tp.RegistrationError, match="kind must be 'DEF', 'IMPL' or 'FRAGMENT'"):
        tp.Library(ns, "DEFINE")
    with pytest.raises(tp.RegistrationError, match="the '_' namespace is for fallbacks"):
        tp.Library("_", "DEF")
    with pytest.raises(tp.RegistrationError, match="needs a qualified name 'ns::op'"):
        tp.library.impl("nonamespace", "CPU")
    lib = tp.Library(ns, "DEF")
    lib.close()
    with pytest.raises(tp.RegistrationError, match=f"Library\\('{ns}', 'DEF'\\) is closed"):
        lib.define("f(Tensor x) -> Tensor")


def test_redefinition_and_namespace_mismatch(ns):
    with tp.Library(ns, "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(tp.RegistrationError, match=f"operator {ns}::f is already defined"):
            lib.define("f(Tensor y) -> Tensor")
        with pytest.raises(tp.RegistrationError, match="names namespace 'other'"):
            lib.define("other::h(Tensor x) -> Tensor")


def test_find_op_errors(ns):
    with pytest.raises(tp.RegistrationError, match=f"No operator named '{ns}::nothing.default' is defined"):
        tp.dispatcher.dispatch_table(f"{ns}::nothing")
    with pytest.raises(tp.RegistrationError, match="operator names are qualified"):
        tp.dispatcher.dispatch_table("unqualified")


def test_calling_removed_operator_handle(ns):
    lib = tp.Library(ns, "DEF")
    op = lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: 1, "CPU")
    lib.close()
    with pytest.raises(tp.RegistrationError, match=f"{ns}::f.default was removed"):
        op(FakeTensor("CPU"))
