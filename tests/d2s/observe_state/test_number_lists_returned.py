"""A list of Python numbers whose length a tensor decides (grown in a graph loop, or in one
branch of a tensor `if`) is a tensor array inside the program; what the call gives back is
what eager code gives: a list of Python numbers of eager's type and value (floats exactly,
not rounded to float32), and its items (`nums[-1]`, iteration) Python numbers too, also
inside tuples and dicts and on an argument object."""
import numpy as np
import pytest

import d2s
import runtime as rt


def thirds_while(x, step):
    nums = []
    i = rt.zeros([], "int64")
    while i < x.sum():
        nums.append(step)
        i += 1
    return nums


def scaled_indices(x):
    nums = []
    for i in range(rt.cast(x.sum(), "int64")):
        nums.append(0.1 * (i + 1))
    return nums, {"count": len(nums), "first": nums[0] if len(nums) > 0 else -1.0}


def flags_by_branch(x):
    flags = []
    if x.mean() > 0:
        flags.append(True)
        flags.append(False)
    return flags, flags[-1] if len(flags) > 0 else True


def last_and_copied(x):
    nums = [0.1]
    i = rt.zeros([], "int64")
    while i < x.sum():
        nums.append(float(x[0]) * 0.3)
        i += 1
    copied = []
    for v in nums:
        copied.append(v)  # noqa: PERF402  (iteration of the array is what is tested)
    return nums[-1], nums[0], copied


class Box:
    pass


def last_on_a_box(x, box):
    nums = []
    for i in range(rt.cast(x.sum(), "int64")):
        nums.append(i * 2)
    box.last = nums[-1] if len(nums) > 0 else -1
    return x * 2


def same_leaves(got, want):
    """Equal structure, types and values (floats exactly)."""
    assert type(got) is type(want), (got, want)
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same_leaves(g, w)
    elif isinstance(want, dict):
        assert got.keys() == want.keys()
        for k in want:
            same_leaves(got[k], want[k])
    else:
        assert got == want, (got, want)


# sums of 3, 0 and 2 trips: one program takes all of them
INPUTS = [[1.0, 2.0], [0.0, 0.0], [2.0, 0.0]]


@pytest.mark.parametrize("step", [0.1, 7, True])
def test_a_list_grown_in_a_tensor_while_comes_back_as_numbers(step):
    static = d2s.to_static(thirds_while)
    for data in INPUTS:
        want = [step] * int(sum(data))
        same_leaves(thirds_while(rt.to_tensor(data), step), want)
        same_leaves(static(rt.to_tensor(data), step), want)
    assert static._cache.traces == 1


def test_float_items_keep_eagers_float64_value():
    static = d2s.to_static(scaled_indices)
    for data in INPUTS:
        n = int(sum(data))
        want = [0.1 * (i + 1) for i in range(n)]
        want = (want, {"count": n, "first": want[0] if want else -1.0})
        same_leaves(scaled_indices(rt.to_tensor(data)), want)
        got = static(rt.to_tensor(data))
        same_leaves(got, want)
        if n == 3:
            assert got[0][2] == 0.30000000000000004  # (float32 would give 0.30000001192...)
    assert static._cache.traces == 1


def test_bools_of_one_branch_and_the_last_item():
    static = d2s.to_static(flags_by_branch)
    for data in [[1.0, 2.0], [-1.0, 0.0]]:
        want = ([True, False], False) if np.mean(data) > 0 else ([], True)
        same_leaves(flags_by_branch(rt.to_tensor(data)), want)
        same_leaves(static(rt.to_tensor(data)), want)


def test_items_read_and_iterated_are_python_numbers():
    static = d2s.to_static(last_and_copied)
    for data in [[1.3, 2.0], [0.3, 0.0]]:
        x0 = float(np.float32(data[0]))
        n = int(np.ceil(np.float32(sum(data))))
        nums = [0.1] + [x0 * 0.3] * n
        want = (nums[-1], 0.1, nums)
        same_leaves(last_and_copied(rt.to_tensor(data)), want)
        same_leaves(static(rt.to_tensor(data)), want)
    assert static._cache.traces == 1


