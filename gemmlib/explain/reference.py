"""The reference GEMM, D = α·A·B + β·C, computed one step at a time.

This module is the teaching core of the Accumulate page: it parses and checks
the matrices a person types, makes random ones from a seed, and records a
*trace* of the product under three loop orders, so a page can replay it.

Loop orders (all compute the same D; they differ in what they touch when):

- ``inner``  — inner product, loops (i, j, k): one multiply-add per step; each
  D[i,j] is finished (a dot product of row i of A and column j of B) before the
  next one starts. Naively every operand is read from memory at every use, so
  A and B are each read M·N·K times.
- ``outer``  — outer product, k outermost: step k adds the rank-1 matrix
  A[:,k] ⊗ B[k,:] to all of D. Each A and B element is read once (M·K + K·N
  loads) but all of D is updated at every step: D must stay in fast storage,
  or it is read and written K times.
- ``tiled``  — blocks of D (tile_m × tile_n), k in tiles of tile_k: one step
  loads an A tile and a B tile once and does tile_m·tile_n·tile_k multiply-adds
  with them. A is read ⌈N/tile_n⌉ times and B ⌈M/tile_m⌉ times instead of
  N and M times: that reuse is what real GEMM kernels are built on.

The α/β epilogue (D = α·acc + β·C) is always the last step of a trace.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gemmlib.core import format as fmt
from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Msg, Translate, english

MAX_DIM = 16  # largest M, N or K the explainer traces (every step is kept)
MAX_ABS = 1e9  # largest magnitude accepted in a typed cell
LOOP_ORDERS: tuple[str, ...] = ("inner", "outer", "tiled")
LOOP_ORDER_LABELS: dict[str, str] = {  # N_-marked: translated where shown
    "inner": N_("inner product (i, j, k)"),
    "outer": N_("outer product (k outermost)"),
    "tiled": N_("tiled (blocks of D, k in tiles)"),
}
LOOP_ORDER_NAMES: dict[str, str] = {"inner": N_("inner"), "outer": N_("outer"), "tiled": N_("tiled")}  # short

ARTICLE_A = ((1.0, 2.0, 3.0), (4.0, 5.0, 6.0))
ARTICLE_B = ((7.0, 8.0), (9.0, 10.0), (11.0, 12.0))
ARTICLE_D = ((58.0, 64.0), (139.0, 154.0))

Matrix = tuple[tuple[float, ...], ...]
Cell = tuple[int, int]


# ----------------------------------------------------------------------------- parsing


def _cell_value(raw: object, name: str, r: int, c: int) -> float:
    where = Msg(N_("{name} row {row}, column {col}"), name=name, row=r + 1, col=c + 1)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise InputError(N_("{where} is empty; type a number there"), where=where)
    if isinstance(raw, bool):
        raise InputError(N_("{where} is {value!r}, not a number"), where=where, value=raw)
    try:
        v = float(raw.strip()) if isinstance(raw, str) else float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(N_("{where}: {value!r} is not a number"), where=where, value=raw) from None
    if math.isnan(v):
        raise InputError(N_("{where} is empty or not a number; type a number there"), where=where)
    if math.isinf(v) or abs(v) > MAX_ABS:
        raise InputError(N_("{where} is {value!r}; keep values within ±{limit:.0e}"), where=where, value=raw,
                         limit=MAX_ABS)
    return v


def _split_text(text: str) -> list[list[str]]:
    s = text.strip()
    if s.startswith("[") or s.startswith("("):
        # Python/numpy style: [[1, 2], [3, 4]] -> rows at each closing bracket
        inner = s.strip("[]() \n\t")
        rows = re.split(r"[\]\)]\s*,?\s*[\[\(]", inner)
    else:
        rows = re.split(r"[;\n]", s)
    out = []
    for row in rows:
        row = row.strip().strip("[]()").strip()
        if not row:
            continue
        if "," in row:  # commas separate cells: an empty one between two commas is an error
            out.append([t.strip() for t in row.rstrip(",").split(",")])
        else:
            out.append(row.split())
    return out


def parse_matrix(data: str | Sequence[Sequence[object]] | np.ndarray, name: str = "matrix",
                 max_dim: int = MAX_DIM) -> np.ndarray:
    """A float64 matrix from text ("1 2 3; 4 5 6", one row per line, commas or spaces,
    or ``[[1,2],[3,4]]``) or from nested lists / a DataFrame's values.

    Raises InputError, naming the row and column, for empty or non-numeric
    cells, ragged rows, an empty matrix or one larger than ``max_dim``.
    """
    if hasattr(data, "to_numpy") and not isinstance(data, np.ndarray):  # pandas DataFrame
        data = data.to_numpy(dtype=object).tolist()
    if isinstance(data, str):
        rows: list[list[object]] = _split_text(data)  # type: ignore[assignment]
    elif isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise InputError(N_("{name} must be a 2-D matrix, got 1 dimension") if data.ndim == 1 else
                             N_("{name} must be a 2-D matrix, got {n} dimensions"), name=name, n=data.ndim)
        rows = data.tolist()
    else:
        try:
            rows = [list(r) for r in data]
        except TypeError:
            raise InputError(N_("{name} must be a list of rows"), name=name) from None
    if not rows or all(len(r) == 0 for r in rows):
        raise InputError(N_("{name} is empty; it needs at least one row and one column "
                            "(a GEMM with K = 0 has nothing to multiply)"), name=name)
    width = len(rows[0])
    for r, row in enumerate(rows):
        if len(row) != width:
            raise InputError(N_("{name} row {row} has 1 value but row 1 has {width}; every row needs the same "
                                "number of columns") if len(row) == 1 else
                             N_("{name} row {row} has {n} values but row 1 has {width}; every row needs the same "
                                "number of columns"), name=name, row=r + 1, n=len(row), width=width)
    if width == 0:
        raise InputError(N_("{name} has no columns (K = 0 or N = 0): nothing to multiply"), name=name)
    if len(rows) > max_dim or width > max_dim:
        raise InputError(N_("{name} is {rows}×{cols}; the step-by-step view keeps every step, "
                            "so it takes at most {limit}×{limit}"), name=name, rows=len(rows), cols=width,
                         limit=max_dim)
    return np.array([[_cell_value(v, name, r, c) for c, v in enumerate(row)]
                     for r, row in enumerate(rows)], dtype=np.float64)


def _as_tuple(x: np.ndarray) -> Matrix:
    return tuple(tuple(float(v) for v in row) for row in x)


def _check_scalar(v: object, name: str) -> float:
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(N_("{name} must be a number, got {value!r}"), name=name, value=v) from None
    if not math.isfinite(f) or abs(f) > MAX_ABS:
        raise InputError(N_("{name} must be a finite number within ±{limit:.0e}, got {value!r}"), name=name,
                         limit=MAX_ABS, value=v)
    return f


# ----------------------------------------------------------------------------- problems


@dataclass(frozen=True)
class Problem:
    """D = α·A·B + β·C with A (M×K), B (K×N), C (M×N). Hashable (tuples)."""

    a: Matrix
    b: Matrix
    c: Matrix
    alpha: float = 1.0
    beta: float = 0.0

    @property
    def m(self) -> int:
        return len(self.a)

    @property
    def k(self) -> int:
        return len(self.b)

    @property
    def n(self) -> int:
        return len(self.b[0])

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.array(self.a), np.array(self.b), np.array(self.c)

    def expected(self) -> np.ndarray:
        """numpy's α·A@B + β·C in float64: what every loop order must reproduce."""
        a, b, c = self.arrays()
        return self.alpha * (a @ b) + self.beta * c


