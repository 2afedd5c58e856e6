"""A graph loop traced again (its first trace found a list that grows into a tensor array, or a
dtype that widens) starts from the user's objects as they were before the loop: the failed
trace's writes, which name values of its discarded blocks, are undone first. Before, the
retrace read such a value and the program failed at run time with `NameError: v_tNN`."""
import numpy as np

import d2s
import runtime as rt


def early_exit_growing(x, y, limit):
    h = x * 1.0
    lst = [x * 1.0, y * 1.0]            # returned from inside the loop, and grown by it
    for i in range(3):
        if rt.sum(h) > limit:
            return h, lst
        lst.append(y + 1.0)
        lst[0] = lst[0] + h * 0.5
        h = h + 1.0
    return h, lst


def ref_early_exit_growing(x, y, limit):
    h, lst = x.copy(), [x.copy(), y.copy()]
    for _ in range(3):
        if h.sum() > limit:
            break
        lst.append(y + 1.0)
        lst[0] = lst[0] + h * 0.5
        h = h + 1.0
    return [h] + lst


class Accumulate(rt.nn.Layer):
    """The same shape of code as a Layer: state through `self.`, widened in the loop."""

    def forward(self, x, n):
        self.total = x * 0.0
        steps = []
        k = 0
        while k < n:
            self.total[0] = self.total[0] + x[k % 3]
            steps.append(self.total * 1.0)
            k = k + 1
        return self.total, steps


def test_early_exit_from_a_loop_that_grows_a_returned_list():
    static = d2s.to_static(early_exit_growing)
    y = np.array([1.0, 2.0, 3.0], "float32")
    for xv in ([0.25, 0.25, 0.5], [-3.0, -2.0, 1.0], [5.0, 5.0, 5.0]):  # 2, 3 and 0 steps
        x = np.array(xv, "float32")
        want = ref_early_exit_growing(x, y, 1.0)
        for fn in (early_exit_growing, static):
            h, lst = fn(rt.to_tensor(x), rt.to_tensor(y), 1.0)
            got = [h.numpy()] + [v.numpy() for v in lst]
            assert len(got) == len(want)
            for a, b in zip(got, want, strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-6)
    assert len(static.program_cache) == 1


def test_in_place_writes_through_self_in_a_loop_that_grows_a_list():
    layer = Accumulate()
    static = d2s.to_static(Accumulate())
    x = np.array([1.0, 2.0, 4.0], "float32")
    for n in (0, 2, 5):
        want_total, want_steps = x * 0.0, []
        for k in range(n):
            want_total[0] += x[k % 3]
            want_steps.append(want_total.copy())
        for m in (layer, static):
            total, steps = m(rt.to_tensor(x), rt.to_tensor(np.array(n)))
            np.testing.assert_allclose(total.numpy(), want_total)
            assert len(steps) == n
            for a, b in zip(steps, want_steps, strict=True):
                np.testing.assert_allclose(a.numpy(), b)
        assert isinstance(static.total, rt.Tensor)  # write-back: a Tensor, not a Variable
        np.testing.assert_allclose(static.total.numpy(), want_total)
