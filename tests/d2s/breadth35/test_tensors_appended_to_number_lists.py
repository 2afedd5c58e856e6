"""A tensor appended in a graph loop to a list that holds Python numbers of its dtype (found by
the wild4 corpus: greedy decoding from `tokens = [bos]`). The converted program gave every
item back as a Python int where eager's list holds the int and then Tensors; it was then a
StateChangeError at the `append`, and converts now (the int, then Tensors, as eager's list).
Started with a tensor, the same decoder converts too: eager vs static vs NumPy over inputs
whose loops run different numbers of trips, one program."""
import numpy as np

import d2s
import runtime as rt

EOS = 2
TABLES = [  # next-token scores: stops after 2 tokens, or runs to the length cap
    np.array([[0.1, 0.9, 0.0], [0.0, 0.1, 0.9], [0.8, 0.1, 0.1]], "float32"),
    np.array([[0.1, 0.9, 0.0], [0.0, 0.9, 0.1], [0.8, 0.1, 0.1]], "float32"),
]


def decode_from_python_bos(trans, max_len):
    tokens = [0]
    cur = rt.to_tensor(0)
    while cur != EOS and len(tokens) < max_len:
        cur = trans[cur].argmax()
        tokens.append(cur)
    return tokens


def decode_from_tensor_bos(trans, max_len):
    tokens = [rt.to_tensor(0)]
    cur = tokens[0]
    while cur != EOS and len(tokens) < max_len:
        cur = trans[cur].argmax()
        tokens.append(cur)
    return rt.stack(tokens), len(tokens)


def numpy_decode(trans, max_len):
    tokens = [0]
    while tokens[-1] != EOS and len(tokens) < max_len:
        tokens.append(int(trans[tokens[-1]].argmax()))
    return np.array(tokens, "int64")


def test_a_tensor_appended_to_a_list_of_python_ints_converts():
    # (was refused at the append: the list is an array of `[value, is_tensor]` items now,
    # `operators/tensor_items.py`)
    static = d2s.to_static(decode_from_python_bos, full_graph=True)
    for table in TABLES:
        want = numpy_decode(table, 5)
        for fn in (decode_from_python_bos, static):
            tokens = fn(rt.to_tensor(table), 5)
            assert type(tokens[0]) is int and tokens[0] == 0  # eager: an int, then Tensors
            assert all(isinstance(t, rt.Tensor) and t.dtype == rt.int64 for t in tokens[1:])
            assert [int(t) for t in tokens] == want.tolist()
    assert len(static.program_cache) == 1


def test_the_decoder_started_with_a_tensor_converts():
    static = d2s.to_static(decode_from_tensor_bos, full_graph=True)
    lengths = set()
    for table in TABLES:
        want = numpy_decode(table, 5)
        for fn in (decode_from_tensor_bos, static):
            ids, n = fn(rt.to_tensor(table), 5)
            np.testing.assert_array_equal(ids.numpy(), want)
            assert int(n) == len(want)
        lengths.add(len(want))
    assert lengths == {3, 5}  # (the inputs take different paths: EOS, and the cap)
    assert len(static.program_cache) == 1
