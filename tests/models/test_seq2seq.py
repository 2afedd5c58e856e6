"""Seq2seq with attention: teacher-forced training, greedy and beam-search decoding loops that
stop on a tensor condition (all finished) or at max_len; eager vs to_static."""
import numpy as np
import pytest
from zoo_harness import assert_outputs_equal, check_dynamic_batch, check_eval, check_training

import d2s
import runtime as rt
from examples.models import Seq2Seq
from examples.models.seq2seq import EOS
from runtime.static import InputSpec

VOCAB = 12
rng = np.random.RandomState(0)
SRC = rng.randint(3, VOCAB, (8, 5)).astype("int64")
LEN = np.array([5, 3, 4, 1, 2, 5, 5, 2], "int64")
# With model() below, rows 1 and 7 finish early (greedy after 1 step, beam after 3), the
# others run to max_len; a batch of only early rows stops on the tensor condition.
EARLY, ALL = [1, 7], list(range(8))

def batch(rows):
    return rt.to_tensor(SRC[rows]), rt.to_tensor(LEN[rows])


def model():
    rt.seed(0)
    m = Seq2Seq(vocab_size=VOCAB)
    bias = m.classifier.bias.numpy().copy()
    bias[EOS] = 0.0  # untrained, EOS is likelier for some sources than for others
    m.classifier.bias.set_value(bias)
    m.eval()
    return m


def decode_both(method, rows):
    m = model()
    static = d2s.to_static(getattr(m, method))
    with rt.no_grad():
        want = getattr(m, method)(*batch(rows))
        got = static(*batch(rows))
    return got, want


@pytest.mark.parametrize("rows, steps", [(EARLY, 3), (ALL, 8)])
def test_beam_search_stops_on_tensor_condition(rows, steps):
    got, want = decode_both("beam_search", rows)
    assert want.shape == [len(rows), steps]
    assert_outputs_equal(got, want, 0, "beam search")


@pytest.mark.parametrize("rows, steps", [(EARLY, 1), (ALL, 8)])
def test_greedy_search_stops_on_tensor_condition(rows, steps):
    got, want = decode_both("greedy_search", rows)
    assert want.shape == [len(rows), steps]
    assert_outputs_equal(got, want, 0, "greedy search")


def test_beam_search_dynamic_batch_one_program():
    m = model()
    static = d2s.to_static(m.beam_search, input_spec=[InputSpec([None, 5], "int64"),
                                                      InputSpec([None], "int64")])
    for rows in (EARLY, ALL, [0, 3, 4]):
        with rt.no_grad():
            assert_outputs_equal(static(*batch(rows)), m.beam_search(*batch(rows)), 0,
                                 f"beam search rows {rows}")
    assert len(static.program_cache) == 1


def targets(rows, seed):
    r = np.random.RandomState(seed)
    tgt = r.randint(3, VOCAB, (len(rows), 6)).astype("int64")
    tgt[:, 0] = 1
    return rt.to_tensor(tgt)


def test_teacher_forcing_eval():
    check_eval(model(), batch(ALL) + (targets(ALL, 0),), batch(EARLY) + (targets(EARLY, 1),))


def test_training():
    rt.seed(1)
    m = Seq2Seq(vocab_size=VOCAB)
    data = [batch(ALL) + (targets(ALL, s),) for s in range(5)]

    def loss_of(model, src, src_len, tgt):
        logits = model(src, src_len, tgt[:, :-1])
        return rt.nn.functional.cross_entropy(rt.reshape(logits, [-1, VOCAB]),
                                              rt.reshape(tgt[:, 1:], [-1]))
    check_training(m, data, loss_of)


def test_dynamic_batch():
    specs = [InputSpec([None, 5], "int64"), InputSpec([None], "int64"),
             InputSpec([None, 6], "int64")]
    check_dynamic_batch(model(), specs, batch(EARLY) + (targets(EARLY, 0),),
                        batch(ALL) + (targets(ALL, 1),))
