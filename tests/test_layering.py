"""The layering rules of DESIGN.md and docs/architecture.md, checked by parsing every import.

- `runtime/` never imports `d2s`; `d2s/pyct/` imports neither `runtime` nor the rest of `d2s`.
- Every folder of both packages (and every module directly in a package's root folder) has a
  rank in `RANKS`; a file may import only what has the same or a lower rank (lazy imports
  inside functions count too: they are dependencies all the same).
- No import cycle joins files of different folders.

What is not fixed yet is listed, with why, in `KNOWN_UPWARD` and `KNOWN_CYCLES`; an entry that
no longer occurs fails the test too, so the lists only shrink.
"""
from __future__ import annotations

import ast
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Bottom to top. A unit is a folder below a package root (with everything under it) or a
# module directly in the package root. docs/architecture.md draws the same picture.
RANKS = {
    # runtime: the bottom holds no runtime imports but each other's
    "runtime/backend.py": 0, "runtime/dtypes.py": 0, "runtime/core.py": 0,
    "runtime/pytree.py": 0, "runtime/progress.py": 0, "runtime/lazy_names.py": 0,
    "runtime/device.py": 1,
    "runtime/ops": 1,  # the op registry and every op (tensor arrays included)
    "runtime/tensor.py": 2, "runtime/autograd.py": 2, "runtime/linalg.py": 2,
    "runtime/autograd_pylayer.py": 2, "runtime/parameter.py": 2,
    "runtime/methods.py": 2,
    "runtime/program": 3,  # the static IR, builder, backward, passes, codegen, executor
    "runtime/metric": 4,
    "runtime/static": 5, "runtime/serialization.py": 5,
    "runtime/nn": 6, "runtime/regularizer.py": 6, "runtime/vision": 6,
    "runtime/fft.py": 6, "runtime/signal.py": 6,
    "runtime/amp": 7, "runtime/optimizer": 7, "runtime/quantization": 7,
    "runtime/distributed": 7,
    "runtime/data": 8, "runtime/io.py": 8,
    "runtime/hapi": 9,  # Model trains with nn, optimizer, data, metric
    "runtime/__init__.py": 10,
    # d2s: pyct -> converters -> transpile -> operators -> trace/run -> api -> cli
    "d2s/pyct": 0,
    "d2s/errors.py": 1, "d2s/logging_utils.py": 1, "d2s/breakpoints.py": 1,
    "d2s/fallback.py": 1, "d2s/guards.py": 1, "d2s/function_spec.py": 1,
    "d2s/guard_steps.py": 1,  # (guards' fan-out steps: the items a `for` reads)
    "d2s/call_policy.py": 1, "d2s/hidden_state.py": 1,
    "d2s/value_errors.py": 1,  # (errors.for_user's rewrites of a computed value used as Python)
    "d2s/save_spec.py": 1, "d2s/report.py": 1, "d2s/report_svg.py": 1,
    "d2s/converters": 2,
    "d2s/transpile.py": 3,
    "d2s/operators": 4,
    "d2s/convert_call.py": 5,
    # the spine (docs/architecture.md, "The spine"), one file above the next: a call's
    # values go down it and nothing below reaches back up for the StaticFunction
    "d2s/writeback_order.py": 5.05,  # (the caller's dicts' key order a run decides)
    "d2s/writeback_items.py": 5.05, "d2s/owned_results.py": 5.05,
    "d2s/writeback_fed.py": 5.07,  # (places holding tensors the call rebinds: writeback.py)
    "d2s/writeback_deques.py": 5.07,  # (deques the call appends to: writeback.py)
    "d2s/writeback.py": 5.1, "d2s/side_effects.py": 5.2, "d2s/tracing.py": 5.3,
    "d2s/running_grad2.py": 5.35, "d2s/running_backward.py": 5.37,
    "d2s/argument_flags.py": 5.35,  # (what a call does to its Tensor arguments: running.py)
    "d2s/output_kinds.py": 5.35,  # (a number's type, a value's dtype the run decides: running)
    "d2s/running.py": 5.4, "d2s/rebinding.py": 5.45, "d2s/program_cache.py": 5.5,
    "d2s/fast_call.py": 5.6,
    "d2s/report_html.py": 5.7, "d2s/static_function.py": 5.8,
    "d2s/__init__.py": 6, "d2s/io.py": 6, "d2s/saved_outputs.py": 5.9,
    "d2s/onnx": 6,  # (d2s.onnx after `import d2s`, as paddle.onnx; it imports only d2s/io)
    "d2s/check.py": 7,
    "d2s/cli.py": 8, "d2s/cli_model.py": 8, "d2s/cli_target.py": 8, "d2s/demo": 8, "d2s/__main__.py": 8,
}

