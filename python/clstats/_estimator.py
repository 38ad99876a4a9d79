"""What every estimator of the package shares with scikit-learn's: its parameters are the
arguments of its __init__, read back by get_params, changed by set_params, shown by repr."""
import inspect


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
