"""Binary elementwise functions: arithmetic, comparisons (``==`` on Variables is identity, so
:func:`equal` is the elementwise one) and logical operations (also behind ``& | ^ ~``).
"""
from __future__ import annotations

from ..basic import Variable, as_variable, is_python_scalar


def add(x1, x2):
    """Elementwise ``a + b`` (NumPy broadcasting and NEP 50 promotion)."""
    return _binary("add", x1, x2)


def subtract(x1, x2):
    """Elementwise ``a - b``."""
    return _binary("subtract", x1, x2)


def multiply(x1, x2):
    """Elementwise ``a * b``."""
    return _binary("multiply", x1, x2)


def divide(x1, x2):
    """Elementwise true division (ints give float64, as NumPy)."""
    return _binary("divide", x1, x2)


def power(x1, x2):
    """Elementwise ``a ** b``."""
    return _binary("power", x1, x2)


def maximum(x1, x2):
    """Elementwise maximum; the gradient goes to ``a`` where ``a >= b``."""
    return _binary("maximum", x1, x2)


def minimum(x1, x2):
    """Elementwise minimum; the gradient goes to ``a`` where ``a <= b``."""
    return _binary("minimum", x1, x2)


def floor_divide(x1, x2):
    """Elementwise ``a // b``."""
    return _binary("floor_divide", x1, x2)


def remainder(x1, x2):
    """Elementwise ``a % b`` (sign of the divisor, as NumPy)."""
    return _binary("remainder", x1, x2)


def arctan2(x1, x2):
    """Elementwise ``atan2(x1, x2)`` (angle of the point (x2, x1)); real dtypes only (``TypeError``
    for complex, as NumPy)."""
    return _binary("arctan2", x1, x2)


def equal(x1, x2):
    """Elementwise ``a == b`` -> bool (``==`` on Variables is identity, PyTensor convention)."""
    return _binary("equal", x1, x2)


def not_equal(x1, x2):
    """Elementwise ``a != b`` -> bool."""
    return _binary("not_equal", x1, x2)


def less(x1, x2):
    """Elementwise ``a < b`` -> bool."""
    return _binary("less", x1, x2)


def less_equal(x1, x2):
    """Elementwise ``a <= b`` -> bool."""
    return _binary("less_equal", x1, x2)


def greater(x1, x2):
    """Elementwise ``a > b`` -> bool."""
    return _binary("greater", x1, x2)


def greater_equal(x1, x2):
    """Elementwise ``a >= b`` -> bool."""
    return _binary("greater_equal", x1, x2)


eq = equal


neq = not_equal


def logical_and(x1, x2):
    """Elementwise logical and -> bool."""
    return _binary("logical_and", x1, x2)


def logical_or(x1, x2):
    """Elementwise logical or -> bool."""
    return _binary("logical_or", x1, x2)


def logical_xor(x1, x2):
    """Elementwise logical exclusive or -> bool."""
    return _binary("logical_xor", x1, x2)


def _bool_op(name, *args):
    vs = [as_variable(a) if not is_python_scalar(a) else a for a in args]
    for v in vs:
        if isinstance(v, Variable) and v.dtype != "bool":
            raise TypeError(f"operators & | ^ ~ on symbolic variables are logical and need bool "
                            f"operands, got {v.dtype}; use {name} explicitly")
    return _binary(name, *vs) if len(vs) == 2 else logical_not(vs[0])


# The other op modules' names, used only when a graph is built: imported last, because the op
# modules use one another (each module is complete before it imports the others).
from .elemwise import _binary  # noqa: E402
from .unary import logical_not  # noqa: E402
