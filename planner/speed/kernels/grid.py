"""Multilinear interpolation over a measured grid, never past its edges.

A kernel table measures latency at a rectilinear set of shapes (every ``m`` × ``n`` × ``k`` of a GEMM,
every batch × context of an attention kernel). Between measured shapes the latency is interpolated
linearly along each axis, as aiconfigurator's performance database does (its ``_interp_1d`` /
``_bilinear_interpolation`` helpers, aiconfigurator 0.4, ``sdk/perf_database.py``); a shape outside the
measured range of any axis, or whose bracketing corners were not all measured, has no answer
(``None``): the caller then prices that operator by its roofline and records it.

>>> import numpy as np
>>> g = Grid.build([(1, 10, 2.0), (1, 20, 4.0), (3, 10, 6.0), (3, 20, 8.0)])
>>> g.at((2, 15)), g.at((3, 20)), g.at((4, 10))
(5.0, 8.0, None)
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from math import ceil, isnan

import numpy as np


class Grid:
    """Latencies on the cartesian product of sorted axis values (NaN where a shape was not measured)."""

    __slots__ = ("_flat", "_strides", "_values", "axes")

    def __init__(self, axes: tuple[tuple[float, ...], ...], values: np.ndarray) -> None:
        self.axes = axes
        self._values: np.ndarray | None = values
        self._flat: list[float] = values.ravel().tolist()  # plain floats: a lookup costs microseconds
        self._strides = _row_major_strides(axes)

    @property
    def values(self) -> np.ndarray:
        """The latencies as an array shaped by the axes (made from the plain floats when first asked)."""
        if self._values is None:
            self._values = np.array(self._flat, dtype=float).reshape(tuple(len(axis) for axis in self.axes))
        return self._values

    @classmethod
    def build(cls, rows: Iterable[Sequence[float]]) -> Grid:
        """A grid from rows ``(x1, …, xd, latency)``; a repeated shape keeps its smallest latency."""
        table = np.asarray(list(rows), dtype=float)
        return cls.from_columns([table[:, i] for i in range(table.shape[1] - 1)], table[:, -1])

    @classmethod
    def from_columns(cls, coords: Sequence[np.ndarray], latency: np.ndarray) -> Grid:
        """A grid from one array per axis and the latencies (the columns of a table)."""
        axes = []
        index = []
        for column in coords:
            values, inverse = np.unique(np.asarray(column, dtype=float), return_inverse=True)
            axes.append(tuple(float(v) for v in values))
            index.append(inverse)
        values = np.full(tuple(len(a) for a in axes), np.inf)
        np.minimum.at(values, tuple(index), np.asarray(latency, dtype=float))
        values[np.isinf(values)] = np.nan
        return cls(tuple(axes), values)

    def padded(self) -> Grid:
        """Latency never falling as the first axis (tokens of a GEMM, sequences of an attention batch, elements
        of a message) grows: each measured value becomes the least over every measured size at least as large,
        since an engine may pad a batch to a larger measured one (as CUDA-graph capture does). Timing noise then
        cannot make more work cheaper. The other axes (a weight's shape, a context length) cannot be padded
        and keep their measured values.

        >>> Grid.build([(1, 2.0), (2, 1.5), (4, 3.0)]).padded().at((1,))
        1.5
        """
        flipped = np.flip(self.values, 0)
        values = np.flip(np.fmin.accumulate(flipped, axis=0), 0)
        values[np.isnan(self.values)] = np.nan
        return Grid(self.axes, values)

    def fix_first(self, x: float) -> Grid | None:
        """The grid over the remaining axes at ``x`` on the first axis (interpolated), or None outside it: each
        value ``(1 − t)·lower + t·upper`` of the two measured slices around ``x``, on plain floats (an attention
        batch's line along the context is made once per batch size a run meets).

        >>> g = Grid.build([(1, 10, 2.0), (1, 20, 4.0), (3, 10, 6.0), (3, 20, 8.0)])
        >>> g.fix_first(2).at_x(15), g.fix_first(3).at_x(20), g.fix_first(4)
        (5.0, 8.0, None)
        """
        axis = self.axes[0]
        if x < axis[0] or x > axis[-1]:
            return None
        hi = bisect_left(axis, x)
        width = self._strides[0]
        upper = self._flat[hi * width : (hi + 1) * width]
        if axis[hi] == x:
            return Grid._of_flat(self.axes[1:], upper)
        t = (x - axis[hi - 1]) / (axis[hi] - axis[hi - 1])
        lower = self._flat[(hi - 1) * width : hi * width]
        return Grid._of_flat(self.axes[1:], [(1 - t) * low + t * high for low, high in zip(lower, upper, strict=True)])

    @classmethod
    def _of_flat(cls, axes: tuple[tuple[float, ...], ...], flat: list[float]) -> Grid:
        """A grid over ``axes`` of the row-major values ``flat`` (kept as they are: the lookups read them)."""
        grid = cls.__new__(cls)
        grid.axes = axes
        grid._values = None  # made when asked (:attr:`values`): a line is read through its floats
        grid._flat = flat
        grid._strides = _row_major_strides(axes)
        return grid

    def fix_last(self, x: float) -> Grid | None:
        """The grid over the leading axes at ``x`` on the last axis (interpolated: lookups then cost less)."""
        axis = self.axes[-1]
        if x < axis[0] or x > axis[-1]:
            return None
        hi = bisect_left(axis, x)
        if axis[hi] == x:
            return Grid(self.axes[:-1], self.values[..., hi])
        t = (x - axis[hi - 1]) / (axis[hi] - axis[hi - 1])
        return Grid(self.axes[:-1], (1 - t) * self.values[..., hi - 1] + t * self.values[..., hi])

    def covers(self, point: Sequence[float]) -> bool:
        return all(axis[0] <= x <= axis[-1] for axis, x in zip(self.axes, point, strict=True))

    def at(self, point: Sequence[float]) -> float | None:
        """The interpolated latency at ``point``, or None outside the grid or next to an unmeasured corner."""
        if len(self.axes) == 1:
            return self.at_x(point[0])
        if len(self.axes) == 2:
            return self.at_xy(point[0], point[1])
        if len(self.axes) == 3:
            return self.at_xyz(point[0], point[1], point[2])
        return self.at_corners(point)

    def at_corners(self, point: Sequence[float]) -> float | None:
        """:meth:`at` over any number of axes: the weighted sum over the corners of the cell holding ``point``."""
        corners: list[tuple[int, float]] = [(0, 1.0)]
        for axis, stride, x in zip(self.axes, self._strides, point, strict=True):
            if x < axis[0] or x > axis[-1]:
                return None
            hi = bisect_left(axis, x)
            if axis[hi] == x:
                corners = [(at + hi * stride, w) for at, w in corners]
                continue
            lo = hi - 1
            t = (x - axis[lo]) / (axis[hi] - axis[lo])
            corners = [c for at, w in corners for c in ((at + lo * stride, w * (1 - t)), (at + hi * stride, w * t))]
        total = 0.0
        flat = self._flat
        for at, w in corners:
            value = flat[at]
            if isnan(value):  # a corner that was not measured
                return None
            total += w * value
        return total

    def at_xy(self, x: float, y: float) -> float | None:
        """:meth:`at` of a two-axis grid (an attention kernel's batch × tokens): the same corners, weights and sum,
        in the same order, without building their lists.

        >>> g = Grid.build([(1, 10, 2.0), (1, 20, 4.0), (3, 10, 6.0), (3, 20, 8.0)])
        >>> g.at_xy(2, 15) == g.at_corners((2, 15)), g.at_xy(3, 20), g.at_xy(2, 25)
        (True, 8.0, None)
        """
        first, second = self.axes
        if x < first[0] or x > first[-1] or y < second[0] or y > second[-1]:
            return None
        flat = self._flat
        total = 0.0
        along_second = _bracket(second, y, 1)
        for at0, w0 in _bracket(first, x, self._strides[0]):
            for at1, w1 in along_second:
                value = flat[at0 + at1]
                if isnan(value):  # a corner that was not measured
                    return None
                total += w0 * w1 * value
        return total

    def at_xyz(self, x: float, y: float, z: float) -> float | None:
        """:meth:`at` of a three-axis grid (a GEMM's m × n × k): the same corners, weights and sum, in the same
        order, without building their lists.

        >>> g = Grid.build([(m, n, k, m + n / 10 + k / 100) for m in (1, 3) for n in (10, 20) for k in (100, 200)])
        >>> g.at_xyz(2, 15, 150) == g.at_corners((2, 15, 150)), g.at_xyz(3, 20, 200), g.at_xyz(2, 15, 250)
        (True, 7.0, None)
        """
        first, second, third = self.axes
        if x < first[0] or x > first[-1] or y < second[0] or y > second[-1] or z < third[0] or z > third[-1]:
            return None
        outer, middle, _ = self._strides
        flat = self._flat
        total = 0.0
        along_second, along_third = _bracket(second, y, middle), _bracket(third, z, 1)
        for at0, w0 in _bracket(first, x, outer):
            for at1, w1 in along_second:
                for at2, w2 in along_third:
                    value = flat[at0 + at1 + at2]
                    if isnan(value):  # a corner that was not measured
                        return None
                    total += w0 * w1 * w2 * value
        return total

    def at_x(self, x: float) -> float | None:
        """:meth:`at` of a one-axis grid (a kernel's latency along tokens, context or message size) at ``x``: the
        same interpolation, without the corner bookkeeping (a step prices several of these).

        >>> Grid.build([(1, 2.0), (3, 6.0)]).at_x(2.5), Grid.build([(1, 2.0), (3, 6.0)]).at_x(4)
        (5.0, None)
        """
        axis = self.axes[0]
        if x < axis[0] or x > axis[-1]:
            return None
        hi = bisect_left(axis, x)
        flat = self._flat
        if axis[hi] == x:
            value = flat[hi]
            return None if isnan(value) else 0.0 + value
        lo = hi - 1
        low, high = flat[lo], flat[hi]
        if isnan(low) or isnan(high):  # a neighbour that was not measured
            return None
        t = (x - axis[lo]) / (axis[hi] - axis[lo])
        return 0.0 + (1 - t) * low + t * high

    def at_or_below(self, x: float) -> float | None:
        """:meth:`at_x` where it answers, else the latency at the largest measured value of the axis below ``x``: a
        line that stops short of ``x`` answers at its last measured point (a lower bound on the kernel at ``x``,
        which does more work). None where nothing is measured up to ``x``.

        >>> grid = Grid.build([(1, 1, 2.0), (1, 2, 3.0), (1, 4, 5.0), (2, 1, 2.5), (2, 2, 3.5)])
        >>> line = grid.fix_first(2)  # batch 2 was measured at contexts 1 and 2 only
        >>> line.at_or_below(1.5), line.at_or_below(3.0), line.at_or_below(9.0), line.at_or_below(0.5)
        (3.0, 3.5, 3.5, None)
        """
        value = self.at_x(x)
        if value is not None:
            return value
        axis, flat = self.axes[0], self._flat
        for i in range(bisect_left(axis, x) - 1 if x <= axis[-1] else len(axis) - 1, -1, -1):
            if not isnan(flat[i]):
                return 0.0 + flat[i]
        return None


def _row_major_strides(axes: tuple[tuple[float, ...], ...]) -> tuple[int, ...]:
    """How far apart neighbours on each axis lie in the row-major values.

    >>> _row_major_strides(((1, 2), (10, 20, 30)))
    (3, 1)
    """
    strides, step = [], 1
    for axis in reversed(axes):
        strides.append(step)
        step *= len(axis)
    return tuple(reversed(strides))


def _bracket(axis: tuple[float, ...], x: float, stride: int) -> tuple[tuple[int, float], ...]:
    """The offsets and weights of the measured values around ``x`` on one axis (``x`` within it): one where it was
    measured, else the two either side weighted ``1 − t`` and ``t``."""
    hi = bisect_left(axis, x)
    if axis[hi] == x:
        return ((hi * stride, 1.0),)
    t = (x - axis[hi - 1]) / (axis[hi] - axis[hi - 1])
    return (((hi - 1) * stride, 1 - t), (hi * stride, t))


def sliced(line: Grid, tokens: float) -> float | None:
    """A kernel's milliseconds over ``tokens`` rows along its measured ``line``: past the largest measured count, as
    equal row slices, never below as many whole passes of that largest count as ``tokens`` holds (each does less
    work than its share), so one more token never costs less. None where the line has no value there.

    >>> line = Grid.build([(1, 1.0), (4, 2.0), (8, 5.0)])  # 8 rows cost more than twice 4
    >>> sliced(line, 6), sliced(line, 9), sliced(line, 16), sliced(line, 17)
    (3.5, 5.0, 10.0, 10.0)
    """
    top = line.axes[0][-1]
    parts = ceil(tokens / top)
    one = line.at_x(tokens / parts)
    if one is None or parts == 1:
        return one
    largest = line.at_x(top)
    whole = largest * (tokens // top) if largest is not None else 0.0
    return one * parts if one * parts > whole else whole
