def logic_and_builtins(x, items):

    def _if_true_1():
        _d2s.print_('items:', _d2s.len_(items))

    def _if_false_1():
        pass
    _d2s.ifelse(_d2s.truth_or_(_d2s.truth_and_(rt.max(x) > 0, lambda: _d2s.len_(items) > 1), lambda: _d2s.not_(items)), _if_true_1, _if_false_1, (), ())
    return _d2s.shape(x)[0]
