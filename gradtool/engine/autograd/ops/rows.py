"""The table's rows by name, for the code below the table. A formula may run another row
(prod's backward runs prod over a dim, relu's runs threshold_backward), generic ops dispatch
to rows and cat, stack and matmul are rows, while every row holds formulas: derivatives.py
fills `table` as it defines its rows, and the code below reads `table.PROD_DIM` when it
runs (PyTorch's dispatcher finds its ops by name the same way). Code above the table
imports ops/derivatives.py itself."""
import types

table = types.SimpleNamespace()  # derivatives.TABLE is its __dict__


def row_function(name):
    """The row `name` as a function of its tensor inputs then its arguments (OpSpec.__call__),
    found when called: for a name defined before derivatives.py fills the table."""
    def run(*values):
        return getattr(table, name)(*values)
    run.__name__ = name.lower()
    return run
