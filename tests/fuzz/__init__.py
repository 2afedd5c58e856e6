"""Differential fuzzing of d2s: generated functions run eagerly and through `d2s.to_static`.

`runner.compare(source, inputs, setup)` is the shared core; each generator module adds a
hypothesis strategy of `(source, inputs)` to `GENERATORS` (name -> a function returning
`(strategy, setup)`, `setup` making the per-call object argument or None, or
`(strategy, setup, compare)` for a generator with a comparison of its own, `compare(source,
inputs, setup)` returning a `runner.Outcome`).
`python -m tests.fuzz --examples N` runs a campaign and prints the counts.
"""


def _state():
    from . import gen_state
    return gen_state.programs(), gen_state.make_box


def _state_same_shape():
    from . import gen_state
    return gen_state.programs(growing=False), gen_state.make_box


def _observe():
    from . import gen_observe
    return gen_observe.programs(), gen_observe.make_observed


def _observe_sets():
    from . import gen_observe, gen_observe_sets
    return gen_observe_sets.programs(), gen_observe.make_observed


def _observe_params():
    from . import gen_observe_params
    return gen_observe_params.programs(), gen_observe_params.make_trainer


def _breadth():
    from . import gen_breadth
    return gen_breadth.programs(), gen_breadth.make_state


def _dict_keys():
    from . import gen_dict_keys
    return gen_dict_keys.programs(), gen_dict_keys.make_box


def _control():
    from . import gen_control
    return gen_control.programs(), None, gen_control.outcome


GENERATORS = {"state": _state, "state-same-shape": _state_same_shape, "observe": _observe,
              "observe-sets": _observe_sets, "observe-params": _observe_params,
              "breadth": _breadth, "control": _control, "dict-keys": _dict_keys}
