def early_return(x):

    def _if_true_1():
        _retval = x * 2
        return _retval

    def _if_false_1():
        y = -x
        _retval = y
        return _retval
    _retval = _d2s.ifelse(rt.sum(x) > 0, _if_true_1, _if_false_1, (), ('_retval',))
    return _retval
