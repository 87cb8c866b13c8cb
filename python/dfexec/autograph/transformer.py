"""AST conversion (like TF's AutoGraph): rewrite a Python function so that
`if`, `while` and `for` whose conditions turn out to be tensors build graph
control flow, while Python-valued ones stay Python.

The passes, in order:
  1. expressions: `and`/`or`/`not`, chained comparisons, `x if c else y`
     and the builtins len/int/float/bool/min/max become _dfx calls that
     decide at run time (lazily, as Python does);
  2. jumps: `break`, `continue` and `return` inside control flow become
     flag variables; the statements after one are guarded by `if not flag`,
     and a loop's condition gets `not flag and ...`;
  3. liveness: for each if/loop, the variables it assigns that are read
     later (its state);
  4. control flow: each if/while/for becomes nested functions (branches or
     body, plus get/set of the state) and one _dfx.if_stmt / while_stmt /
     for_stmt call.
The result is compiled under the user's file name with the user's line
numbers, so tracebacks and messages point at the original source.
"""
import ast
import inspect
import textwrap
import types

from ..errors import ConversionError
from . import runtime

RT = "_dfx"     # the name converted code knows the runtime module by


def _err(filename, node, msg):
    return ConversionError(f"{filename}:{getattr(node, 'lineno', '?')}: {msg}")


def _rt(attr, *args):
    return ast.Call(func=ast.Attribute(value=ast.Name(RT, ast.Load()), attr=attr, ctx=ast.Load()),
                    args=list(args), keywords=[])


def _lambda(expr):
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                      body=expr)


def _name(id_, store=False):
    return ast.Name(id_, ast.Store() if store else ast.Load())


def _assign(id_, value):
    return ast.Assign(targets=[_name(id_, True)], value=value)


def _const(v):
    return ast.Constant(v)


