"""Building programs: golden printing, Variable behaviour, feed/fetch errors, run-time errors
at the user's line, parameters shared with eager Tensors."""
import numpy as np
import pytest

import runtime as rt
from runtime import static


def _mlp_program():
    w = rt.Parameter(np.ones((4, 2), "float32"), name="fc.w_0")
    b = rt.Parameter(np.zeros((2,), "float32"), name="fc.b_0")
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 4], "float32")
        h = rt.matmul(x, w, transpose_y=False) + b
        p = rt.sum(h) > 0.0
        out = static.nn.cond(p, lambda: rt.tanh(h), lambda: h * 2.0)
    return main, w, out


GOLDEN = """\
program(%x: f32[-1,4]) {
  param %fc.w_0: f32[4,2]
  param %fc.b_0: f32[2]
  %t0: f32[-1,2] = matmul(%x, %fc.w_0)
  %t1: f32[-1,2] = add(%t0, %fc.b_0)
  %t2: f32[] = sum(%t1) {axis=None, keepdim=False}
  %t3: b1[] = greater_than(%t2, 0.0)
  %t6: f32[-1,2] = cond(%t3) {
    ^true():
      %t4: f32[-1,2] = tanh(%t1)
      yield %t4
    ^false():
      %t5: f32[-1,2] = multiply(%t1, 2.0)
      yield %t5
  }
}"""


def test_golden_print():
    main, _, _ = _mlp_program()
    assert str(main) == GOLDEN


def test_print_with_origin_and_attrs():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2, 3], "float32")
        rt.matmul(x, x, transpose_y=True)
    text = main.to_string(with_origin=True)
    assert "%t0: f32[2,2] = matmul(%x, %x) {transpose_y=True}  # test_program.py:" in text


def test_golden_while():
    main = static.Program()
    with static.program_guard(main):
        n = static.data("n", [], "int64")
        static.nn.while_loop(lambda i: i < n, lambda i: [i + 1], [rt.zeros([], "int64")])
    lines = str(main).splitlines()
    assert lines[0] == "program(%n: i64[]) {"
    assert any(ln.strip().startswith("^cond(%") for ln in lines)
    assert any(ln.strip().startswith("^body(%") for ln in lines)
    assert any("= while(" in ln for ln in lines)


def test_variable_has_no_value():
    with static.program_guard(static.Program()):
        x = static.data("x", [None, 3], "float32")
        with pytest.raises(TypeError, match=r"bool\(\) of static Variable 't0'.*static.nn.cond"):
            bool(x > 0.0)
        with pytest.raises(TypeError, match="first dimension is unknown"):
            len(x)
        n = x.numpy()  # kept in the graph (a view of x), as in Paddle's converted code
        assert type(n) is type(x) and n.shape == tuple(x.shape) and any(v is n for v in x.shares)
        rows = x.tolist()  # (rows the run counts: a tensor array whose items are rows' lists)
        assert type(rows) is type(x) and rows.is_array and rows.shape == [3]
        assert (x + 1.0).shape == [-1, 3] and x.ndim == 2


def test_inplace_update_keeps_old_readers():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float32")
        y = x * 1.0
        old = y * 10.0
        y._inplace_update(y + 5.0)
        new = y * 10.0
    out_old, out_new = static.Executor().run(main, {"x": np.ones(2, "float32")}, [old, new])
    np.testing.assert_allclose(out_old, [10, 10])
    np.testing.assert_allclose(out_new, [60, 60])


def test_parameters_shared_with_eager():
    main, w, out = _mlp_program()
    exe = static.Executor()
    x = np.ones((1, 4), "float32")
    first = exe.run(main, {"x": x}, [out])[0]
    w.set_value(np.full((4, 2), 2.0, "float32"))
    second = exe.run(main, {"x": x}, [out])[0]
    np.testing.assert_allclose(first, np.tanh([[4.0, 4.0]]), rtol=1e-6)
    np.testing.assert_allclose(second, np.tanh([[8.0, 8.0]]), rtol=1e-6)


def test_set_value_in_static_writes_the_tensor():
    w = rt.Parameter(np.ones(3, "float32"), name="w_sv")
    main = static.Program()
    with static.program_guard(main):
        w.set_value(w * 2.0)
        y = w + 1.0  # reads the new value
    y1, = static.Executor().run(main, fetch_list=[y])
    np.testing.assert_allclose(w.numpy(), [2, 2, 2])
    np.testing.assert_allclose(y1, [3, 3, 3])
    static.Executor().run(main)
    np.testing.assert_allclose(w.numpy(), [4, 4, 4])


