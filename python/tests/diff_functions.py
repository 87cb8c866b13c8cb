"""Python functions with tensor-dependent control flow, for the differential
tests: each runs once as plain Python on numpy values and once converted by
dfexec.function, and the results must agree. CASES lists each function with
its inputs and the graph control flow its conversion must contain ("loop":
a LoopCond, "cond": a Switch outside any loop's own lowering)."""
import numpy as np

import dfexec

i64, i32, f64, f32 = np.int64, np.int32, np.float64, np.float32


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def sum_to(n):
    s = 0
    i = 0
    while i < n:
        s += i
        i += 1
    return s


def float_halving(x):
    k = 0
    while x > 1.0:
        x = x / 2.0
        k += 1
    return x, k


def newton_sqrt(a):
    x = a
    it = 0
    while abs(x * x - a) > 1e-9 * a and it < 100:
        x = 0.5 * (x + a / x)
        it += 1
    return x


def nested_count(n, m):
    total = 0
    i = 0
    while i < n:
        j = 0
        while j < m:
            total += i * j
            j += 1
        i += 1
    return total


def triangle_nested_for(n):
    t = 0
    for i in range(n):
        for j in range(i):
            t += j + 1
    return t


def first_multiple(n, k):
    i = 1
    while True:
        if (i * n) % k == 0:
            break
        i += 1
    return i * n


def sum_skip_multiples(n, k):
    s = 0
    for i in range(n):
        if i % k == 0:
            continue
        s += i
    return s


def while_continue(n):
    i = 0
    odd = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        odd += i
    return odd


def early_return_loop(x):
    while x > 0:
        if x % 7 == 3:
            return x
        x = x - 1
    return -1


def early_return_for(v, target):
    for i in range(len(v)):
        if v[i] == target:
            return i
    return -1


def sign_elif(x):
    if x > 0:
        r = 1
    elif x < 0:
        r = -1
    else:
        r = 0
    return r


def piecewise(x):
    if x < -1.0:
        y = -x * 2.0
    elif x < 1.0:
        y = x * x
    elif x < 3.0:
        y = x + 1.0
    else:
        y = 10.0
    return y


def cond_in_loop_float(n):
    acc = 0.0
    for i in range(n):
        if i % 3 == 0:
            acc = acc + 0.5
        else:
            acc = acc * 1.1
    return acc


def loop_in_cond(x, n):
    if x > 0:
        i = 0
        while i < n:
            x = x * 2
            i += 1
    else:
        x = -x
    return x


def zero_trip_while(n):
    x = 5
    while n < 0:
        x += 1
        n += 1
    return x


def zero_trip_for(n):
    s = 100
    for i in range(n):
        s -= i
    return s


def and_or_not(x, y):
    if x > 0 and y > 0:
        r = 1
    elif x > 0 or y > 0:
        r = 2
    elif not (x == y):
        r = 3
    else:
        r = 4
    return r


def lazy_and_index(v, limit):
    i = 0
    while i < len(v) and v[i] < limit:
        i += 1
    return i


def chained_compare(x):
    if 0 < x < 10:
        r = x * 10
    else:
        r = x
    return r


def ternary(x):
    y = x * 2 if x > 3 else x - 1
    return y


def range_start_step(n):
    s = 0
    for i in range(2, n, 3):
        s += i
    return s


def range_negative_step(n):
    s = 0
    for i in range(n, 0, -2):
        s = s * 2 + i
    return s


def for_over_tensor(v):
    s = 0.0
    for x in v:
        if x > 0:
            s += x
    return s


def for_over_rows(m):
    best = -1.0e30
    for row in m:
        t = row[0] + row[1]
        if t > best:
            best = t
    return best


def vector_state(v, n):
    for i in range(n):
        v = v * 0.5 + 1.0
    return v


def matmul_power(m, k):
    r = m
    i = 1
    while i < k:
        r = r @ m
        i += 1
    return r


def loop_var_defined_inside(n):
    last = 0
    for i in range(n):
        sq = i * i
        last = sq + 1
    return last


def loop_target_after_loop(n):
    i = -7
    for i in range(n):
        pass
    return i


def break_inner_only(n):
    total = 0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            total += 1
    return total


def return_from_nested_loop(n, target):
    for i in range(n):
        for j in range(n):
            if i * j == target:
                return i * 100 + j
    return -1


def python_condition_stays_python(x, mode="double"):
    if mode == "double":
        x = x * 2
    else:
        x = x + 1
    k = 0
    while k < 3:
        if x > 10:
            x = x - 3
        k += 1
    return x


def mixed_python_range_tensor_break(x):
    for _ in range(10):
        if x > 100:
            break
        x = x * 3
    return x


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


def count_primes(n):
    c = 0
    for k in range(2, n):
        p = True
        d = 2
        while d * d <= k and p:
            if k % d == 0:
                p = False
            d += 1
        if p:
            c += 1
    return c


def digit_sum(n):
    s = 0
    while n > 0:
        s += n % 10
        n = n // 10
    return s


