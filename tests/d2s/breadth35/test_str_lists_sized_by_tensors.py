"""Lists of strs whose length a tensor decides (issue 35): appended to in one branch of a
tensor `if`, or in a loop whose condition is a tensor. The strs are trace-time constants, so
the list is a tensor array of their ids: `append`, `insert`, `pop` as a statement, `extend`,
`clear`, `reverse`, `len`, `in`, `count`, `index`, `==`, slicing, `list()`/`tuple()`, `+` of a
list of strs and returning it (also in a dict or tuple, or through `self.`) follow the run,
and the call gives back the list of strs. An item read (`names[-1]`, a `for` over it, the
value `pop()` returns) compares with `==` / `!=` / `in`, and returned or kept on `self` it is
the str, and so is `sep.join(names)`. Text that would exist only when the program runs (the
item's text, `+`, comparing a joined text, `sorted`, `max`, a str a tensor `if` picks) is a ConversionError at the user's line; so is a
value of another kind appended to it."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.static import InputSpec

from .messages import assert_at_user_line

LABELS = ("neg", "more")


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


class Tagger(rt.nn.Layer):
    """A model's helper that names what it did: the names a tensor decides."""

    def __init__(self):
        super().__init__()
        self.start = "start"
        self.labels = LABELS

    def forward(self, x):
        names = [self.start]
        if x.mean() > 0:
            names.append("pos")
        else:
            names.extend(list(self.labels))
        found = "pos" in names, "zzz" in names, names.count("neg"), names.index("start")
        same = names == ["start", "neg", "more"]
        return {"n": len(names), "names": names, "found": found, "same": same}


def tagger_ref(xv):
    names = ["start", "pos"] if xv.mean() > 0 else ["start", "neg", "more"]
    return {"n": len(names), "names": names,
            "found": ("pos" in names, False, names.count("neg"), 0),
            "same": names == ["start", "neg", "more"]}


INPUTS = (np.array([1.0, 2.0], "float32"), np.array([-1.0, -3.0], "float32"),
          np.array([0.0, 0.0], "float32"))


def test_a_str_list_a_tensor_if_sizes_converts_one_program():
    model = Tagger()
    static = d2s.to_static(Tagger(), full_graph=True)
    for xv in INPUTS:  # both branches, one program
        want = tagger_ref(xv)
        for run in (model, static):
            got = run(rt.to_tensor(xv))
            assert got == want
            assert type(got["found"][0]) is bool and type(got["n"]) is int
            assert type(got["same"]) is bool
    assert len(static.forward.program_cache) == 1


def steps(x, n):
    names = ["begin"]
    for i in range(n):  # a loop over range() of a tensor: its trips only the run knows
        if x[i] > 0:
            names.append("up")
        else:
            names.append("down")
        if len(names) > 3:
            names.pop(0)  # a statement: the item taken is not read
    names.insert(0, "first")
    return names, len(names), names.count("up"), names[1:]


def steps_ref(xv, n):
    names = ["begin"]
    for i in range(n):
        names.append("up" if xv[i] > 0 else "down")
        if len(names) > 3:
            names.pop(0)
    names.insert(0, "first")
    return names, len(names), names.count("up"), names[1:]


def test_a_str_list_a_graph_loop_grows_follows_its_trips():
    static = d2s.to_static(steps, full_graph=True)
    xv = np.array([1.0, -2.0, 3.0, 4.0], "float32")
    for n in (0, 1, 2, 4):  # zero trips included
        want = steps_ref(xv, n)
        for run in (steps, static):
            got = run(rt.to_tensor(xv), rt.to_tensor(n))
            assert got == want and type(got[0]) is list
    assert len(static.program_cache) == 1


def grown_in_a_while(x):
    names = []
    k = rt.zeros([])
    while k < x.sum():
        names.append("tick")
        k = k + 1.0
    return len(names), names + ["end"], tuple(names)


