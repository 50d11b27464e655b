"""ArrayProgram's matrix and appended rows, against the dense matrix written out by hand."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from mlsched.solve import ArrayProgram, Status, solve_arrays


def _program() -> ArrayProgram:
    """max x0 + 2 x1 + 3 x2 s.t. x0 + x1 <= 1, x1 + 2 x2 <= 2, binary (columns in CSC form)."""
    return ArrayProgram(cost=np.array([1.0, 2.0, 3.0]), col_lower=np.zeros(3), col_upper=np.ones(3),
                        row_lower=np.full(2, -np.inf), row_upper=np.array([1.0, 2.0]),
                        a_start=np.array([0, 1, 3, 4]), a_index=np.array([0, 0, 1, 1]),
                        a_value=np.array([1.0, 1.0, 1.0, 2.0]))


def test_matrix_is_the_program_rows():
    assert np.array_equal(_program().matrix.toarray(), [[1.0, 1.0, 0.0], [0.0, 1.0, 2.0]])


def test_rows_appended_after_the_program_rows_bind_the_solve():
    program = _program()
    assert solve_arrays(program, presolve=False).objective == 4.0   # x0 = x2 = 1
    wider = program.with_rows(sp.csr_matrix([[1.0, 0.0, 1.0]]), [-np.inf], [1.0])   # x0 + x2 <= 1
    assert np.array_equal(wider.matrix.toarray(), [[1.0, 1.0, 0.0], [0.0, 1.0, 2.0], [1.0, 0.0, 1.0]])
    assert list(wider.row_lower) == [-np.inf] * 3 and list(wider.row_upper) == [1.0, 2.0, 1.0]
    assert np.array_equal(program.matrix.toarray(), [[1.0, 1.0, 0.0], [0.0, 1.0, 2.0]])   # unchanged
    report = solve_arrays(wider, presolve=False)
    assert report.status is Status.OPTIMAL and report.objective == 3.0   # x2 alone (x1 alone gives 2, x0 1)
