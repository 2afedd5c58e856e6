"""Found by the observe-sets generator (session 21, seed 35001: 1 internal error in 260): a dict
key one branch of a tensor `if` sets (a presence flag), then an item stored under a key the
converted code computes (`table[int(t)] = 0`), which may equal it: the store read the flagged
item and raised eager's KeyError where eager runs. It was a ConversionError at the store since;
now the key, an int of a bool, sets 0 or 1 where it equals them (the flag of 1 is its old flag
or that, `computed_keys._put_each`), and the call gives eager's result on every path."""
import numpy as np

import d2s
import runtime as rt


def tally(x):
    table = {}
    if rt.mean(x) > 0.0:
        table[1] = 1
    table[int(x[0] > 0.0)] = 0
    return len(table), table.get(1, -1), table.get(0, -1), 1 in table


def test_a_computed_key_beside_a_key_on_some_paths_follows_the_run():
    static = d2s.to_static(tally)
    for xs in ([1.0, 2.0], [-1.0, 2.0], [1.0, -2.0], [-1.0, -2.0]):
        x = rt.to_tensor(np.array(xs, "float32"))
        assert static(x) == tally(x)
    assert len(static.program_cache) == 1