def test_a_str_list_a_while_grows_joined_with_a_python_list():
    static = d2s.to_static(grown_in_a_while, full_graph=True)
    for total in (-1.0, 0.5, 3.0):
        count = max(0, int(np.ceil(total)))
        want = (count, ["tick"] * count + ["end"], ("tick",) * count)
        for run in (grown_in_a_while, static):
            assert run(rt.to_tensor([total])) == want
    assert len(static.program_cache) == 1


class LastTag(rt.nn.Layer):
    """Keeps the last name it saw on `self`, and counts the names by reading each."""

    def __init__(self):
        super().__init__()
        self.last = self.title = None

    def forward(self, x):
        names = ["start"]
        if x.mean() > 0:
            names.append("pos")
        ups = 0
        for name in names:  # a graph loop: each item read when the program runs
            if name == "pos" or name in ("up", "high"):
                ups += 1
        self.last = names[-1]
        self.title = "/".join(names)
        changed = names[-1] != "start"
        first = names.pop(0)
        return ups, changed, first, names


def last_tag_ref(xv):
    names = ["start", "pos"] if xv.mean() > 0 else ["start"]
    return (names.count("pos"), names[-1] != "start", "start", names[1:]), names[-1]


def test_items_read_compare_and_come_back_as_strs():
    eager, static = LastTag(), d2s.to_static(LastTag(), full_graph=True)
    for xv in INPUTS:
        want, last = last_tag_ref(xv)
        for run in (eager, static):
            got = run(rt.to_tensor(xv))
            assert got == want and type(got[0]) is int and type(got[1]) is bool
            assert run.last == last and type(run.last) is str
            assert run.title == ("start/pos" if last == "pos" else "start")
    assert len(static.forward.program_cache) == 1


def text_of_item(x):
    names = ["start"]
    if x.mean() > 0:
        names.append("pos")
    return f"last={names[-1]}"


def picked_by_a_tensor(x):
    names = ["start"]
    if x.mean() > 0:
        names.append("pos")
    if x[0] > 1:
        name = names[0]
    else:
        name = names[-1]
    return name


def joined(x):
    names = ["start"]
    if x.mean() > 0:
        names.append("pos")
    return "-".join(names) == "start-pos"


def popped_value(x):
    names = ["start"]
    if x.mean() > 0:
        names.append("pos")
    last = names.pop()
    return last + "!"


def sorted_names(x):
    names = ["start"]
    if x.mean() > 0:
        names.append("pos")
    return sorted(names)


def number_into_names(x):
    names = ["start"]
    if x.mean() > 0:
        names.append("pos")
    names.append(3)
    return names


@pytest.mark.parametrize("fn, line, error, text", [
    (text_of_item, 'return f"last={names[-1]}"', d2s.ConversionError,
     "an f-string of a str only the run decides"),
    (joined, 'return "-".join(names) == "start-pos"', d2s.ConversionError,
     "the text str.join() makes"),
    (popped_value, 'return last + "!"', d2s.ConversionError, "is used as text"),
    (sorted_names, "return sorted(names)", d2s.ConversionError, "sorted() or sort() (File"),
    (number_into_names, "names.append(3)", d2s.StateChangeError, "it gets the int 3"),
])
def test_text_the_run_would_make_is_refused_at_the_users_line(fn, line, error, text):
    x = rt.to_tensor([1.0, 2.0])
    fn(x)  # eager code runs
    with pytest.raises(error) as info:
        d2s.to_static(fn, full_graph=True)(x)
    shown = assert_at_user_line(info.value, __file__, line_of(fn, line))
    assert text in shown


def test_saving_a_function_that_returns_such_strs_is_refused(tmp_path):
    # a saved model keeps no table of the strs: its outputs would be their ids
    with pytest.raises(TypeError, match="d2s.save: the function returns strs"):
        d2s.save(d2s.to_static(Tagger()), str(tmp_path / "tagger"),
                 input_spec=[InputSpec([2], "float32")])