def make_problem(a: object, b: object, c: object | None = None, alpha: object = 1.0,
                 beta: object = 0.0, max_dim: int = MAX_DIM) -> Problem:
    """Parse and check A, B, optional C (zeros when None), α and β."""
    A = parse_matrix(a, "A", max_dim)  # type: ignore[arg-type]
    B = parse_matrix(b, "B", max_dim)  # type: ignore[arg-type]
    (m, k), (k2, n) = A.shape, B.shape
    if k != k2:
        raise InputError(N_("A is {m}×1, so B needs 1 row (one per column of A); it has {rows}") if k == 1 else
                         N_("A is {m}×{k}, so B needs {k} rows (one per column of A); it has {rows}"), m=m, k=k,
                         rows=k2)
    if c is None:
        C = np.zeros((m, n))
    else:
        C = parse_matrix(c, "C", max_dim)  # type: ignore[arg-type]
        if C.shape != (m, n):
            raise InputError(N_("C must be M×N = {m}×{n} like D, but it is {rows}×{cols}"), m=m, n=n,
                             rows=C.shape[0], cols=C.shape[1])
    return Problem(_as_tuple(A), _as_tuple(B), _as_tuple(C), _check_scalar(alpha, "α"),
                   _check_scalar(beta, "β"))


def article_problem() -> Problem:
    """The article's example 1: A 2×3, B 3×2, D = [[58, 64], [139, 154]]."""
    return Problem(ARTICLE_A, ARTICLE_B, ((0.0, 0.0), (0.0, 0.0)), 1.0, 0.0)