def test_an_item_stored_on_an_argument_object_is_a_python_int():
    static = d2s.to_static(last_on_a_box)
    for data in INPUTS:
        n = int(sum(data))
        eager_box, static_box = Box(), Box()
        np.testing.assert_allclose(static(rt.to_tensor(data), static_box).numpy(),
                                   last_on_a_box(rt.to_tensor(data), eager_box).numpy())
        same_leaves(eager_box.last, 2 * (n - 1) if n else -1)
        same_leaves(static_box.last, eager_box.last)


def test_tensors_in_an_array_stay_tensors():
    def collect(x):
        outs = []
        i = rt.zeros([], "int64")
        while i < x.sum():
            outs.append(x * 2)
            i += 1
        return outs

    got = d2s.to_static(collect)(rt.to_tensor([1.0, 1.0]))
    assert len(got) == 2
    assert all(isinstance(t, rt.Tensor) for t in got)
    np.testing.assert_allclose(got[1].numpy(), [2.0, 2.0])


def root_steps(x):
    steps = []
    i = rt.zeros([], "int64")
    while i < x.sum():
        steps.append(0.1 * float(i + 1) ** 0.5)
        i += 1
    return sum(steps), sum(steps, 0.7), steps


def test_sums_add_the_floats_in_pythons_order():
    # (NumPy's pairwise sum, or the start added last, differ from Python's in the last bit)
    static = d2s.to_static(root_steps)
    for n in (33, 3, 0):
        x = rt.to_tensor(np.array([n], "float32"))
        steps = [0.1 * float(i + 1) ** 0.5 for i in range(n)]
        want = (sum(steps), sum(steps, 0.7), steps)
        same_leaves(root_steps(x), want)
        same_leaves(static(x), want)
    assert static._cache.traces == 1


class Steps(rt.nn.Layer):
    """Returns the list of Python floats a graph loop grows, its sum and a tensor."""

    def forward(self, x):
        steps = []
        for i in range(rt.cast(x.sum(), "int64")):
            steps.append(0.1 * (i + 1))
        return {"steps": steps, "total": sum(steps)}, x * 2


def test_a_saved_model_gives_back_the_list_of_python_numbers(tmp_path):
    static = d2s.to_static(Steps().eval(), input_spec=[d2s.InputSpec([None], "float32")])
    static(rt.to_tensor(np.ones([1], "float32")))
    d2s.save(static, str(tmp_path / "steps"))
    loaded = d2s.load(str(tmp_path / "steps"))
    for data in [[1.0, 2.0], [0.0, 0.0, 0.0], [2.0]]:
        steps = [0.1 * (i + 1) for i in range(int(sum(data)))]
        x = rt.to_tensor(np.array(data, "float32"))
        for numbers, y in (Steps()(x), static(x), loaded(x)):
            same_leaves(numbers["steps"], steps)
            assert type(numbers["total"]) is type(sum(steps))
            assert numbers["total"] == pytest.approx(sum(steps), rel=1e-15)
            np.testing.assert_allclose(y.numpy(), np.array(data) * 2)


def made_tensors(x):
    steps = []
    total = 0.0
    for i in range(rt.cast(x.sum(), "int64")):
        steps.append(0.1 * (i + 1))
        total += 0.5
    return rt.to_tensor(steps), rt.to_tensor(total), x * steps[-1]


def test_tensors_made_of_the_floats_have_eagers_default_dtype():
    # (the floats are float64 in the program; a tensor made of them is float32, as eagerly)
    static = d2s.to_static(made_tensors)
    for data in [[1.0, 2.0], [0.5, 1.0]]:
        n = int(sum(data))
        want = [np.array([0.1 * (i + 1) for i in range(n)], "float32"),
                np.array(0.5 * n, "float32"), np.array(data, "float32") * np.float32(0.1 * n)]
        for got in (made_tensors(rt.to_tensor(data)), static(rt.to_tensor(data))):
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert g.dtype == rt.float32
                np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)
