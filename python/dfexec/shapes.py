"""Static shapes: tuples of ints with None for an unknown dimension, or
None for an unknown rank. Only what the ops need to check their arguments
and to keep loop variables' shapes fixed."""


def broadcast(a, b, what="operands"):
    """numpy/TensorFlow broadcasting of two static shapes."""
    if a is None or b is None:
        return None
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        else:
            raise ValueError(f"{what} of shapes {fmt(a)} and {fmt(b)} cannot be broadcast together")
    return tuple(reversed(out))


def compatible(a, b):
    """True when some concrete shape fits both."""
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def merge(a, b):
    """The most specific shape compatible with both (they must be compatible)."""
    if a is None:
        return b
    if b is None:
        return a
    return tuple(x if x is not None else y for x, y in zip(a, b))


def relax(a, b):
    """The most specific shape that both fit (unknown where they differ)."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def num_elements(s):
    if s is None or any(d is None for d in s):
        return None
    n = 1
    for d in s:
        n *= d
    return n


def fmt(s):
    if s is None:
        return "<unknown rank>"
    return "(" + ", ".join("?" if d is None else str(d) for d in s) + ("," if len(s) == 1 else "") + ")"


def norm_axis(axis, rank, what="axis"):
    if rank is None:
        return axis
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0
