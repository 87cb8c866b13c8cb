"""Nested structures of values (lists, tuples, namedtuples, dicts), as
function results and loop/cond state are: flatten to leaves and rebuild."""


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


def flatten(x):
    """The leaves of `x`, depth first (dicts in key order)."""
    out = []
    _flatten(x, out)
    return out


def _flatten(x, out):
    if isinstance(x, dict):
        for k in x:
            _flatten(x[k], out)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _flatten(v, out)
    else:
        out.append(x)


def pack(structure, leaves):
    """`structure` with its leaves replaced, in order, by `leaves`."""
    it = iter(leaves)
    out = _pack(structure, it)
    if next(it, it) is not it:
        raise ValueError("more leaves than the structure holds")
    return out


def _pack(s, it):
    if isinstance(s, dict):
        return type(s)((k, _pack(s[k], it)) for k in s)
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return type(s)(*[_pack(v, it) for v in s])
    if isinstance(s, (list, tuple)):
        return type(s)(_pack(v, it) for v in s)
    return next(it)


def same_structure(a, b):
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b)
                and all(same_structure(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(same_structure(x, y) for x, y in zip(a, b)))
    return True
