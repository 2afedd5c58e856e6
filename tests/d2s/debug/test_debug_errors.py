"""Errors at the user's line, in each phase (converting, tracing, running), golden-tested.

The messages below are contracts (docs/errors.md quotes them); `<dir>` stands for this
directory and `%t#` for numbered temporaries of the program. Each case keeps the original
exception class: the one eager mode raises.
"""
import ast
import os
import re
import traceback

import dbg_model as m
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import errors
from d2s.operators import UndefinedNameError
from runtime.ops.registry import OpError

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "dbg_model.py")


def x24(sign=1.0):
    return rt.to_tensor(np.full((2, 4), sign, "float32"))


def n(k):
    return rt.to_tensor(np.array(k, "int64"))


# name -> (callable, args, exception class, golden message)
CASES = {
    "shape_error_in_helper": (lambda: m.shape_error_in_helper(x24()), OpError, '''\
runtime.ops.registry.OpError: matmul: x has shape [2, 4] but y has shape [3, 3]; inner dimensions 4 and 3 differ
  In user code:
    File "<dir>/dbg_model.py", line 17, in shape_error_in_helper
      return project(x, w)
    File "<dir>/dbg_model.py", line 10, in project
      y = rt.matmul(x, w)
'''),
    "key_error": (lambda: m.key_error(x24()), KeyError, '''\
KeyError: 'b'
  In user code:
    File "<dir>/dbg_model.py", line 23, in key_error
      return table["b"]
'''),
    "error_in_branch": (lambda: m.error_in_branch(x24()), OpError, '''\
runtime.ops.registry.OpError: reshape: cannot reshape x of shape [2, 4] (8 elements) to [3, -1]
  Raised while d2s traced a branch of the `if` (File "<dir>/dbg_model.py", line 28: if rt.mean(x) > 0:). Both branches of an `if` whose condition is a tensor are built into the program, whichever one these inputs take: make the branch valid for every input, or decide it with a Python value before the `if`.
  In user code:
    File "<dir>/dbg_model.py", line 29, in error_in_branch
      y = rt.reshape(x, [3, -1])
'''),
    "error_in_unrolled_loop": (lambda: m.error_in_unrolled_loop(x24()), OpError, '''\
runtime.ops.registry.OpError: matmul: x has shape [2, 3] but y has shape [4, 3]; inner dimensions 3 and 4 differ
  In user code:
    File "<dir>/dbg_model.py", line 39, in error_in_unrolled_loop
      x = rt.matmul(x, w)
'''),
    "python_error_in_tensor_loop": (lambda: m.python_error_in_tensor_loop(x24(), n(2)),
                                    KeyError, '''\
KeyError: 'y'
  In user code:
    File "<dir>/dbg_model.py", line 48
      x = x + names["y"]
  While running op: raise() {error='KeyError', message='y', at='dbg_model.py:48'}
'''),
    "kernel_error_in_while": (lambda: m.kernel_error_in_while(x24(), n(2)), OpError, '''\
runtime.ops.registry.OpError: reshape: cannot reshape x of shape [2, 4] (8 elements) to [3, -1]
  In user code:
    File "<dir>/dbg_model.py", line 57, in kernel_error_in_while
      x = rt.reshape(x, [3, -1])
  While running op: %t#: f32[3,-1] = reshape(%t#) {shape=(3, -1)}
'''),
    "failed_assert_in_helper": (lambda: m.failed_assert_in_helper(x24(-1.0)), AssertionError,
                                '''\
AssertionError: the mean must be positive
  In user code:
    File "<dir>/dbg_model.py", line 70, in failed_assert_in_helper
      return check_positive(y)
    File "<dir>/dbg_model.py", line 63, in check_positive
      assert rt.mean(x) > 0, "the mean must be positive"
  While running op: assert(%t#, []) {message='the mean must be positive', summarize=20}
'''),
    "generator": (lambda: m.generator(x24()), d2s.ConversionError, '''\
d2s.errors.ConversionError: d2s cannot convert generator: it uses a generator (yield). Move this code into a function decorated with @d2s.not_to_static, or run it eagerly.
  In user code:
    File "<dir>/dbg_model.py", line 75, in generator
      yield x
'''),
    "async_def": (lambda: d2s.to_static(m.coroutine)(x24()), d2s.ConversionError, '''\
d2s.errors.ConversionError: d2s cannot convert coroutine: it uses async def (a coroutine). A converted function runs once, synchronously, to build a program; await the asynchronous work outside it and pass the results in.
  In user code:
    File "<dir>/dbg_model.py", line 78, in coroutine
      async def coroutine(x):
'''),
    "bound_in_one_branch": (lambda: m.bound_in_one_branch(x24()), UndefinedNameError, '''\
d2s.operators.variables.UndefinedNameError: 'y' is bound in only one branch of an if whose condition is a tensor, and is used after it (File "<dir>/dbg_model.py", line 84: if rt.mean(x) > 0:). Bind 'y' before the if, or in the if branch too.
  In user code:
    File "<dir>/dbg_model.py", line 84, in bound_in_one_branch
      if rt.mean(x) > 0:
'''),
    "tensor_as_list_index": (lambda: m.tensor_as_list_index(x24()), d2s.ConversionError, '''\
d2s.errors.ConversionError: a value computed by the converted program indexes a Python container (a list, tuple or dict) whose items are not one kind a program can pick among: its value is known only when the program runs, and a program picks strs (and None), Python numbers of one type or tensors of one dtype and shape, not other objects. Keep the table a tensor and index it with the tensor: `rt.to_tensor(TABLE)[i]` (a dict of numbers keyed 0..n-1: its values as a list), or one table per field of the objects. See docs/errors.md, "A tensor's value used as a Python value".
  In user code:
    File "<dir>/dbg_model.py", line 95, in tensor_as_list_index
      return x * CONFIGS[k]["scale"]
'''),
}