def binary_search(v, x):
    lo = 0
    hi = len(v)
    while lo < hi:
        mid = (lo + hi) // 2
        if v[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def bubble_passes(v):
    passes = 0
    swapped = True
    while swapped:
        swapped = False
        for i in range(len(v) - 1):
            if v[i] > v[i + 1]:
                swapped = True
        passes += 1
        if passes > 3:
            break
    return passes


def max_run(v):
    best = 0
    cur = 0
    for x in v:
        if x > 0:
            cur += 1
            if cur > best:
                best = cur
        else:
            cur = 0
    return best


def bool_flags(n):
    seen_big = False
    i = 0
    while i < n and not seen_big:
        if i * i > 50:
            seen_big = True
        i += 1
    return i, seen_big


def float_loop_var(x):
    t = 0.0
    while t < x:
        t = t + 0.75
    return t


def int_and_float_vars(n):
    i = 0
    f = 1.0
    while i < n:
        f = f * 1.5
        i += 2
    return i, f


def power_mod(b, e, m):
    r = 1
    b = b % m
    while e > 0:
        if e % 2 == 1:
            r = (r * b) % m
        e = e // 2
        b = (b * b) % m
    return r


def python_loop_tensor_if(v, lo):
    out = v
    for k in range(3):          # a Python loop (unrolled), with a graph cond in each copy
        if k == 1:
            out = out + 1.0
        if out[0] > lo:
            out = out - lo
    return out


@dfexec.function
def _helper_square_until(x, limit):
    while x < limit:
        x = x * x
    return x


def calls_other_function(x):
    y = _helper_square_until(x, 1000)
    if y > 5000:
        y = y // 2
    return y


def _helper_square_until_py(x, limit):
    while x < limit:
        x = x * x
    return x


def calls_other_function_py(x):
    y = _helper_square_until_py(x, 1000)
    if y > 5000:
        y = y // 2
    return y


def nested_cond_depth3(x, y):
    if x > 0:
        if y > 0:
            if x > y:
                r = x - y
            else:
                r = y - x
        else:
            r = x
    else:
        r = y
    return r


def loop_else(n):
    found = -1
    i = 0
    while i < n:
        if i * i == 49:
            found = i
            break
        i += 1
    else:
        found = -2
    return found


def builtins_on_tensors(x, lo, hi):
    steps = 0
    while x > hi:
        x = max(x - 3, lo)
        steps += 1
    return min(x, hi) + int(bool(steps)), float(steps)


CASES = [
    # (function, python reference or None (the same), inputs, required graph control flow)
    (collatz_steps, None, [(i64(1),), (i64(6),), (i64(27),), (i64(97),)], {"loop", "cond"}),
    (gcd, None, [(i64(48), i64(18)), (i64(17), i64(5)), (i64(7), i64(0)), (i64(100), i64(75))], {"loop"}),
    (sum_to, None, [(i32(0),), (i32(1),), (i32(10),), (i32(1000),)], {"loop"}),
    (float_halving, None, [(f64(0.5),), (f64(3.0),), (f64(1000.0),)], {"loop"}),
    (newton_sqrt, None, [(f64(2.0),), (f64(49.0),), (f64(1e6),)], {"loop"}),
    (nested_count, None, [(i64(0), i64(3)), (i64(3), i64(0)), (i64(4), i64(5))], {"loop"}),
    (triangle_nested_for, None, [(i32(0),), (i32(1),), (i32(6),)], {"loop"}),
    (first_multiple, None, [(i64(4), i64(6)), (i64(7), i64(7)), (i64(5), i64(12))], {"loop", "cond"}),
    (sum_skip_multiples, None, [(i64(0), i64(3)), (i64(10), i64(3)), (i64(20), i64(4))], {"loop", "cond"}),
    (while_continue, None, [(i64(0),), (i64(7),), (i64(10),)], {"loop", "cond"}),
    (early_return_loop, None, [(i64(0),), (i64(3),), (i64(20),), (i64(100),)], {"loop", "cond"}),
    (early_return_for, None, [(np.array([5, 3, 9, 3], np.int64), i64(3)), (np.array([5, 3, 9], np.int64), i64(4)),
                              (np.array([1, 2], np.int64), i64(2))], {"loop", "cond"}),
    (sign_elif, None, [(f64(2.5),), (f64(-1.0),), (f64(0.0),)], {"cond"}),
    (piecewise, None, [(f64(-3.0),), (f64(0.5),), (f64(2.0),), (f64(7.0),)], {"cond"}),
    (cond_in_loop_float, None, [(i64(0),), (i64(1),), (i64(7),)], {"loop", "cond"}),
    (loop_in_cond, None, [(i64(3), i64(4)), (i64(-3), i64(4)), (i64(5), i64(0))], {"loop", "cond"}),
    (zero_trip_while, None, [(i64(0),), (i64(5),), (i64(-3),)], {"loop"}),
    (zero_trip_for, None, [(i64(0),), (i64(-2),), (i64(4),)], {"loop"}),
    (and_or_not, None, [(i64(1), i64(1)), (i64(1), i64(-1)), (i64(-1), i64(-2)), (i64(-1), i64(-1))], {"cond"}),
    (lazy_and_index, None, [(np.array([1, 2, 3, 9, 1], np.int64), i64(5)), (np.array([1, 2], np.int64), i64(5)),
                            (np.array([7, 1], np.int64), i64(5))], {"loop", "cond"}),
    (chained_compare, None, [(i64(5),), (i64(0),), (i64(10),), (i64(-4),)], {"cond"}),
    (ternary, None, [(i64(5),), (i64(1),)], {"cond"}),
    (range_start_step, None, [(i64(0),), (i64(2),), (i64(3),), (i64(20),)], {"loop"}),
    (range_negative_step, None, [(i64(0),), (i64(1),), (i64(9),)], {"loop"}),
    (for_over_tensor, None, [(np.array([1.5, -2.0, 3.0], np.float64),), (np.zeros(0, np.float64),),
                             (np.array([-1.0], np.float64),)], {"loop", "cond"}),
    (for_over_rows, None, [(np.array([[1.0, 2.0], [5.0, -1.0], [0.0, 3.5]]),), (np.array([[-1.0, -2.0]]),)],
     {"loop", "cond"}),
    (vector_state, None, [(np.array([1.0, 2.0, 3.0]), i64(0)), (np.array([1.0, 2.0, 3.0]), i64(5))], {"loop"}),
    (matmul_power, None, [(np.array([[1.0, 1.0], [1.0, 0.0]]), i64(1)), (np.array([[1.0, 1.0], [1.0, 0.0]]), i64(10))],
     {"loop"}),
    (loop_var_defined_inside, None, [(i64(0),), (i64(1),), (i64(6),)], {"loop"}),
    (loop_target_after_loop, None, [(i64(0),), (i64(1),), (i64(5),)], {"loop"}),
    (break_inner_only, None, [(i64(0),), (i64(1),), (i64(5),)], {"loop", "cond"}),
    (return_from_nested_loop, None, [(i64(5), i64(6)), (i64(5), i64(7)), (i64(0), i64(0)), (i64(4), i64(0))],
     {"loop", "cond"}),
    (python_condition_stays_python, None, [(i64(1),), (i64(6),), (i64(20),)], {"cond"}),
    (mixed_python_range_tensor_break, None, [(i64(1),), (i64(50),), (i64(200),)], {"cond"}),
    (fib, None, [(i64(0),), (i64(1),), (i64(2),), (i64(30),)], {"loop"}),
    (is_prime, None, [(i64(0),), (i64(2),), (i64(9),), (i64(97),), (i64(91),)], {"loop", "cond"}),
    (count_primes, None, [(i64(2),), (i64(3),), (i64(30),)], {"loop", "cond"}),
    (digit_sum, None, [(i64(0),), (i64(7),), (i64(98765),)], {"loop"}),
    (binary_search, None, [(np.array([1, 3, 5, 7, 9], np.int64), i64(6)), (np.array([1, 3, 5, 7, 9], np.int64), i64(0)),
                           (np.array([1, 3, 5, 7, 9], np.int64), i64(10)), (np.array([2], np.int64), i64(2))],
     {"loop", "cond"}),
    (bubble_passes, None, [(np.array([1, 2, 3], np.int64),), (np.array([3, 2, 1], np.int64),)], {"loop", "cond"}),
    (max_run, None, [(np.array([1, 1, -1, 1, 1, 1, 0], np.int64),), (np.array([-1, -1], np.int64),),
                     (np.zeros(0, np.int64),)], {"loop", "cond"}),
    (bool_flags, None, [(i64(0),), (i64(5),), (i64(20),)], {"loop", "cond"}),
    (float_loop_var, None, [(f64(0.0),), (f64(1.0),), (f64(10.3),)], {"loop"}),
    (int_and_float_vars, None, [(i64(0),), (i64(1),), (i64(9),)], {"loop"}),
    (power_mod, None, [(i64(2), i64(10), i64(1000)), (i64(3), i64(0), i64(7)), (i64(7), i64(13), i64(11))],
     {"loop", "cond"}),
    (python_loop_tensor_if, None, [(np.array([0.5, 2.0]), f64(0.25)), (np.array([9.0, 2.0]), f64(2.0))],
     {"cond"}),
    (calls_other_function, calls_other_function_py, [(i64(2),), (i64(3),), (i64(2000),)], {"loop", "cond"}),
    (nested_cond_depth3, None, [(i64(5), i64(2)), (i64(2), i64(5)), (i64(3), i64(-1)), (i64(-1), i64(4))], {"cond"}),
    (loop_else, None, [(i64(3),), (i64(10),), (i64(0),)], {"loop", "cond"}),
    (builtins_on_tensors, None, [(i64(20), i64(5), i64(9)), (i64(3), i64(0), i64(9)), (i64(50), i64(40), i64(41))],
     {"loop"}),
]