def _check_dim(v: object, name: str, max_dim: int) -> int:
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v) from None
    if not f.is_integer():
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v)
    if f < 1:
        if name == "K":
            raise InputError(N_("{name} must be at least 1, got {value} (K = 0 leaves nothing to multiply)"),
                             name=name, value=int(f))
        raise InputError(N_("{name} must be at least 1, got {value}"), name=name, value=int(f))
    if f > max_dim:
        raise InputError(N_("{name} = {value} is too large for the step-by-step view (at most {limit})"), name=name,
                         value=int(f), limit=max_dim)
    return int(f)


def random_problem(m: int, n: int, k: int, seed: int = 0, *, alpha: float = 1.0, beta: float = 0.0,
                   integers: bool = True, low: int = -3, high: int = 9,
                   with_c: bool | None = None, max_dim: int = MAX_DIM) -> Problem:
    """Random A (M×K), B (K×N), C (M×N) from ``seed``.

    By default small integers in [low, high] so that a class can check the
    arithmetic by hand; ``integers=False`` draws standard normals rounded to two
    decimals. C is drawn when β ≠ 0 (or ``with_c``), otherwise zeros.
    """
    m, n, k = (_check_dim(v, name, max_dim) for v, name in ((m, "M"), (n, "N"), (k, "K")))
    try:
        rng = np.random.default_rng(int(seed))
    except (TypeError, ValueError):
        raise InputError(N_("seed must be a non-negative whole number, got {value!r}"), value=seed) from None
    if integers:
        if low > high:
            raise InputError(N_("low ({low}) must not exceed high ({high})"), low=low, high=high)

        def draw(shape: tuple[int, int]) -> np.ndarray:
            return rng.integers(low, high + 1, size=shape).astype(np.float64)
    else:
        def draw(shape: tuple[int, int]) -> np.ndarray:
            return np.round(rng.standard_normal(shape), 2)
    A, B = draw((m, k)), draw((k, n))
    alpha, beta = _check_scalar(alpha, "α"), _check_scalar(beta, "β")
    want_c = (beta != 0) if with_c is None else with_c
    C = draw((m, n)) if want_c else np.zeros((m, n))
    return Problem(_as_tuple(A), _as_tuple(B), _as_tuple(C), alpha, beta)


# ----------------------------------------------------------------------------- traces


def fmt_num(x: float) -> str:
    """A matrix value as a person writes it: 7 not 7.0, 0.125, 0.3333 (``gemmlib.core.format``)."""
    return fmt.number(float(x), 4)


_MAC = "D[{i},{j}] = {terms} = {value}{more}"  # an inner-product step: no words, the same in every language


def fmt_factor(x: float) -> str:
    """A factor in a product as written: a negative one in parentheses, (-0.5)×3."""
    s = fmt_num(x)
    return f"({s})" if x < 0 else s


@dataclass(frozen=True)
class Step:
    """One step of a trace; cumulative counts are *after* the step."""

    index: int
    kind: str  # "mac" (one multiply-add), "rank1", "tile" or "epilogue"
    a_cells: tuple[Cell, ...]  # elements of A read by this step
    b_cells: tuple[Cell, ...]  # elements of B read by this step
    d_cells: tuple[Cell, ...]  # elements of D written by this step
    d_values: tuple[float, ...]  # their values after the step (same order as d_cells)
    text: Msg  # what a person would write, e.g. "D[0,0] = 1×7 + 2×9 = 25" (``expression``: in English)
    focus: Cell  # the D cell the expression (and running value) is about
    value: float  # running value of D[focus] after this step
    mults: int  # multiplications done by this step (epilogue excluded)
    adds: int  # additions done by this step (epilogue excluded)
    loads_a: int  # cumulative element loads of A
    loads_b: int  # cumulative element loads of B
    stores_d: int  # cumulative element writes of D to memory

    @property
    def expression(self) -> str:
        """The step's arithmetic line in English (``text.render(gettext)`` in another language)."""
        return str(self.text)


