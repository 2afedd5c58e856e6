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
    "autograph.counter_started_on_the_first_trip": (
        "AutoGraph's loop_initializing_variant_variable: `for i in range(n_tensor)` binds "
        "`level` on the first trip and reads it on later ones (`level = level + 1`): a graph "
        "loop carries no name unbound when it starts; refused at the read saying to bind it "
        "before the loop (docs/d2s.md Known limitations)"),
    "autograph_loops.rows_of_python_lists": (
        "AutoGraph's nested_fill with Python lists: `mat.append(row)` where both lists grow "
        "in graph loops (tensor arrays, which hold tensors or numbers, not lists); refused "
        "at the append saying to append `rt.to_tensor(row)` (docs/d2s.md)"),
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