# Upward imports allowed, as (importing file, imported unit): none (the call policy is
# `d2s/call_policy.py`, the operator generated code calls is `d2s/operators/calls.py`, and
# `d2s.operators` registers itself with `transpile`). Keep it empty.
KNOWN_UPWARD: set = set()

# Import cycles across folders allowed: none. Keep it empty.
KNOWN_CYCLES: list = []


# Files are small and single-purpose: at most MAX_LINES lines. Over it allowed: none.
MAX_LINES = 600
KNOWN_LONG: set = set()


def imported_modules(path: pathlib.Path, package: str) -> set:
    """Absolute names of the modules a file imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = package.split(".")
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            found.add(mod)
    return found


def python_files(top: str):
    for path in sorted((ROOT / top).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        package = ".".join(parts if parts[-1] == "__init__" else parts[:-1])
        if parts[-1] == "__init__":
            package = ".".join(parts[:-1])
        yield path, package


def _module_files() -> dict:
    """Module name -> path relative to ROOT, for both packages."""
    out = {}
    for top in ("runtime", "d2s"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path.relative_to(ROOT).as_posix()
    return out


MODULES = _module_files()


def _resolve(name: str):
    """The file a module name imports (a name inside a module resolves to that module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return MODULES.get(name)


def file_imports(rel: str) -> set:
    """The files of runtime/ and d2s/ that file `rel` imports: `from pkg import name` counts
    as importing `pkg.name` when that is a module, else `pkg`."""
    path = ROOT / rel
    parts = list(pathlib.PurePosixPath(rel).with_suffix("").parts)
    here = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=rel)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod
                     for a in node.names]
        for n in names:
            target = _resolve(n)
            if target is not None and target != rel:
                found.add(target)
    return found


def unit(rel: str) -> str:
    """`runtime/ops` for runtime/ops/math.py, `runtime/tensor.py` for itself."""
    parts = rel.split("/")
    return "/".join(parts[:2])


GRAPH = {rel: file_imports(rel) for rel in MODULES.values()}


def test_every_folder_and_root_module_has_a_rank():
    missing = sorted({unit(rel) for rel in GRAPH} - set(RANKS))
    assert not missing, f"give these a rank in tests/test_layering.py RANKS: {missing}"


def upward_imports() -> set:
    found = set()
    for rel, targets in GRAPH.items():
        for t in targets:
            a, b = unit(rel), unit(t)
            if a.split("/")[0] == b.split("/")[0] and RANKS[a] < RANKS[b]:
                found.add((rel, b))
    return found


def test_no_upward_import():
    new = sorted(upward_imports() - KNOWN_UPWARD)
    assert not new, "imports of a higher layer (see RANKS; move the code or invert the " \
                    f"dependency with a hook): {new}"


def test_known_upward_imports_are_still_real():
    gone = sorted(KNOWN_UPWARD - upward_imports())
    assert not gone, f"fixed: remove from KNOWN_UPWARD in tests/test_layering.py: {gone}"


def strongly_connected(graph: dict) -> list:
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    out.append(comp)
    return out


def cross_folder_cycles() -> list:
    return [c for c in strongly_connected(GRAPH)
            if len({str(pathlib.PurePosixPath(f).parent) for f in c}) > 1]


def test_no_import_cycle_between_folders():
    bad = [sorted(c) for c in cross_folder_cycles()
           if not any(c <= known for known in KNOWN_CYCLES)]
    assert not bad, f"import cycles across folders: {bad}"


def test_known_cycles_are_still_real():
    found = cross_folder_cycles()
    gone = [sorted(k) for k in KNOWN_CYCLES if not any(c <= k for c in found)]
    assert not gone, f"broken: remove from KNOWN_CYCLES in tests/test_layering.py: {gone}"


def file_cycles() -> list:
    """Import cycles between modules (package `__init__` files left out: a package importing
    its own modules to re-export them is not a cycle of the code)."""
    modules = {rel: {t for t in ts if not t.endswith("__init__.py")}
               for rel, ts in GRAPH.items() if not rel.endswith("__init__.py")}
    return [c for c in strongly_connected(modules) if len(c) > 1]