@dataclass(frozen=True)
class Trace:
    problem: Problem
    order: str
    tile: tuple[int, int, int]  # (tile_m, tile_n, tile_k); (1, 1, 1) except for "tiled"
    steps: tuple[Step, ...]

    def __len__(self) -> int:
        return len(self.steps)

    def d_after(self, index: int) -> np.ndarray:
        """D as the trace has built it after step ``index`` (NaN = not yet touched)."""
        if not 0 <= index < len(self.steps):
            raise InputError(N_("step {index} is outside 0…{last}"), index=index, last=len(self.steps) - 1)
        d = np.full((self.problem.m, self.problem.n), np.nan)
        for s in self.steps[: index + 1]:
            for (i, j), v in zip(s.d_cells, s.d_values, strict=True):
                d[i, j] = v
        return d

    def result(self) -> np.ndarray:
        return self.d_after(len(self.steps) - 1)

    def frames(self, gettext: Translate = english) -> list[dict]:
        """Every step as plain data for a drawing (the browser-side stepper on the pages).

        Each frame: ``a``, ``b``, ``d`` (the cells read and written, as [row, column] pairs), ``c``
        (the cells of C the epilogue reads when β ≠ 0), ``dv`` (D's new values, as text), ``text``
        (the arithmetic line, through ``gettext``: English by default), ``kind`` and ``loads``
        ([A loads, B loads, D stores] so far).
        """
        out = []
        reads_c = self.problem.beta != 0
        for s in self.steps:
            d = [list(c) for c in s.d_cells]
            out.append({"a": [list(c) for c in s.a_cells], "b": [list(c) for c in s.b_cells], "d": d,
                        "c": d if s.kind == "epilogue" and reads_c else [],
                        "dv": [fmt_num(v) for v in s.d_values], "text": s.text.render(gettext), "kind": s.kind,
                        "loads": [s.loads_a, s.loads_b, s.stores_d]})
        return out

    def products_done(self, index: int, cell: Cell) -> int:
        """How many of the K products A[i,k]·B[k,j] are in D[i,j] after step ``index``."""
        i, j = cell
        done = 0
        for s in self.steps[: index + 1]:
            if s.kind != "epilogue" and cell in s.d_cells:
                done += sum(1 for (ii, _k) in s.a_cells if ii == i)
        return done

    def matrices_text(self) -> dict[str, list[list[str]]]:
        """A, B and C as the text drawn in their cells."""
        return {name: [[fmt_num(v) for v in row] for row in mat]
                for name, mat in (("A", self.problem.a), ("B", self.problem.b), ("C", self.problem.c))}

    @property
    def totals(self) -> dict[str, int]:
        last = self.steps[-1]
        return {"loads_a": last.loads_a, "loads_b": last.loads_b, "loads": last.loads_a + last.loads_b,
                "stores_d": last.stores_d, "steps": len(self.steps),
                "mults": sum(s.mults for s in self.steps), "adds": sum(s.adds for s in self.steps)}


def _epilogue(p: Problem, acc: np.ndarray, index: int, la: int, lb: int, sd: int,
              focus: Cell = (0, 0)) -> Step:
    _, _, C = p.arrays()
    d = p.alpha * acc + p.beta * C
    cells = tuple((i, j) for i in range(p.m) for j in range(p.n))
    i, j = focus
    if p.alpha == 1.0 and p.beta == 0.0:
        expr = Msg(N_("epilogue: α = 1 and β = 0, so D = A·B as accumulated and nothing is left to do "
                      "(an LLM layer's case; a kernel skips this step). D[{i},{j}] = {value}"),
                   i=i, j=j, value=fmt_num(d[i, j]))
    else:
        expr = Msg(N_("epilogue: D = α·(A·B) + β·C with α = {alpha}, β = {beta}; "
                      "D[{i},{j}] = {a}×{acc} + {b}×{c} = {value}"),
                   alpha=fmt_num(p.alpha), beta=fmt_num(p.beta), i=i, j=j, a=fmt_factor(p.alpha),
                   acc=fmt_num(acc[i, j]), b=fmt_factor(p.beta), c=fmt_factor(C[i, j]), value=fmt_num(d[i, j]))
    # the epilogue writes D once more only if the accumulator was not stored yet (inner, tiled
    # write it here; we count the store in the steps that finish a cell and not again here)
    return Step(index, "epilogue", (), (), cells, tuple(float(d[c]) for c in cells), expr, focus,
                float(d[i, j]), 0, 0, la, lb, sd)


