"""Eager vs converted vs a NumPy reference, over several inputs through ONE program."""
import numpy as np

import d2s
import runtime as rt


def t(values):
    return rt.to_tensor(np.asarray(values, dtype=np.float32))


def check(fn, ref, inputs, programs=1):
    """`fn` eager and converted agree with `ref` (NumPy) on every input tuple; all inputs run
    one program (when they have one signature)."""
    sf = d2s.to_static(fn)
    for args in inputs:
        want = ref(*[np.asarray(a, dtype=np.float32) for a in args])
        eager = fn(*[t(a) for a in args])
        static = sf(*[t(a) for a in args])
        np.testing.assert_allclose(np.asarray(eager.numpy()), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(static.numpy()), want, rtol=1e-5, atol=1e-6)
    assert len(sf.program_cache) == programs
    return sf


def check_grad(fn, ref, points, weights=(1.0, -2.0)):
    """d sum(fn(x) * weights) / dx through the converted `fn` matches finite differences of
    `ref` (NumPy, float64) at each point (pick points away from the jumps of `fn`)."""
    from finite_differences import numeric_grad
    sf = d2s.to_static(fn)
    for xv in points:
        x = t(xv)
        x.stop_gradient = False
        rt.sum(sf(x) * t(list(weights))).backward()
        want = numeric_grad(lambda a: float((ref(a) * list(weights)).sum()),
                            np.asarray(xv, np.float64))
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-3, atol=1e-3)


def variables_reachable(*roots, limit=5000):
    """Paths of static Variables reachable from `roots` (attributes, containers, closure
    cells, referenced globals)."""
    import types

    from runtime.program.variable import Variable
    seen, found, stack = set(), [], [(r, "root") for r in roots]
    while stack and len(seen) < limit:
        obj, path = stack.pop()
        if id(obj) in seen or isinstance(obj, (int, float, str, bool, type(None), type,
                                               types.ModuleType, np.ndarray)):
            continue
        seen.add(id(obj))
        if isinstance(obj, Variable):
            found.append(path)
        elif isinstance(obj, rt.Tensor):
            continue
        elif isinstance(obj, (list, tuple)):
            stack += [(x, f"{path}[{i}]") for i, x in enumerate(obj)]
        elif isinstance(obj, dict):
            stack += [(x, f"{path}[{k!r}]") for k, x in obj.items()]
        elif isinstance(obj, types.FunctionType):
            code = obj.__code__
            stack += [(c.cell_contents, f"{path}.<cell {n}>") for n, c in
                      zip(code.co_freevars, obj.__closure__ or ()) if _full(c)]
            stack += [(obj.__globals__[n], n) for n in code.co_names
                      if n in obj.__globals__]
        elif hasattr(obj, "__dict__") and not type(obj).__module__.startswith(("d2s",)):
            stack += [(x, f"{path}.{k}") for k, x in vars(obj).items()]
    return found


def _full(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False
