def design_sketch(x, n):

    def _if_true_1():
        y = x * 2
        return y

    def _if_false_1():
        y = x - 1
        return y
    y = _d2s.ifelse(rt.mean(x) > 0, _if_true_1, _if_false_1, (), ('y',))
    i = 0

    def _loop_test_1(i, y):
        return i < n

    def _loop_body_1(i, y):
        y = y + 1
        i += 1
        return (i, y)
    i, y = _d2s.while_loop(_loop_test_1, _loop_body_1, (i, y), ('i', 'y'))
    return y
