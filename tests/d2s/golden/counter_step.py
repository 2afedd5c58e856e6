def step(self, x):

    def _loop_test_1(_self_count_1, x):
        self.count = _self_count_1
        return rt.sum(x) < 10

    def _loop_body_1(_self_count_1, x):
        self.count = _self_count_1
        x = x * 2
        self.count = self.count + 1
        return (self.count, x)
    self.count, x = _d2s.while_loop(_loop_test_1, _loop_body_1, (_d2s.attr(self, 'count'), x), ('self.count', 'x'))
    return x