@pytest.mark.parametrize("feed,msg", [
    ({}, r"missing feed 'x'.*f32\[-1,4\]"),
    ({"x": np.ones((2, 5), "float32")}, r"feed 'x': expected f32\[-1,4\].*shape \[2, 5\]"),
    ({"x": np.ones((2, 4), "float64")}, r"feed 'x': expected f32\[-1,4\].*float64"),
    ({"x": np.ones((2, 4), "float32"), "z": 1}, r"feed 'z' is not a data variable"),
])
def test_bad_feeds(feed, msg):
    main, _, out = _mlp_program()
    with pytest.raises(static.FeedError, match=msg):
        static.Executor().run(main, feed, [out])


def test_bad_fetches():
    main, _, _ = _mlp_program()
    feed = {"x": np.ones((2, 4), "float32")}
    with pytest.raises(static.FetchError, match="fetch 'nope': no variable"):
        static.Executor().run(main, feed, ["nope"])
    with pytest.raises(static.FetchError, match="inside a cond/while block"):
        static.Executor().run(main, feed, ["t4"])


def test_runtime_error_inside_while_names_op_and_user_line():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 3], "float32")
        w = static.data("w", [None, 3], "float32")
        n = static.data("n", [], "int64")

        def body(i, v):
            return [i + 1, rt.matmul(v, w)]  # USER LINE

        static.nn.while_loop(lambda i, v: i < n, body, [0, x])
    feed = {"x": np.ones((2, 3), "float32"), "w": np.ones((2, 3), "float32")}
    static.Executor().run(main, dict(feed, n=np.int64(0)))  # zero trips: no error
    with pytest.raises(ValueError) as info:
        static.Executor().run(main, dict(feed, n=np.int64(2)))
    text = str(info.value)
    assert "matmul" in text and "# USER LINE" in text and "test_program.py" in text
    assert info.value.origin[0].endswith("test_program.py")


def test_build_errors_name_the_variable():
    with static.program_guard(static.Program()):
        x = static.data("x", [2, 3], "float32")
        with pytest.raises(ValueError, match="inner dimensions 3 and 2 differ"):
            rt.matmul(x, x)
        with pytest.raises(ValueError, match="already exists"):
            static.data("x", [1], "float32")
        inner = []
        static.nn.cond(static.data("p", [], "bool"), lambda: inner.append(x * 2.0) or x,
                       lambda: x)
        with pytest.raises(ValueError, match="not visible here"):
            inner[0] + 1.0


def test_enable_static_and_default_program():
    rt.enable_static()
    try:
        assert not rt.in_dynamic_mode()
        assert isinstance(rt.tanh(rt.ones([2])), static.Variable)
    finally:
        rt.disable_static()
    assert rt.in_dynamic_mode()


def test_runtime_error_in_cond_inside_while_keeps_class():
    main = static.Program()
    with static.program_guard(main):
        n = static.data("n", [], "int64")
        arr = static.create_array("float32", [rt.ones([2])])

        def body(i, v):
            v = static.nn.cond(i > 0, lambda: static.array_read(arr, i + 5),  # BAD READ
                               lambda: static.array_read(arr, i))
            return [i + 1, v]

        static.nn.while_loop(lambda i, v: i < n, body,
                             [rt.zeros([], "int64"), rt.zeros([2], "float32")])
    static.Executor().run(main, {"n": np.int64(1)})  # only the good branch runs
    with pytest.raises(IndexError) as info:
        static.Executor().run(main, {"n": np.int64(2)})
    text = str(info.value)
    assert "list index out of range (index 6; the list has 1 items on this run)" in text
    assert "# BAD READ" in text and "array_read(" in text


def test_verify_catches_malformed_programs():
    from runtime.program.verify import ProgramError
    main, _, _ = _mlp_program()
    main.verify()
    g = main.global_block()
    first = g.ops[0]
    g.ops[0], g.ops[1] = g.ops[1], g.ops[0]  # add now reads the matmul result before it exists
    with pytest.raises(ProgramError, match=r"reads %t0 before it is defined[\s\S]*program\("):
        main.verify()
    g.ops[0], g.ops[1] = g.ops[1], g.ops[0]
    g.var("t1").dtype = rt.float64  # recorded type disagrees with the producer
    with pytest.raises(ProgramError, match=r"%t1 is recorded as f64\[-1,2\] but add produces "
                                           r"f32\[-1,2\]"):
        main.verify()
    g.var("t1").dtype = rt.float32
    cond_op = g.ops[-1]
    cond_op.blocks = (cond_op.blocks[0], 99)
    with pytest.raises(ProgramError, match="refers to block 99"):
        main.verify()
    assert first.type == "matmul"