def raised(name):
    fn, cls, _ = CASES[name]
    with pytest.raises(cls) as info:
        fn()
    return info.value


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_message(name):
    e = raised(name)
    assert type(e) is CASES[name][1]  # the original class, not a subclass or a wrapper
    text = "".join(traceback.format_exception_only(e)).replace(HERE, "<dir>")
    assert re.sub(r"%t\d+", "%t#", text) == CASES[name][2]  # temporaries' numbers may vary


# raised by a `raise` op when the program runs (Python's own KeyError in a tensor loop's body
# is raised when, and only when, the body runs, as in eager code): the op's origin names the
# line (golden above), and no Python frame is left to show
RUN_TIME_RAISES = {"python_error_in_tensor_loop"}


@pytest.mark.parametrize("name", sorted(set(CASES) - RUN_TIME_RAISES))
def test_every_frame_is_a_real_user_line(name):
    frames = errors.user_frames(raised(name))
    assert frames
    with open(MODEL) as f:
        lines = f.read().splitlines()
    functions = {n.name: n for n in ast.walk(ast.parse("\n".join(lines)))
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for f in frames:
        assert f.filename == MODEL
        assert lines[f.lineno - 1].strip() == f.source
        fn = functions[f.function]
        assert fn.lineno <= f.lineno <= fn.end_lineno


@pytest.mark.parametrize("name", sorted(CASES))
def test_short_traceback_without_generated_or_internal_frames(name, monkeypatch):
    monkeypatch.delenv(errors.FULL_TRACEBACK_ENV, raising=False)
    e = raised(name)
    shown = "".join(traceback.format_exception(e))
    files = [ln.split('"')[1] for ln in shown.splitlines() if ln.lstrip().startswith("File ")]
    internal = [f for f in files if f != MODEL and not f.endswith(("test_debug_errors.py",
                                                                    "static_function.py"))]
    assert internal == []  # only this test, the raising d2s frame and the user's lines
    assert "The above exception" not in shown
    if len(errors.user_frames(e)) == 1:
        assert len(shown.splitlines()) < 15


def test_shape_error_has_the_class_eager_mode_raises():
    with pytest.raises(OpError) as eager:
        m.shape_error_in_helper.dygraph_function(x24())
    static = raised("shape_error_in_helper")
    assert type(static) is type(eager.value)
    assert str(static) == str(eager.value)


def test_full_traceback_env_keeps_generated_frames_and_the_cause(monkeypatch):
    monkeypatch.setenv(errors.FULL_TRACEBACK_ENV, "1")
    e = raised("shape_error_in_helper")
    shown = "".join(traceback.format_exception(e))
    assert "runtime/program/builder.py" in shown
    assert "y = rt.matmul(x, w)  # dbg_model.py:10" in shown  # the generated line
    run = raised("failed_assert_in_helper")
    assert isinstance(run.__cause__, AssertionError)
    assert "The above exception was the direct cause" in "".join(
        traceback.format_exception(run))


def test_run_time_error_keeps_the_original_for_debugging(monkeypatch):
    monkeypatch.delenv(errors.FULL_TRACEBACK_ENV, raising=False)
    e = raised("kernel_error_in_while")
    assert e.__cause__ is None and e.__d2s_original_cause__ is not None
    assert e.op.type == "reshape"


def test_a_passing_call_still_works_after_a_failing_one():
    x = rt.to_tensor(np.full((3, 4), 1.0, "float32"))
    out = m.kernel_error_in_while(x, n(2))  # 12 elements reshape to [3, 4]
    np.testing.assert_array_equal(out.numpy(), np.ones((3, 4), "float32"))
    with pytest.raises(OpError, match="line 57"):
        m.kernel_error_in_while(x24(), n(1))


def test_run_time_frames_name_the_caller_of_each_op():
    @d2s.to_static
    def first(x):
        return m.check_positive(x)

    @d2s.to_static
    def second(x):
        return m.check_positive(x - 10)

    for fn, x, call in [(first, x24(-1.0), "return m.check_positive(x)"),
                        (second, x24(1.0), "return m.check_positive(x - 10)")]:
        with pytest.raises(AssertionError) as info:
            fn(x)
        frames = errors.user_frames(info.value)
        assert [(f.function, f.source) for f in frames] == [
            (fn.__name__, call), ("check_positive", m_line("assert rt.mean(x) > 0"))]


def test_an_op_built_elsewhere_falls_back_to_its_origin_line(monkeypatch):
    source = m_line("assert rt.mean(x) > 0")
    origin = (MODEL, 63, source)
    inner = errors.UserFrame(MODEL, 63, "check_positive", source)
    via_a = (errors.UserFrame(MODEL, 70, "failed_assert_in_helper", "return check_positive(y)"),
             inner)
    via_b = (errors.UserFrame(MODEL, 99, "other", "check_positive(z)"), inner)
    # (the stacks are kept as their frames' entries, made into user frames when asked for)
    stack_a, stack_a2, stack_b = ("stack a",), ("stack a, by another line",), ("stack b",)
    for stack, frames in [(stack_a, via_a), (stack_a2, via_a), (stack_b, via_b)]:
        monkeypatch.setitem(errors._STACKS, stack, frames)
    monkeypatch.setitem(errors._OP_STACKS, origin, stack_a)  # (one stack: not in a set)
    op = object()  # an op of no block d2s built (a program rewritten by a pass, or loaded)
    assert errors._frames_of_op(op, origin) == list(via_a)  # one way to reach it: all of it
    monkeypatch.setitem(errors._OP_STACKS, origin, {stack_a, stack_a2})
    assert errors._frames_of_op(op, origin) == list(via_a)  # two stacks, the same frames
    monkeypatch.setitem(errors._OP_STACKS, origin, {stack_a, stack_b})
    assert errors._frames_of_op(op, origin) == [inner]  # several: only the line itself


def m_line(start: str) -> str:
    with open(MODEL) as f:
        return next(ln.strip() for ln in f if ln.strip().startswith(start))



def _pick(mode, x, scale):
    if mode == "sum":
        return x.sum() * scale
    elif mode == "attr":
        return x.no_such_attr
    return x


def _pick_in_loop(mode, x, scale):
    for _ in range(2):
        if mode == "loop":
            return x.missing_in_loop
    return x.sum() * scale


@pytest.mark.parametrize("fn, mode, line", [
    (_pick, "attr", "return x.no_such_attr"),  # (the if's tail: `_retval = value`)
    (_pick_in_loop, "loop", "return x.missing_in_loop")])  # (with a return flag)
def test_an_error_in_a_returned_value_names_the_return_line(fn, mode, line):
    static = d2s.to_static(fn)
    np.testing.assert_array_equal(static("sum", x24(), 2.0).numpy(), fn("sum", x24(), 2.0)
                                  .numpy())
    with pytest.raises(AttributeError) as e:
        static(mode, x24(), 2.0)
    shown = "".join(traceback.format_exception(e.value)).split("In user code:")[1]
    assert __file__ in shown and line in shown, shown
