"""Corpus cases that fail when converted, with a one-line diagnosis each: the transpiler's bug
list. They run as strict xfails, so fixing one makes its test fail until it is removed here.

STATIC: failures of `test_static` (one conversion, every argument set).
DYNAMIC: failures of `test_dynamic_batch` (`InputSpec([None, ...])`, batch sizes 1, 3, 7).
"""
from __future__ import annotations

STATIC: dict[str, str] = {
    "wild5_rl.n_step_returns_deque": (
        "a `collections.deque(maxlen=n)` appended to in a loop and cleared under a tensor "
        "`if`: converted code follows lists, not deques; refused at the `if` naming the deque "
        "(was silent: the trace's clear() ran on every step)"),
    "wild6_pipelines.bpe_merges_guided_by_scores": (
        "a BPE merge loop slices a Python list of tuples at an index chosen by tensor scores: "
        "the list's structure is decided by values; refused at the user's line"),
    "wild6_pipelines.hf_forward_then_unpack": (
        "an HF model constructed inside the converted function: its parameters would be made "
        "once; refused at the line that creates it (docs/d2s.md, issue 33)"),
    "wild6_pipelines.validation_epoch_metrics": (
        "per-class counts in a dict keyed by `labels.tolist()` items, starting empty: keys "
        "the program computes that no Python key stands for (a known key domain, `{c: 0 for "
        "c in range(C)}`, converts); refused at the user's line ('.get() of a key computed "
        "by the converted code'). What it needs (session 27): the loop over `tolist()` is "
        "unrolled (4 stores), so the dict could be at most 4 slots, each a computed key, a "
        "presence flag and the (hit, tot) values, in first-store order; `.get(l, d)` a "
        "`where` over the present slots whose key equals l, `d[l] = v` the matching slot or "
        "the next free one, `len` the count of present slots, `.values()` each slot under "
        "its flag (as comprehensions over flagged keys now convert: `sum(h / t ...)` runs "
        "each division only where its slot exists), and the returned dict rebuilt from "
        "(keys, values, flags) outputs after the run. Missing: key_flags and returned_keys "
        "take Python keys only (a slot's key is a run value), and computed_keys raises "
        "eager's KeyError for a key none of the dict's keys equals instead of adding one"),
    "autograph_loops.rows_of_python_lists": (
        "AutoGraph's nested_fill with Python lists: `mat.append(row)` where both lists grow "
        "in graph loops (tensor arrays, which hold tensors or numbers, not lists); refused "
        "at the append saying to append `rt.to_tensor(row)` (docs/d2s.md)"),
    # the Dynamo-style corpus (cases_dynamo.py): refusals, each at the user's line
    "dynamo.star_args_and_kwargs": (
        "a kwargs dict with key 'bias' set in one branch of a tensor `if`, then spread with "
        "`**opts` into a helper that tests `'bias' in extra`: one program has one key set; "
        "refused at the `if` (StateChangeError naming the dict and key, docs/d2s.md 'A dict "
        "key set on some paths only')"),
    "dynamo.generator_conditional_yield": (
        "a tensor `if` inside a generator function: generators run as Python; refused at the "
        "generator's line, naming it (docs/d2s.md 'A tensor condition inside a generator "
        "function'); the loop written in the caller converts"),
    # the 2025-26 corpus (cases_wild7_*.py): refusals, each at the user's line
    "wild7_text.ctc_prefix_beam_search_numpy": (
        "CTC prefix beam search over `probs.numpy()` of an argument: beams are a dict keyed "
        "by prefix tuples, pruned by `sorted(items, key=computed score)[:beam]`, so which "
        "prefixes survive (the dict's keys) is decided by values; refused at the sorted() "
        "line ('sorting a list of items of different structures by tensors')"),
    "wild7_text.first_fit_pack_lengths": (
        "first-fit packing over `seq_lens.tolist()` of an argument: `bins[b].append(i)` "
        "under a tensor condition grows lists held by another list (a list of lists whose "
        "lengths the run decides); refused at the `if` naming `bins[0]` (docs/d2s.md)"),
}

DYNAMIC: dict[str, str] = {}

# failures of `test_training_steps.py` (the training-step cases of `cases_wild5_training.py`)
TRAINING: dict[str, str] = {
}