def _scoped_walk(node):
    """ast.walk that does not enter nested function, lambda, class or comprehension scopes."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                                  ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                todo.append(c)
            elif isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield c       # its name is bound here; its body is another scope


def _stmts_walk(stmts):
    for s in stmts:
        yield from _scoped_walk(s)


# ---- 1. expressions ------------------------------------------------------------

_BUILTINS = {"len": "len_", "int": "int_", "float": "float_", "bool": "bool_", "min": "min_", "max": "max_"}


class _Expressions(ast.NodeTransformer):
    def __init__(self, filename):
        self.filename = filename

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        return ast.copy_location(_rt(fn, *[_lambda(v) for v in node.values]), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_rt("not_", node.operand), node)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        left, parts = node.left, []
        for op, right in zip(node.ops, node.comparators):
            parts.append(_lambda(ast.Compare(left=left, ops=[op], comparators=[right])))
            left = right
        return ast.copy_location(_rt("and_", *parts), node)

    def visit_IfExp(self, node):
        self.generic_visit(node)
        loc = ast.Tuple([_const(self.filename), _const(node.lineno)], ast.Load())
        return ast.copy_location(_rt("if_exp", node.test, _lambda(node.body), _lambda(node.orelse), loc), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _BUILTINS:
            node.func = ast.copy_location(ast.Attribute(value=_name(RT), attr=_BUILTINS[node.func.id],
                                                        ctx=ast.Load()), node.func)
        return node


# ---- 2. jumps -------------------------------------------------------------------

class _Loop:
    def __init__(self, k):
        self.brk, self.cont = f"_break_{k}", f"_continue_{k}"
        self.has_brk = self.has_cont = False


DO_RETURN, RETVAL = "_do_return", "_retval"


class _Jumps:
    """Lowers break / continue / return into flags and guards."""

    def __init__(self, filename, fresh):
        self.filename, self.fresh = filename, fresh
        self.lower_returns = False

    def run(self, fdef):
        body = fdef.body
        returns = [n for n in _stmts_walk(body) if isinstance(n, ast.Return)]
        tail = body[-1] if isinstance(body[-1], ast.Return) else None
        self.lower_returns = any(r is not tail for r in returns)
        new, _ = self.block(body, None)
        if self.lower_returns:
            new = ([_assign(DO_RETURN, _const(False)), _assign(RETVAL, _rt("undefined_return"))] + new +
                   [ast.Return(_rt("retval", _name(RETVAL)))])
        fdef.body = new

    def guard(self, flags):
        nots = [_rt("not_", _name(f)) for f in sorted(flags)]
        return nots[0] if len(nots) == 1 else _rt("and_", *[_lambda(n) for n in nots])

    def block(self, stmts, loop):
        out = []
        for i, s in enumerate(stmts):
            new, jumps, terminal = self.stmt(s, loop)
            out.extend(ast.copy_location(n, s) for n in new)
            if terminal:
                return out, jumps          # what follows an unconditional jump never runs
            if jumps:
                rest, more = self.block(stmts[i + 1:], loop)
                if rest:
                    out.append(ast.copy_location(ast.If(test=self.guard(jumps), body=rest, orelse=[]),
                                                 stmts[i + 1]))
                return out, jumps | more
        return out, set()

    def stmt(self, s, loop):
        if isinstance(s, ast.Return):
            if not self.lower_returns:
                return [s], set(), True
            value = s.value if s.value is not None else _const(None)
            return [_assign(RETVAL, value), _assign(DO_RETURN, _const(True))], {DO_RETURN}, True
        if isinstance(s, (ast.Break, ast.Continue)):
            if loop is None:
                raise _err(self.filename, s, "break/continue outside a loop")
            if isinstance(s, ast.Break):
                loop.has_brk = True
                return [_assign(loop.brk, _const(True))], {loop.brk}, True
            loop.has_cont = True
            return [_assign(loop.cont, _const(True))], {loop.cont}, True
        if isinstance(s, ast.If):
            s.body, bj = self.block(s.body, loop)
            s.orelse, oj = self.block(s.orelse, loop)
            s.body = s.body or [ast.Pass()]
            return [s], bj | oj, False
        if isinstance(s, (ast.While, ast.For)):
            return self.loop(s, loop)
        if isinstance(s, (ast.With, ast.Try)):
            jumps = set()
            for field in ("body", "orelse", "finalbody"):
                if getattr(s, field, None):
                    new, j = self.block(getattr(s, field), loop)
                    setattr(s, field, new)
                    jumps |= j
            for h in getattr(s, "handlers", []):
                h.body, j = self.block(h.body, loop)
                jumps |= j
            if jumps:
                raise _err(self.filename, s, "return/break/continue inside `with` or `try` is not supported "
                                             "by dfexec.function")
            return [s], set(), False
        if isinstance(s, (ast.AsyncFor, ast.AsyncWith)):
            raise _err(self.filename, s, "async statements are not supported")
        return [s], set(), False

    def loop(self, s, outer):
        lp = _Loop(self.fresh())
        body, bj = self.block(s.body, lp)
        escaping = bj - {lp.brk, lp.cont}
        if lp.has_cont:
            body = [ast.copy_location(_assign(lp.cont, _const(False)), s)] + body
        s.body = body or [ast.Pass()]
        flags = ({lp.brk} if lp.has_brk else set()) | escaping
        if isinstance(s, ast.While):
            if flags:
                s.test = _rt("and_", *[_lambda(_rt("not_", _name(f))) for f in sorted(flags)], _lambda(s.test))
        else:
            s.extra_test = self.guard(flags) if flags else None
        pre = [_assign(lp.brk, _const(False))] if lp.has_brk else []
        orelse, oj = self.block(s.orelse, outer)
        s.orelse = []
        post = []
        if orelse:
            post = [ast.copy_location(ast.If(test=self.guard(flags), body=orelse, orelse=[]), orelse[0])] \
                if flags else orelse
        return pre + [s] + post, escaping | oj, False


# ---- 3. liveness --------------------------------------------------------------------

def _reads(node):
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _target_names(t):
    return {n.id for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def _modified(stmts):
    out = set()
    for n in _stmts_walk(stmts):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
    return out


class _Liveness:
    """Backward liveness over the (jump-lowered) function body. Records on
    each If/While/For: _live_out (read after it), _modified (assigned in it)
    and, for loops, _live_head (live where the condition is tested)."""

    def block(self, stmts, out):
        for s in reversed(stmts):
            out = self.stmt(s, out)
        return out

    def stmt(self, s, out):
        if isinstance(s, ast.If):
            s._live_out, s._modified = out, _modified(s.body + s.orelse)
            return _reads(s.test) | self.block(s.body, out) | self.block(s.orelse, out)
        if isinstance(s, ast.While):
            s._live_out, s._modified = out, _modified(s.body)
            head = out | _reads(s.test)
            while True:
                new = out | _reads(s.test) | self.block(s.body, head)
                if new == head:
                    break
                head = new
            s._live_head = head
            return head
        if isinstance(s, ast.For):
            targets = _target_names(s.target)
            s._live_out, s._modified = out, _modified(s.body) | targets
            extra = _reads(getattr(s, "extra_test", None))
            head = out | extra
            while True:
                new = out | extra | (self.block(s.body, head) - targets)
                if new == head:
                    break
                head = new
            s._live_head = head
            return head | _reads(s.iter)
        if isinstance(s, ast.Return):
            return _reads(s.value)
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            killed = set()
            for t in targets:
                killed |= _target_names(t)
            loads = set().union(*[_reads(t) for t in targets])
            return (out - killed) | loads | _reads(s.value)
        if isinstance(s, (ast.FunctionDef, ast.ClassDef)):
            return (out - {s.name}) | _reads(s)
        if isinstance(s, ast.With):
            return self.block(s.body, out) | set().union(
                *[_reads(i.context_expr) for i in s.items])
        if isinstance(s, ast.Try):
            fin = self.block(s.finalbody, out) | out
            handlers = set().union(*[self.block(h.body, fin) for h in s.handlers]) if s.handlers else set()
            tail = self.block(s.orelse, fin)
            return self.block(s.body, tail | handlers) | handlers | fin
        return out | _reads(s)


# ---- 4. control flow ------------------------------------------------------------------

class _ControlFlow(ast.NodeTransformer):
    def __init__(self, filename, fresh):
        self.filename, self.fresh = filename, fresh

    def visit_FunctionDef(self, node):      # a user's nested function: not converted
        return node

    visit_Lambda = visit_ClassDef = visit_AsyncFunctionDef = visit_FunctionDef

    def _loc(self, node):
        return ast.Tuple([_const(self.filename), _const(node.lineno)], ast.Load())

    @staticmethod
    def _predefine(names):
        """try: x / except NameError: x = _dfx.Undefined('x'), for each name,
        so the nested functions can declare them nonlocal."""
        return [ast.Try(body=[ast.Expr(_name(n))],
                        handlers=[ast.ExceptHandler(type=_name("NameError"), name=None,
                                                    body=[_assign(n, _rt("Undefined", _const(n)))])],
                        orelse=[], finalbody=[]) for n in names]

    @staticmethod
    def _def(name, params, body, nonlocal_names):
        pre = [ast.Nonlocal(sorted(nonlocal_names))] if nonlocal_names else []
        return ast.FunctionDef(name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params],
                                                             kwonlyargs=[], kw_defaults=[], defaults=[]),
                               body=pre + (body or [ast.Pass()]), decorator_list=[], returns=None)

    def _state_fns(self, k, modified, live):
        """get/set over every variable the statement assigns (so a probe's
        values can be undone), and the names of those read after it."""
        names = sorted(modified)
        get = self._def(f"_get_{k}", [], [ast.Return(ast.Tuple([_name(n) for n in names], ast.Load()))], ())
        set_body = [ast.Assign(targets=[ast.Tuple([_name(n, True) for n in names], ast.Store())],
                               value=_name("_values"))] if names else []
        set_ = self._def(f"_set_{k}", ["_values"], set_body, names)
        return [get, set_], [_name(f"_get_{k}"), _name(f"_set_{k}"),
                             ast.Tuple([_const(n) for n in names], ast.Load()),
                             ast.Tuple([_const(n) for n in sorted(live)], ast.Load())]

    def _emit(self, node, defs, call):
        out = self._predefine(sorted(node._modified)) + defs + [ast.Expr(call)]
        for n in out:
            ast.copy_location(n, node)
        return out

    def visit_If(self, node):
        self.generic_visit(node)
        if not hasattr(node, "_live_out"):
            return node
        k = self.fresh()
        mod = node._modified
        then = self._def(f"_if_true_{k}", [], node.body, mod)
        orelse = self._def(f"_if_false_{k}", [], node.orelse, mod)
        fns, args = self._state_fns(k, mod, mod & node._live_out)
        call = _rt("if_stmt", node.test, _name(then.name), _name(orelse.name), *args, self._loc(node))
        return self._emit(node, [then, orelse] + fns, call)

    def visit_While(self, node):
        self.generic_visit(node)
        if not hasattr(node, "_live_head"):
            return node
        k = self.fresh()
        mod = node._modified
        test = self._def(f"_loop_test_{k}", [], [ast.Return(node.test)], ())
        body = self._def(f"_loop_body_{k}", [], node.body, mod)
        fns, args = self._state_fns(k, mod, mod & node._live_head)
        call = _rt("while_stmt", _name(test.name), _name(body.name), *args, self._loc(node))
        return self._emit(node, [test, body] + fns, call)

    def visit_For(self, node):
        self.generic_visit(node)
        if not hasattr(node, "_live_head"):
            return node
        k = self.fresh()
        mod = node._modified
        defs = []
        extra = getattr(node, "extra_test", None)
        if extra is not None:
            defs.append(self._def(f"_loop_test_{k}", [], [ast.Return(extra)], ()))
        target = ast.Assign(targets=[node.target], value=_name("_item"))
        body = self._def(f"_loop_body_{k}", ["_item"], [ast.copy_location(target, node)] + node.body, mod)
        fns, args = self._state_fns(k, mod, mod & node._live_head)
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and not it.keywords:
            it = ast.copy_location(_rt("range_", *it.args), it)
        call = _rt("for_stmt", it, _name(defs[0].name) if defs else _const(None), _name(body.name), *args,
                   self._loc(node))
        return self._emit(node, defs + [body] + fns, call)


# ---- driver ------------------------------------------------------------------------------

def _check_supported(fdef, filename):
    for n in _stmts_walk(fdef.body):
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            raise _err(filename, n, "generators and coroutines cannot be converted")
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            raise _err(filename, n, "global/nonlocal statements are not supported by dfexec.function")


def parse(fn):
    """(FunctionDef with the user's line numbers, file name) of `fn`."""
    try:
        src = inspect.getsource(fn)
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError) as e:
        raise ConversionError(f"cannot read the source of {getattr(fn, '__name__', fn)!r} to convert it "
                              f"({e}); define it in a file") from None
    tree = ast.parse(textwrap.dedent(src))
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, ast.FunctionDef):
        raise ConversionError(f"{filename}:{fn.__code__.co_firstlineno}: only `def` functions can be converted "
                              "(not lambdas or async functions)")
    ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)
    fdef.decorator_list = []
    return fdef, filename