def test_no_import_cycle_between_modules():
    # (issue 38: from 8 cycles, the largest of 11 files, to none; a new one is a design
    # problem to solve by moving the shared piece down, not an entry in a list)
    assert not [sorted(c) for c in file_cycles()], "import cycles between modules"


def test_ops_never_imports_program():
    for rel, targets in GRAPH.items():
        if rel.startswith("runtime/ops/"):
            bad = sorted(t for t in targets if not t.startswith("runtime/ops/")
                         and RANKS[unit(t)] > RANKS["runtime/ops"])
            assert not bad, f"{rel} imports {bad}"


def test_cli_modules_import_one_way():
    # cli -> cli_model -> cli_target (cli_model once imported cli back for `resolve`)
    assert "d2s/cli.py" not in GRAPH["d2s/cli_model.py"]
    assert "d2s/cli.py" not in GRAPH["d2s/cli_target.py"]


def test_no_file_over_the_line_limit():
    lengths = {rel: len((ROOT / rel).read_text().splitlines()) for rel in MODULES.values()}
    long = {rel for rel, n in lengths.items() if n > MAX_LINES}
    assert long <= KNOWN_LONG, f"split these (over {MAX_LINES} lines): " \
                               f"{sorted((r, lengths[r]) for r in long - KNOWN_LONG)}"
    fixed = sorted(KNOWN_LONG - long)
    assert not fixed, f"under the limit now: remove from KNOWN_LONG: {fixed}"


# Within d2s/operators each file imports only files of a lower rank (so no cycle): the trace
# state and the values at the bottom, the mutation log and the per-block records on them,
# the constructs (`if`, loops, `try`, calls) on top (docs/architecture.md, "Trace state").
OPERATOR_RANKS = {
    "variables.py": 0, "trace_state.py": 0, "aliases.py": 0,
    "branch_mismatch.py": 0.5,  # (mutation.py's messages: above variables, below mutation)
    "branch_sets.py": 0.75,  # (the sets mutation.py's logs track: above branch_mismatch)
    "float_sum.py": 0, "block_functions.py": 0,
    "mutation.py": 1, "scalar_merge.py": 1, "traced_keys.py": 1,
    "state_at_raise.py": 1.25,  # (on mutation: what a run-time raise writes back)
    "exceptions.py": 1.5,  # (on state_at_raise)
    "computed_keys.py": 2.25,  # (on traced_keys, unbound: keys of two values get flags)
    "set_algebra.py": 1.5,  # (on traced_keys: `s & t` of sets holding computed values)
    "flagged_algebra.py": 1.6,  # (on branch_sets, traced_keys: algebra of flagged sets)
    "made_sets.py": 1.75,  # (on set_algebra: the algebra of sets converted code makes)
    "str_arrays.py": 1.5,  # (on mutation: lists of strs a tensor sizes, arrays of str ids)
    "tensor_items.py": 1.6,  # (on mutation: lists of Python numbers and tensors a tensor sizes)
    "print_values.py": 1, "loop_errors.py": 1,
    "sort_values.py": 1.75,  # (on str_arrays: a str item the sort's order picks)
    "run_raises.py": 0.8,  # (eager's exception where a graph condition holds, the run's key)
    "chosen_text.py": 0.9,  # (the text of a str a tensor if chose: print_values, str_arrays)
    "identity_calls.py": 0.5,  # (id()/hash() of what the traced call was given: aliases)
    "tensor_flags.py": 1.2,  # (p.stop_gradient = v: noted while tracing, on mutation)
    "stop_reads.py": 1.2,  # (x.stop_gradient read by user code: the run's flag, loop_errors)
    "loop_number_kinds.py": 2.5, "number_pairs.py": 2, "array_queries.py": 2,
    "number_or_tensor.py": 2,  # (loop_number_kinds carries its flags)
    "loop_number_items.py": 3.25,  # (dict items whose kind a graph loop decides: on
    # block_values, number_or_tensor; graph_while carries their flags)
    "branch_strs.py": 2,  # (strs the branches of a tensor if differ on: ids, StrItems)
    "branch_callables.py": 2.5,  # (callables they differ on: indices, ChosenCallables)
    "sequence_order.py": 2.5,  # (on logical: `(a, b) < (c, d)` of computed items)
    "lists.py": 2.5,  # (on computed_keys: `.pop()` of a key the program computes)
    "logical.py": 2, "text.py": 2, "unbound.py": 2, "try_except.py": 2,
    "mutation_explain.py": 2, "loop_keys.py": 2, "failed_trace.py": 2,
    "block_values.py": 3, "branch_arrays.py": 3,
    "held_lists.py": 4, "loop_initial.py": 4, "none_or_tensor.py": 4, "type_queries.py": 5,
    "run_types.py": 4.5,  # (type() of a value whose class the run decides: type_queries)
    "loop_new_keys.py": 3.5,  # (dict keys a graph loop adds: flags it carries, graph_while)
    "loop_bound.py": 3,  # (names a graph loop binds on some trips: flags it carries, on unbound)
    "mutation_loop.py": 5,
    "branch_dtypes.py": 4.5,  # (a dtype a tensor if decides: none_or_tensor's outputs too)
    "control_flow.py": 6,
    "graph_while.py": 7, "loop_numpy_values.py": 1, "try_calls.py": 7, "predicates_comp.py": 7,
    "warning_calls.py": 1,  # (warnings.warn as a py_warn op, for calls.py)
    "logging_calls.py": 1,  # (logger.info & co. as a py_log op, for calls.py)
    "json_calls.py": 2,  # (json.dumps of computed numbers as a py_format op: str_arrays)
    "loops.py": 8, "calls.py": 8,
    "number_picks.py": 8,  # (max / min / any / all of Python numbers: ifexp of control_flow)
    "builtins.py": 9, "comp_arrays.py": 9, "switch.py": 9,
    "python_picks.py": 2,  # (on str_arrays and exceptions: tables a computed number indexes)
    "array_sums.py": 8.5,  # (sum() of a tensor array, for builtins.py)
    "distinct_numbers.py": 1.8,  # (len() of a set of computed numbers: made_sets)
    "flagged_extremes.py": 8.5,  # (max(d, key=d.get) of keys on some paths: control_flow)
    "flagged_key_lists.py": 8.5,  # (list() / sorted() of a dict with keys on some paths)
    "numpy_calls.py": 0,  # (np.asarray(t) & co.: runtime's numpy_arrays)
    "list_slices.py": 0.25,  # (`seq[a:b]` of computed bounds: on variables)
    "math_calls.py": 9.5,  # (math.sqrt(i) & co.: float_ / int_ of builtins.py)
    "key_flags.py": 0.5,  # (dict keys present on some paths: read by in_, len_, .get)
    "key_ranks.py": 0.6,  # (on key_flags: when each dict key was first stored, its order)
    "returned_keys.py": 0.75,  # (on key_flags: returned dicts of keys a tensor decides)
    "branch_keys.py": 5.5,  # (a key set in one branch of a tensor if: control_flow's hook)
    "loop_new_keys.py": 3.5,  # (a key a graph loop's body adds: graph_while's flags)
    "struct_queries.py": 8.5,  # (sorts by keys computed in a graph loop, for builtins.py)
    "struct_columns.py": 9.5,  # (zip(*pairs): zip_ of builtins.py)
    "container_types.py": 3,  # (type() / isinstance() of tensor arrays, for builtins.py)
    "attribute_reads.py": 9.5,  # (getattr / vars of a traced tensor, as builtins' shape)
    "tensor_attributes.py": 5.5,  # (x.name / is_leaf / grad: type_queries, number_or_tensor)
    "__init__.py": 10,
}


