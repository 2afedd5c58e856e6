"""Corpus cases that fail when converted, with a one-line diagnosis each: the transpiler's bug
list. They run as strict xfails, so fixing one makes its test fail until it is removed here.

STATIC: failures of `test_static` (one conversion, every argument set).
DYNAMIC: failures of `test_dynamic_batch` (`InputSpec([None, ...])`, batch sizes 1, 3, 7).
"""
from __future__ import annotations

STATIC: dict[str, str] = {
    "wild4_speech.label_decode_to_strings": (
        "PaddleOCR's label decode picks characters of a Python string by ids read from an "
        "input's .numpy(): a program computes numbers, not text; refused at the user's "
        "chars.append(_CHARS[i]) (docs/d2s.md 'A computed value choosing a Python object')"),
    "wild5_rl.ppo_clipped_loss_logged": (
        "CleanRL logs `np.mean(clipfracs)` of Python floats the program computes (`.item()`): "
        "NumPy runs at trace time, refused at the user's line (docs/d2s.md 'NumPy on a "
        "computed tensor'); a graph form of NumPy reductions over such numbers is not built"),
    "wild5_rl.n_step_returns_deque": (
        "a `collections.deque(maxlen=n)` appended to in a loop and cleared under a tensor "
        "`if`: converted code follows lists, not deques; refused at the `if` naming the deque "
        "(was silent: the trace's clear() ran on every step)"),
    # the Dynamo-style corpus (cases_dynamo.py): refusals, each at the user's line
    "dynamo.star_args_and_kwargs": (
        "a kwargs dict with key 'bias' set in one branch of a tensor `if`, then spread with "
        "`**opts` into a helper that tests `'bias' in extra`: one program has one key set; "
        "refused at the `if` (StateChangeError naming the dict and key, docs/d2s.md 'A dict "
        "key set on some paths only')"),
    "dynamo.comprehension_filter_by_tensor": (
        "`sum(kept) if kept else 0.0` over a list a tensor filter sizes is a Tensor on some "
        "inputs and a float on others: one program value cannot be both; refused at the line"),
    "dynamo.argmax_picks_python_label": (
        "`labels[int(x.argmax())]`: a computed index choosing a Python str; refused at the "
        "line (docs/errors.md 'A tensor's value used as a Python value')"),
    "dynamo.set_of_tolist_values": (
        "`len(set(x.tolist()))`: a set of computed numbers (distinct count) is not built as "
        "graph ops (rt.unique); refused at the `len` (docs/d2s.md set elements)"),
    "dynamo.int_tensor_item_indexing": (
        "`seq[a:a + b]` of a Python list with bounds from `int(x[0])`: a list whose length "
        "the run decides, sliced by computed bounds; refused at the line"),
    "dynamo.tolist_equality": (
        "`tuple(x.tolist()) < (1.5, 0.0)`: an ordering comparison of sequences of computed "
        "numbers (`==` converts); refused with the generic bool() error at the line"),
    "dynamo.generator_conditional_yield": (
        "a tensor `if` inside a generator function: generators run as Python; refused at the "
        "generator's line, naming it (docs/d2s.md 'A tensor condition inside a generator "
        "function'); the loop written in the caller converts"),
}

DYNAMIC: dict[str, str] = {}

# failures of `test_training_steps.py` (the training-step cases of `cases_wild5_training.py`)
TRAINING: dict[str, str] = {
    "wild5_training.scheduler_stepped_inside": (
        "StepDecay.step() inside the converted step: the schedule is Python state the trace "
        "would advance once; refused at the line (docs/training.md: step it after the call)"),
    "wild5_training.manual_global_norm_clip": (
        "p.grad.set_value(p.grad * coef) under `if coef < 1.0:` (a tensor condition): "
        "gradient writes inside a tensor `if` are refused at the line (docs/training.md)"),
    "wild5_training.skip_update_on_non_finite_loss": (
        "opt.step() under `if finite:` decided by a tensor: refused at the line; "
        "GradScaler.step() is the converted way to skip a step on inf/nan"),
    "wild5_training.detach_features_when_confident": (
        "silent, order only: opt.state_dict() lists a parameter's state in the order eager "
        "runs first updated it; the program made every state when traced, in parameter "
        "order (values, keys and presence agree)"),
}