def transform(fdef, filename):
    """Runs the four passes on `fdef` in place."""
    counter = iter(range(1, 1 << 30))

    def fresh():
        return next(counter)
    _check_supported(fdef, filename)
    fdef.body = [_Expressions(filename).visit(s) for s in fdef.body]
    _Jumps(filename, fresh).run(fdef)
    _Liveness().block(fdef.body, set())
    cf = _ControlFlow(filename, fresh)
    new = []
    for s in fdef.body:
        r = cf.visit(s)
        new.extend(r if isinstance(r, list) else [r])
    fdef.body = new
    return ast.fix_missing_locations(fdef)


def source(fn):
    """The converted source of `fn`, for reading (ast.unparse)."""
    fdef, filename = parse(fn)
    return ast.unparse(transform(fdef, filename))


def convert(fn):
    """The converted version of Python function `fn` (same signature and globals)."""
    fdef, filename = parse(fn)
    transform(fdef, filename)
    free = fn.__code__.co_freevars
    factory = ast.FunctionDef(
        name="_dfx_factory", args=ast.arguments(posonlyargs=[], args=[ast.arg(RT)] + [ast.arg(v) for v in free],
                                                kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[fdef, ast.Return(_name(fdef.name))], decorator_list=[], returns=None)
    ast.copy_location(factory, fdef)
    module = ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
    code = compile(module, filename, "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in fcode.co_consts if isinstance(c, types.CodeType) and c.co_name == fdef.name)
    cells = dict(zip(free, fn.__closure__ or ()))
    closure = tuple(types.CellType(runtime) if v == RT else cells[v] for v in inner.co_freevars)
    out = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    out.__kwdefaults__ = fn.__kwdefaults__
    out.__dfx_converted__ = True
    return out
