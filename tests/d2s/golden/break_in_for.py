def break_in_for(xs, limit):
    total = 0.0
    _brk_1 = False

    def _loop_test_1(_brk_1, total):
        return _d2s.not_(_brk_1)

    def _for_body_1(v, _brk_1, total):

        def _if_true_1(_brk_1):
            _brk_1 = True
            return _brk_1

        def _if_false_1(_brk_1):
            return _brk_1
        _brk_1 = _d2s.ifelse(v > limit, _if_true_1, _if_false_1, (_brk_1,), ('_brk_1',))

        def _if_true_2(total):
            total = total + v
            return total

        def _if_false_2(total):
            return total
        total = _d2s.ifelse(_d2s.not_(_brk_1), _if_true_2, _if_false_2, (total,), ('total',))
        return (_brk_1, total)
    _brk_1, total = _d2s.for_loop(xs, _for_body_1, (_brk_1, total), ('_brk_1', 'total'), _loop_test_1)
    return total
