"""Devices and contexts: which OpenCL device a call runs on, and the context that holds its
compiled kernels."""
import threading

from . import _ext

__all__ = ["Context", "DeviceError", "devices", "get_context"]

DeviceError = _ext.DeviceError


def devices():
    """List the OpenCL devices this process can use.

    Returns
    -------
    list of dict
        One dict per device, in the library's order: ``index`` (what ``device=<int>`` takes),
        ``spec`` (the ``"P:D"`` string that names it), ``platform``, ``name``, ``type``
        (``'gpu'``, ``'cpu'``, ``'accelerator'`` or ``'other'``) and ``version``.
    """
    found = _ext.devices()
    for i, d in enumerate(found):
        d["index"] = i
        d["spec"] = f"{d['platform_index']}:{d['device_index']}"
    return found


def _spec(device):
    """The library's device spec for a ``device=`` argument (None: $CLSTATS_DEVICE, else auto)."""
    if device is None:
        return None
    if isinstance(device, bool):
        raise ValueError(f"device={device!r}: give 'auto', 'gpu', 'cpu', an index or a name part")
    if isinstance(device, int):
        found = devices()
        if not 0 <= device < len(found):
            raise ValueError(f"device={device}: there are {len(found)} devices (clstats.devices())")
        return found[device]["spec"]
    if isinstance(device, str) and device.strip():
        return device.strip()
    raise ValueError(f"device={device!r}: give 'auto', 'gpu', 'cpu', an index or a name part")


class Context:
    """An OpenCL device and the kernels compiled for it.

    Parameters
    ----------
    device : str or int, optional
        ``'auto'`` (the first GPU, else the first CPU device), ``'gpu'``, ``'cpu'``, an index
        into :func:`clstats.devices`, ``"P:D"``, or part of a platform or device name
        (``'nvidia'``, ``'pocl'``). None takes ``$CLSTATS_DEVICE``, else ``'auto'``.

    Notes
    -----
    A context compiles each kernel once and keeps it, so reuse one for many calls. It may be
    shared by threads: calls on one context take turns (a lock); give each thread its own
    context for calls that run at once. Use it as a context manager to free the device's
    memory at the end of the block, or pass it as ``device=`` to any call.

    Examples
    --------
    >>> with clstats.Context('gpu') as ctx:              # doctest: +SKIP
    ...     med = clstats.median_filter(image, 11, device=ctx)
    """

    def __init__(self, device="auto"):
        self._capsule = _ext.context(_spec(device))
        self._lock = threading.Lock()
        self._info = _ext.context_info(self._capsule)

    @property
    def device_name(self):
        """``"platform / device"`` of the context's device."""
        return self._info["name"]

    @property
    def limits(self):
        """What the device offers: memory, largest buffer, compute units, fp64, CPU or not."""
        return dict(self._info)

    @property
    def last_kernel_ms(self):
        """Device time in ms of the kernels of the last call on this context."""
        with self._lock:
            return _ext.last_kernel_ms(self._live())

    def _live(self):
        if self._capsule is None:
            raise ValueError("this clstats.Context has been closed")
        return self._capsule

    def call(self, function, *args):
        """Runs one of the extension's functions on this context, one thread at a time."""
        with self._lock:
            return function(self._live(), *args)

    def release_buffers(self):
        """Frees the device and pinned host memory the context keeps between calls (working
        buffers grown to the largest call so far: gigabytes after a large :class:`PaSS` fit),
        keeping the device and its compiled kernels; the next call allocates what it needs."""
        self.call(_ext.release_buffers)

    def close(self):
        """Frees the context's device memory and kernels; later calls on it raise ValueError."""
        with self._lock:
            self._capsule = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._capsule is None else self.device_name
        return f"<clstats.Context {state}>"


_shared = {}
_shared_lock = threading.Lock()


def release_buffers():
    """Frees the memory that the contexts shared by calls without a :class:`Context` keep
    between calls (:meth:`Context.release_buffers` on each); their devices and kernels stay."""
    with _shared_lock:
        shared = list(_shared.values())
    for ctx in shared:
        ctx.release_buffers()


def get_context(device=None):
    """The context a call with ``device=`` runs on: the Context itself, or one shared context
    per device spec, created on first use (``None`` is the default context)."""
    if isinstance(device, Context):
        return device
    spec = _spec(device)
    with _shared_lock:
        ctx = _shared.get(spec)
        if ctx is None:
            ctx = Context.__new__(Context)
            ctx._capsule = _ext.context(spec)
            ctx._lock = threading.Lock()
            ctx._info = _ext.context_info(ctx._capsule)
            _shared[spec] = ctx
        return ctx
