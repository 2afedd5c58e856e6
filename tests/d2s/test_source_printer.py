"""`pyct/source_printer.Printer` prints gast nodes as `ast.unparse` prints their `ast` twins,
with the same line span for each statement (the generated code and its line map depend on
both)."""
from __future__ import annotations

import textwrap

import gast

from d2s.pyct import loader
from d2s.pyct.source_printer import Printer, to_ast

SOURCE = textwrap.dedent('''\
    import os
    from a.b import c as d
    @decorate(1)
    def f(a, /, b: int = 1, *args: str, c, d=2, **kw: float) -> "r":
        """A docstring
        of two lines."""
        global g
        x: int
        y: list[int] = [1, 2]
        (z): int = 3
        n = 1 .real + 1.5.imag + x.y
        s = f"{a!r:>{b}} and {c:.3f} {{braces}} {d + 1}"
        t = x[1:2, ::3], x[()], x[1, 2], x[a:b], x[(1, 2)]
        u = lambda p, *q, r=1, **s: p + r
        v = [i for i in range(3) if i], {k: v for k, v in kw.items()}, {*args}
        w = (yield), not a, -b, a if b else c, a < b < c, a and (b or c)
        if a:
            pass
        elif b:
            x = 1
        elif c:
            x = 2
        else:
            x = 3
        for i in range(3):
            continue
        else:
            pass
        while a:
            break
        with open(a) as h, open(b):
            pass
        try:
            raise ValueError("v") from None
        except (ValueError, TypeError) as e:
            del e
        except Exception:
            pass
        else:
            assert a, "message"
        finally:
            return
        match a:
            case [1, *rest]:
                pass
            case {"k": v, **others}:
                pass
            case Point(x=0) | None as p:
                pass
    class C(B, metaclass=M):
        """Doc."""
        async def g(self):
            async with a as b:
                await b
            async for i in b:
                yield i
    ''')


def test_gast_and_its_ast_twin_print_the_same_text_and_statement_spans():
    tree = gast.parse(SOURCE)
    direct, via_ast = Printer(), Printer()
    twin = to_ast(tree)
    text = direct.visit(tree)
    assert text == via_ast.visit(twin)
    ours = list(loader._statements(tree))
    theirs = list(_ast_statements(twin))
    assert len(ours) == len(theirs) > 40
    for g, a in zip(ours, theirs):
        assert direct.spans[id(g)] == via_ast.spans[id(a)], text.split("\n")[
            direct.spans[id(g)][0] - 1]


def _ast_statements(node):
    import ast
    for field in ("body", "handlers", "orelse", "finalbody", "cases"):
        for child in getattr(node, field, None) or []:
            if isinstance(child, ast.stmt):
                yield child
            yield from _ast_statements(child)