def trace_inner(p: Problem) -> Trace:
    """Loops i, j, k: one multiply-add per step; every operand read at every use."""
    A, B, _ = p.arrays()
    steps: list[Step] = []
    acc = np.zeros((p.m, p.n))
    la = lb = sd = 0
    for i in range(p.m):
        for j in range(p.n):
            run = 0.0
            terms: list[str] = []
            for k in range(p.k):
                prod = A[i, k] * B[k, j]
                run = prod if k == 0 else run + prod
                terms.append(f"{fmt_factor(A[i, k])}×{fmt_factor(B[k, j])}")
                la += 1
                lb += 1
                last_k = k == p.k - 1
                if last_k:
                    sd += 1
                    acc[i, j] = run
                steps.append(Step(len(steps), "mac", ((i, k),), ((k, j),), ((i, j),), (run,),
                                  Msg(_MAC, i=i, j=j, terms=" + ".join(terms), value=fmt_num(run),
                                      more="" if last_k else "  …"),
                                  (i, j), run, 1, 0 if k == 0 else 1, la, lb, sd))
    steps.append(_epilogue(p, acc, len(steps), la, lb, sd))
    return Trace(p, "inner", (1, 1, 1), tuple(steps))


def trace_outer(p: Problem, focus: Cell = (0, 0)) -> Trace:
    """k outermost: step k adds A[:,k] ⊗ B[k,:] to all of D (a rank-1 update)."""
    A, B, _ = p.arrays()
    steps: list[Step] = []
    acc = np.zeros((p.m, p.n))
    la = lb = sd = 0
    cells = tuple((i, j) for i in range(p.m) for j in range(p.n))
    fi, fj = focus
    for k in range(p.k):
        acc = A[:, k:k + 1] * B[k:k + 1, :] if k == 0 else acc + A[:, k:k + 1] * B[k:k + 1, :]
        la += p.m
        lb += p.n
        sd += p.m * p.n  # all of D is updated; counted as a store (it lives in memory)
        expr = Msg(N_("k = {k}: D += A[:,{k}] ⊗ B[{k},:] ({products} products, one per cell of D); "
                      "D[{i},{j}] += {a}×{b} → {value}"),
                   k=k, products=p.m * p.n, i=fi, j=fj, a=fmt_factor(A[fi, k]), b=fmt_factor(B[k, fj]),
                   value=fmt_num(acc[fi, fj]))
        steps.append(Step(k, "rank1", tuple((i, k) for i in range(p.m)),
                          tuple((k, j) for j in range(p.n)), cells,
                          tuple(float(acc[c]) for c in cells), expr, focus, float(acc[fi, fj]),
                          p.m * p.n, 0 if k == 0 else p.m * p.n, la, lb, sd))
    steps.append(_epilogue(p, acc, len(steps), la, lb, sd, focus))
    return Trace(p, "outer", (1, 1, 1), tuple(steps))


def default_tile(p: Problem) -> tuple[int, int, int]:
    """A tile that shows reuse: about half of each dimension, at least 2 where the dimension has 2
    (a 1-wide tile re-reads every element at every use, like the inner product), at most 4.

    The article's 2×3 by 3×2 gets (2, 2, 2): one block of D, two k-steps, each A and B element
    loaded once instead of twice.
    """
    return tuple(max(min(d, 2), min(4, math.ceil(d / 2))) for d in (p.m, p.n, p.k))  # type: ignore[return-value]


