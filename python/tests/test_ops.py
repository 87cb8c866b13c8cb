"""dfexec.ops against numpy: arithmetic with broadcasting and promotion,
slicing, reductions, shapes, and the public while_loop / cond."""
import numpy as np
import pytest

import dfexec
from dfexec import ops

rng = np.random.default_rng(7)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((4,))
I = rng.integers(-20, 20, (3, 4)).astype(np.int32)
J = rng.integers(1, 7, (4,)).astype(np.int32)


def run(build, *feeds):
    """Builds `build(*placeholders)` and runs it on numpy `feeds`."""
    g = dfexec.Graph()
    with g.as_default():
        phs = [ops.placeholder(np.asarray(f).dtype, np.shape(f), name=f"in{i}") for i, f in enumerate(feeds)]
        out = build(*phs)
    return dfexec.Session(g).run(out, dict(zip(phs, feeds)))


BINARY = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("truediv", lambda a, b: a / b), ("floordiv", lambda a, b: a // b), ("mod", lambda a, b: a % b),
    ("lt", lambda a, b: a < b), ("ge", lambda a, b: a >= b), ("eq", lambda a, b: a == b),
    ("ne", lambda a, b: a != b),
]


@pytest.mark.parametrize("name,f", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("x,y", [(A, B), (I, J), (I, B), (A[:, :1], B)], ids=["ff", "ii", "if", "bcast"])
def test_binary_ops_match_numpy(name, f, x, y):
    got = run(f, x, y)
    want = f(x, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_python_scalars_are_weak():
    assert run(lambda x: x * 2, I).dtype == np.int32
    assert run(lambda x: x * 2.5, I).dtype == np.float64
    assert run(lambda x: 1.5 - x, A.astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(run(lambda x: 2 ** x, J), 2 ** J)


def test_unary_and_math():
    np.testing.assert_allclose(run(lambda x: ops.exp(-abs(x)) + ops.sqrt(ops.square(x)), A),
                               np.exp(-abs(A)) + np.abs(A), rtol=1e-12)
    np.testing.assert_allclose(run(lambda x: ops.sigmoid(x), A), 1 / (1 + np.exp(-A)), rtol=1e-12)
    np.testing.assert_allclose(run(lambda x: ops.relu(x) - ops.softmax(x), A),
                               np.maximum(A, 0) - np.exp(A) / np.exp(A).sum(1, keepdims=True), rtol=1e-12)
    assert run(lambda x: ops.exp(x), J).dtype == np.float64      # integers are taken as float64
    np.testing.assert_array_equal(run(lambda x: -x, I), -I)
    np.testing.assert_array_equal(run(lambda x: ops.cast(x, "int32"), np.array([1.7, -1.7])), [1, -1])


def test_matmul_and_reductions():
    M = rng.standard_normal((4, 5))
    np.testing.assert_allclose(run(lambda a, m: a @ m, A, M), A @ M, rtol=1e-12)
    np.testing.assert_allclose(run(lambda a: ops.matmul(a, a, transpose_b=True), A), A @ A.T, rtol=1e-12)
    for f, nf in [(ops.reduce_sum, np.sum), (ops.reduce_max, np.max), (ops.reduce_mean, np.mean),
                  (ops.reduce_prod, np.prod)]:
        np.testing.assert_allclose(run(lambda a: f(a), A), nf(A), rtol=1e-12)
        np.testing.assert_allclose(run(lambda a: f(a, axis=1, keepdims=True), A), nf(A, 1, keepdims=True),
                                   rtol=1e-12)
    np.testing.assert_array_equal(run(lambda a: ops.argmax(a, 1), A), np.argmax(A, 1))
    assert run(lambda i: ops.reduce_any(i > 15), I) == (I > 15).any()


@pytest.mark.parametrize("key", [
    (1,), (slice(None), 2), (slice(1, None), slice(None, None, 2)), (-1,), (Ellipsis, 0), (None, 1),
    (slice(None, None, -1),), (slice(0, 2), slice(-3, -1)),
])
def test_slicing_matches_numpy(key):
    got = run(lambda a: a[key], A)
    np.testing.assert_array_equal(got, A[key])
    g = dfexec.Graph()
    with g.as_default():
        assert ops.constant(A)[key].shape == A[key].shape      # static shape agrees too


def test_tensor_indices_and_gather():
    np.testing.assert_array_equal(run(lambda a, i: a[i, 1:], A, np.int64(2)), A[2, 1:])
    np.testing.assert_array_equal(run(lambda a, i: a[i], A, np.array([2, 0])), A[[2, 0]])
    np.testing.assert_array_equal(run(lambda a: ops.gather(a, [3, 1], axis=1), A), A[:, [3, 1]])


def test_shape_ops():
    np.testing.assert_array_equal(run(lambda a: ops.reshape(a, [2, -1]), A), A.reshape(2, -1))
    np.testing.assert_array_equal(run(lambda a: ops.transpose(a), A), A.T)
    np.testing.assert_array_equal(run(lambda a, b: ops.concat([a, a], 0), A, B), np.concatenate([A, A]))
    np.testing.assert_array_equal(run(lambda b: ops.stack([b, b * 2], 1), B), np.stack([B, B * 2], 1))
    np.testing.assert_array_equal(run(lambda a: ops.expand_dims(a, 0), A), A[None])
    np.testing.assert_array_equal(run(lambda a: ops.squeeze(a[:, :1]), A), A[:, 0])
    np.testing.assert_array_equal(run(lambda a: ops.shape(a), A), [3, 4])
    np.testing.assert_array_equal(run(lambda a: ops.where(a > 0, a, 0.0), A), np.where(A > 0, A, 0.0))
    np.testing.assert_array_equal(run(lambda a: ops.zeros_like(a) + ops.ones([4]), A), np.ones((3, 4)))
    np.testing.assert_array_equal(run(lambda j: ops.range(0, 10, 3) * j[0], J), np.arange(0, 10, 3) * J[0])
    np.testing.assert_array_equal(run(lambda j: ops.one_hot(j, 8), J), np.eye(8, dtype=np.float32)[J])
    with pytest.raises(ValueError, match="cannot reshape"):
        run(lambda a: ops.reshape(a, [5, 5]), A)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        run(lambda a: a + ops.ones([3]), A)


def test_dtype_promotion_between_tensors():
    out = run(lambda i, a: i + a, I, A.astype(np.float32))
    assert out.dtype == np.result_type(np.int32, np.float32)
    out = run(lambda i, j: i * j.astype("int64") if False else i * ops.cast(j, "int64"), I, J)
    assert out.dtype == np.int64


def test_public_while_loop_and_cond():
    def build(n, x):
        i, acc = ops.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 1.5), (0, x))
        big = ops.cond(acc[0] > 10.0, lambda: acc * 0.0, lambda: acc)
        return i, big
    i, out = run(build, np.int64(3), np.array([1.0, 2.0]))
    assert i == 3
    np.testing.assert_allclose(out, np.array([1.0, 2.0]) * 1.5 ** 3)
    i, out = run(build, np.int64(7), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(out, [0.0, 0.0])
    with pytest.raises(TypeError, match="loop variable 0 has dtype int64 before but float64"):
        run(lambda n: ops.while_loop(lambda i: i < n, lambda i: i * 1.5, [n]), np.int64(2))


def test_names_and_scopes():
    g = dfexec.Graph()
    with g.as_default():
        x = ops.placeholder("float32", [2], name="x")
        y = ops.add(x, 1.0, name="y")
        y2 = ops.add(x, 1.0, name="y")
    assert y.name == "y:0" and y2.name == "y_1:0"
    assert repr(x) == "<dfexec.Tensor 'x:0' shape=(2,) dtype=float32>"