def test_operators_import_lower_ranks_only():
    files = {rel.rsplit("/", 1)[1]: ts for rel, ts in GRAPH.items()
             if rel.startswith("d2s/operators/")}
    assert set(files) == set(OPERATOR_RANKS), \
        f"give these a rank in OPERATOR_RANKS: {sorted(set(files) - set(OPERATOR_RANKS))}"
    bad = sorted((f, t) for f, ts in files.items() for t in (
        t.rsplit("/", 1)[1] for t in ts if t.startswith("d2s/operators/"))
        if OPERATOR_RANKS[t] >= OPERATOR_RANKS[f])
    assert not bad, f"imports of the same or a higher rank in d2s/operators: {bad}"


# Within runtime/ops the op families import each other one way (the shared helpers are in
# ops/elementwise.py). The one pair left: concat/stack accept a tensor array (array ops),
# and an eager tensor array (a Python list) is joined with concat/stack.
KNOWN_OPS_CYCLES = [{"runtime/ops/arrays.py", "runtime/ops/combine.py"}]


def test_op_families_import_one_way():
    ops = {rel: {t for t in ts if t.startswith("runtime/ops/")}
           for rel, ts in GRAPH.items() if rel.startswith("runtime/ops/")}
    cycles = [c for c in strongly_connected(ops) if len(c) > 1]
    assert all(any(c <= k for k in KNOWN_OPS_CYCLES) for c in cycles), \
        f"import cycles among op modules: {[sorted(c) for c in cycles]}"