def trace_tiled(p: Problem, tile: tuple[int, int, int] | None = None) -> Trace:
    """Blocks of D, k in tiles: one step loads an A tile and a B tile once and multiplies them."""
    tm, tn, tk = tile or default_tile(p)
    for v, name in ((tm, "tile M"), (tn, "tile N"), (tk, "tile K")):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise InputError(N_("{name} must be a whole number ≥ 1, got {value!r}"), name=name, value=v)
    tm, tn, tk = int(tm), int(tn), int(tk)
    A, B, _ = p.arrays()
    steps: list[Step] = []
    acc = np.zeros((p.m, p.n))
    la = lb = sd = 0
    for i0 in range(0, p.m, tm):
        for j0 in range(0, p.n, tn):
            i1, j1 = min(i0 + tm, p.m), min(j0 + tn, p.n)
            block = np.zeros((i1 - i0, j1 - j0))
            cells = tuple((i, j) for i in range(i0, i1) for j in range(j0, j1))
            for k0 in range(0, p.k, tk):
                k1 = min(k0 + tk, p.k)
                block = block + A[i0:i1, k0:k1] @ B[k0:k1, j0:j1]
                la += (i1 - i0) * (k1 - k0)
                lb += (k1 - k0) * (j1 - j0)
                last = k1 == p.k
                if last:
                    sd += len(cells)
                    acc[i0:i1, j0:j1] = block
                n_mac = (i1 - i0) * (j1 - j0) * (k1 - k0)
                expr = Msg(N_("D[{i0}:{i1}, {j0}:{j1}] += A[{i0}:{i1}, {k0}:{k1}] · B[{k0}:{k1}, {j0}:{j1}] "
                              "({macs} multiply-adds on {la} + {lb} loaded elements); D[{i0},{j0}] → {value}"),
                           i0=i0, i1=i1, j0=j0, j1=j1, k0=k0, k1=k1, macs=n_mac, la=(i1 - i0) * (k1 - k0),
                           lb=(k1 - k0) * (j1 - j0), value=fmt_num(block[0, 0]))
                steps.append(Step(len(steps), "tile",
                                  tuple((i, k) for i in range(i0, i1) for k in range(k0, k1)),
                                  tuple((k, j) for k in range(k0, k1) for j in range(j0, j1)),
                                  cells, tuple(float(block[i - i0, j - j0]) for i, j in cells), expr,
                                  (i0, j0), float(block[0, 0]), n_mac,
                                  n_mac - (i1 - i0) * (j1 - j0) if k0 == 0 else n_mac, la, lb, sd))
    steps.append(_epilogue(p, acc, len(steps), la, lb, sd))
    return Trace(p, "tiled", (tm, tn, tk), tuple(steps))


def trace(p: Problem, order: str = "inner", tile: tuple[int, int, int] | None = None) -> Trace:
    """The trace of ``p`` under loop order ``inner``, ``outer`` or ``tiled``."""
    if order == "inner":
        return trace_inner(p)
    if order == "outer":
        return trace_outer(p)
    if order == "tiled":
        return trace_tiled(p, tile)
    raise InputError(N_("unknown loop order {order!r}; choose one of {choices}"), order=order,
                     choices=", ".join(LOOP_ORDERS))


def load_counts(m: int, n: int, k: int, tile: tuple[int, int, int] = (4, 4, 4)) -> dict[str, dict[str, int]]:
    """Element loads of A and B (and stores of D) per loop order, in closed form.

    inner: A and B each M·N·K; outer: M·K and K·N (but D updated K times);
    tiled: A M·K·⌈N/tn⌉, B K·N·⌈M/tm⌉, D stored once.
    """
    tm, tn, _ = tile
    return {
        "inner": {"loads_a": m * n * k, "loads_b": m * n * k, "stores_d": m * n},
        "outer": {"loads_a": m * k, "loads_b": k * n, "stores_d": m * n * k},
        "tiled": {"loads_a": m * k * math.ceil(n / tn), "loads_b": k * n * math.ceil(m / tm),
                  "stores_d": m * n},
    }


def running_sum(p: Problem, i: int = 0, j: int = 0) -> list[dict]:
    """The article's line chart: D[i,j] accumulating over k (before the epilogue)."""
    if not (0 <= i < p.m and 0 <= j < p.n):
        raise InputError(N_("D[{i},{j}] is outside D, which is {m}×{n}"), i=i, j=j, m=p.m, n=p.n)
    A, B, _ = p.arrays()
    rows, run = [], 0.0
    for k in range(p.k):
        prod = A[i, k] * B[k, j]
        run += prod
        rows.append({"k": k, "term": f"A[{i},{k}]×B[{k},{j}] = {fmt_factor(A[i, k])}×{fmt_factor(B[k, j])}",
                     "product": float(prod), "running_sum": float(run)})
    return rows


def check(tr: Trace) -> dict[str, float]:
    """The trace's D against numpy's α·A@B + β·C: max absolute and relative error."""
    got, want = tr.result(), tr.problem.expected()
    err = float(np.max(np.abs(got - want)))
    scale = float(np.max(np.abs(want))) or 1.0
    return {"max_abs_error": err, "max_rel_error": err / scale}
