"""What every estimator of the package shares with scikit-learn's: its parameters are the
arguments of its __init__, read back by get_params, changed by set_params, shown by repr; and
its random_state, turned into the library's 64-bit seed."""
import inspect
import numbers

import numpy as np


def seed_of(random_state):
    """The library's 64-bit seed from scikit-learn's random_state forms (None draws from
    numpy's global generator, so that np.random.seed makes a fit repeatable, as in
    scikit-learn; a negative integer is refused, as scikit-learn refuses it)."""
    if random_state is None:
        return int(np.random.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state={random_state}: give a non-negative integer")
        return int(random_state) & (2**64 - 1)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    raise ValueError(f"random_state={random_state!r}: give None, an integer or a numpy "
                     "generator")


class Estimator:
    """The parameter protocol of scikit-learn's estimators, without depending on it."""

    @classmethod
    def _param_names(cls):
        signature = inspect.signature(cls.__init__)
        return [name for name, p in signature.parameters.items()
                if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def get_params(self, deep=True):
        """The estimator's parameters, as scikit-learn's get_params gives them."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Sets parameters by name, as scikit-learn's set_params does; returns self."""
        names = self._param_names()
        for name, value in params.items():
            if name not in names:
                raise ValueError(f"{type(self).__name__}: unknown parameter {name!r}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