# Inside runtime/program, bottom to top (docs/architecture.md, "The program layers"): the IR;
# the builder, which appends ops; backward and the training step, built on the builder; the
# passes; the plans of generated code; the emitters (text from a plan, and what compiles it);
# the executor; model files. A file imports the same or a lower rank, and no cycle.
PROGRAM_RANKS = {
    "literal.py": 0, "origin.py": 0, "variable.py": 0, "printer.py": 0, "verify.py": 0,
    "variable_readers.py": 0,  # (the hooks d2s adds to answer reads of a Variable)
    "ir.py": 0, "reached.py": 0, "serialize.py": 0, "freed_graph.py": 0,
    "numpy_values.py": 0,  # (NumPy semantics of values from numpy(), methods of variable.py)
    "numpy_functions.py": 0,  # (NumPy's functions of them: Variable.__array_ufunc__)
    "numpy_arrays.py": 0,  # (np.asarray / np.float32 of them and of tensors)
    "numpy_stats.py": 0,  # (np.unique, np.percentile, np.linalg of them: numpy_functions)
    "bind_inputs.py": 0,  # (what Builder.bind reads of its inputs)
    "leaf_reads.py": 0,  # (what Builder.capture gives a read of a parameter it wrote)
    "grad_views.py": 0,  # (train_step's view of `.grad`, per branch of control_flow's cond)
    "grad_slots.py": 0,  # (the `.grad` and update-record literals train_step's ops act on)
    "leaf_hooks.py": 0,  # (the hooks of the leaves a converted step differentiates)
    "zero_division.py": 1,  # (the ZeroDivisionError check Builder.bind asks for)
    "builder.py": 1, "control_flow.py": 1, "debug_ops.py": 1, "stop_flags.py": 1,
    "reach_paths.py": 1,
    "eager_grads.py": 2, "backward.py": 2, "train_step.py": 2, "reach_values.py": 2,
    "freed_loops.py": 2, "freed_branches.py": 2, "trip_paths.py": 2,
    "branch_backward.py": 2,  # (train_step's backward() in a tensor `if`'s branch)
    "passes": 3,
    "fusion.py": 4, "fusion_chunks.py": 4, "loop_nest.py": 4, "codegen_loops.py": 4,
    "loop_plan.py": 4,
    "codegen_direct.py": 4, "inplace.py": 4, "threads.py": 4,
    "blas_threads.py": 4,  # (the BLAS library's thread count, which threads.py defers to)
    "fused_kernels.py": 4,  # (op kernels the chunked code of a fused run calls)
    "native_math.py": 5,  # (C text of d2s's own math functions, for the emitters)
    # (native.py plans and hands native_build the emitted source)
    "native_emit.py": 5, "fusion_emit.py": 5, "fusion_gpu.py": 5, "native.py": 5,
    "native_build.py": 5, "fused_function.py": 5, "codegen.py": 5, "native_loops.py": 5,
    "native_loops_emit.py": 5, "native_region.py": 5, "cuda_loops.py": 5,
    "native_pool.py": 5,  # (the C kernels' thread pool, built by native_build)
    "native_run.py": 5,  # (calls a fused run's C function over native_pool's threads)
    "conv_kernels.py": 6,  # (what the C convolution kernels share: sources, builds, calls)
    "conv_native.py": 6,  # (C convolution kernels, built by native_build)
    "conv_depthwise_native.py": 6,  # (C depthwise convolution kernels, on conv_native's)
    "softmax_native.py": 6,  # (C row softmax, built by native_build)
    "pool_native.py": 6,  # (C max pooling and its adjoint, built by native_build)
    "layernorm_native.py": 6,  # (C LayerNorm forward, built by native_build)
    "cuda_rows.py": 7,  # (CUDA softmax and LayerNorm, in front of the two C kernels)
    "cuda_batch_norm.py": 6,  # (CUDA BatchNorm + ReLU forward and backward)
    "batch_norm_native.py": 7,  # (C BatchNorm + ReLU, in front of which cuda_batch_norm's run)
    "executor.py": 6, "cuda_graph.py": 6, "split.py": 6,
    "interpreter.py": 6,  # (a big program's first run, before the executor compiles it)
    "lstm_native.py": 6,  # (C LSTM recurrence, built by native_build)
    "gru_native.py": 7,  # (C GRU recurrence, on lstm_native's helpers)
    "model_check.py": 7, "model_file.py": 7, "model_structure.py": 7,
    "__init__.py": 8,
}


