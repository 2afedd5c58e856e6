"""Found by the observe-sets generator (session 21, seed 35001: 1 internal error in 260): a dict
key one branch of a tensor `if` sets (a presence flag), then an item stored under a key the
converted code computes (`table[int(t)] = 0`), which may equal it: the store read the flagged
item and raised eager's KeyError where eager runs. Now a clear ConversionError at the store."""
import numpy as np
import pytest

import d2s
import runtime as rt


def tally(x):
    table = {}
    if rt.mean(x) > 0.0:
        table[1] = 1
    table[int(x[0] > 0.0)] = 0
    return len(table)


def test_a_computed_key_beside_a_key_on_some_paths_is_refused_at_the_store():
    assert tally(rt.to_tensor(np.array([1.0, 2.0], "float32"))) == 1
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(tally)(rt.to_tensor(np.array([-1.0, 2.0], "float32")))
    msg = str(info.value)
    assert "test_computed_key_beside_a_flagged_key.py" in msg and "table[int(x[0] > 0.0)]" in msg
    assert "exists on some paths only" in msg and "_retval" not in msg