def _program_unit(rel: str) -> str:
    return rel.split("/")[2]


def test_program_files_import_downward_without_cycles():
    program = {rel: {t for t in ts if t.startswith("runtime/program/")}
               for rel, ts in GRAPH.items() if rel.startswith("runtime/program/")}
    missing = sorted({_program_unit(rel) for rel in program} - set(PROGRAM_RANKS))
    assert not missing, f"give these a rank in PROGRAM_RANKS: {missing}"
    upward = sorted((rel, t) for rel, ts in program.items() for t in ts
                    if PROGRAM_RANKS[_program_unit(rel)] < PROGRAM_RANKS[_program_unit(t)])
    assert not upward, f"imports of a higher program layer: {upward}"
    cycles = [sorted(c) for c in strongly_connected(program) if len(c) > 1]
    assert not cycles, f"import cycles in runtime/program: {cycles}"


def test_runtime_never_imports_d2s():
    files = list(python_files("runtime"))
    assert files, "no runtime sources found"
    for path, package in files:
        bad = {m for m in imported_modules(path, package) if m == "d2s" or m.startswith("d2s.")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_pyct_imports_neither_runtime_nor_d2s():
    if not (ROOT / "d2s" / "pyct").exists():
        pytest.skip("d2s/pyct not present")
    for path, package in python_files("d2s/pyct"):
        for m in imported_modules(path, package):
            top = m.split(".")
            assert top[0] != "runtime", f"{path.relative_to(ROOT)} imports {m}"
            if top[0] == "d2s":
                assert top[:2] == ["d2s", "pyct"], f"{path.relative_to(ROOT)} imports {m}"


def test_d2s_reads_no_private_name_of_runtime():
    """`d2s` uses runtime's public names only: nothing imported from runtime starts with an
    underscore, and the per-thread mode switches are read through `runtime.core`'s accessors
    (`mode_state`, `active_builder`, `amp_state`), never as the registry's `STATE`."""
    bad = []
    for path, _ in python_files("d2s"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and not node.level and (
                    node.module or "").split(".")[0] == "runtime":
                bad += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.endswith("__")
                        or a.name == "STATE"]
    assert not bad, bad


def test_import_parser_resolves_relative_and_absolute_imports(tmp_path):
    src = tmp_path / "x.py"
    src.write_text("from ..d2s import operators\nimport d2s.pyct\nfrom . import math\n")
    assert imported_modules(src, "runtime.ops") == {"runtime.d2s", "d2s.pyct", "runtime.ops"}


def test_file_graph_resolves_modules_and_names():
    graph = GRAPH["runtime/ops/math.py"]
    assert "runtime/ops/elementwise.py" in graph  # from .elementwise import coerce
    assert "runtime/core.py" in graph  # from .. import core
    assert "runtime/ops/registry.py" in graph


def test_cycle_finder():
    comps = strongly_connected({"a": {"b"}, "b": {"a", "c"}, "c": set()})
    assert sorted(sorted(c) for c in comps) == [["a", "b"], ["c"]]


if __name__ == "__main__":  # print the unit graph (for docs/architecture.md)
    edges = sorted({(unit(a), unit(b)) for a, ts in GRAPH.items() for b in ts
                    if unit(a) != unit(b) and a.split("/")[0] == b.split("/")[0]})
    for a, b in edges:
        sys.stdout.write(f"{a} ({RANKS[a]}) -> {b} ({RANKS[b]})\n")


def _functions_and_inner_imports() -> tuple[list, int]:
    """(functions over 80 lines as (lines, file, name), imports inside functions) of
    runtime/ and d2s/."""
    long, inner = [], 0
    for rel in MODULES.values():
        tree = ast.parse((ROOT / rel).read_text(), filename=rel)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > 80:
                    long.append((n, rel, node.name))
                inner += sum(isinstance(sub, (ast.Import, ast.ImportFrom))
                             for sub in ast.walk(node) if sub is not node)
    return long, inner


def test_few_long_functions_and_few_imports_inside_functions():
    # (issue 38: 9 functions over 80 lines and 481 imports inside functions before; 0 and 39
    # after. An import inside a function is for an optional or measurably slow module.)
    long, inner = _functions_and_inner_imports()
    assert len(long) <= 2, f"split these (over 80 lines): {sorted(long, reverse=True)}"
    assert inner <= 200, f"{inner} imports inside functions: move them to module tops"
