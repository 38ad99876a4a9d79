"""Devices, contexts, errors and threads."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.ndimage as ndi

import clstats


def test_devices_and_contexts():
    found = clstats.devices()
    assert found and all({"index", "spec", "name", "platform", "type"} <= set(d) for d in found)
    with clstats.Context("auto") as ctx:
        assert ctx.device_name
        assert ctx.limits["global_memory"] > 0
        image = np.arange(64, dtype=np.float32).reshape(8, 8)
        assert np.array_equal(clstats.median_filter(image, 3, device=ctx),
                              ndi.median_filter(image, 3))
        assert ctx.last_kernel_ms >= 0
    with pytest.raises(ValueError, match="closed"):
        clstats.median_filter(image, 3, device=ctx)
    by_index = clstats.median(image, device=0)
    by_spec = clstats.median(image, device=found[0]["spec"])
    by_name = clstats.median(image, device=found[0]["name"].split()[0])
    assert by_index == by_spec == by_name == np.median(image)


def test_released_buffers_are_made_again():
    rng = np.random.default_rng(5)
    image = rng.normal(size=(40, 52)).astype(np.float32)
    image[::7, ::5] = np.nan
    with clstats.Context("auto") as ctx:
        first = clstats.filter_maps(image, 5, maps=("median", "mad"), device=ctx)
        ctx.release_buffers()
        ctx.release_buffers()
        again = clstats.filter_maps(image, 5, maps=("median", "mad"), device=ctx)
    assert sorted(first) == sorted(again) == ["mad", "median"]
    for name in first:
        assert np.array_equal(first[name], again[name], equal_nan=True)
    want = np.nanmedian(image)
    assert clstats.median(image) == want  # the shared context, then its buffers released
    clstats.release_buffers()
    assert clstats.median(image) == want


def test_device_errors_are_device_errors():
    with pytest.raises(clstats.DeviceError, match="no OpenCL device matches"):
        clstats.Context("no-such-device-anywhere")
    with pytest.raises(ValueError):
        clstats.Context(99)
    with pytest.raises(ValueError):
        clstats.Context(True)
    assert issubclass(clstats.DeviceError, RuntimeError)
    assert clstats.median([1.0, 2.0, 3.0]) == 2.0


def test_clstats_device_is_read_as_in_c():
    code = ("import clstats, sys; c = clstats.Context(None); print(c.device_name)")
    env = dict(os.environ, CLSTATS_DEVICE="no-such-device-anywhere")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.returncode != 0 and "DeviceError" in run.stderr


def test_library_errors_keep_the_process_working():
    image = np.zeros((4, 4), np.float32)
    capsule = clstats._context.get_context()._capsule

    def call(img, window=(3, 3, 0, 0), footprint=None, even="mean", mode="reflect", mask=None):
        clstats._ext.median_filter(capsule, img, window, footprint, even, mode, 0.0, mask, None,
                                   None)

    for kwargs in (dict(window=(3, 3, 5, 0)), dict(window=(0, 3, 0, 0)), dict(mode="bogus"),
                   dict(img=image[:, ::2]), dict(even="middle"),
                   dict(footprint=np.ones((3, 3), np.float32)),
                   dict(footprint=np.zeros((3, 3), np.uint8)),
                   dict(mask=np.zeros((3, 4), np.uint8))):
        with pytest.raises(ValueError):
            call(**{"img": image, **kwargs})
    with pytest.raises(TypeError):
        call([1.0])
    assert clstats.median_filter(image, 3).sum() == 0


def test_two_threads_with_their_own_contexts(rng):
    images = [rng.normal(size=(300, 300)).astype(np.float32) for _ in range(2)]
    expect = [ndi.median_filter(im, 7) for im in images]
    results, errors = [None, None], []

    def work(i):
        try:
            with clstats.Context() as ctx:
                for _ in range(3):
                    results[i] = clstats.median_filter(images[i], 7, device=ctx)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(np.array_equal(r, e) for r, e in zip(results, expect))


def test_threads_sharing_the_default_context(rng):
    image = rng.normal(size=(200, 200)).astype(np.float32)
    expect = ndi.median_filter(image, 5)
    outputs = []
    threads = [threading.Thread(target=lambda: outputs.append(clstats.median_filter(image, 5)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outputs) == 4 and all(np.array_equal(o, expect) for o in outputs)


def test_help_is_the_manual():
    doc = clstats.median_filter.__doc__
    for word in ("Parameters", "size", "mode", "cval", "mask", "device", "Returns", "Examples"):
        assert word in doc
    for function in (clstats.mad_filter, clstats.filter_maps, clstats.median, clstats.percentile,
                     clstats.quantile, clstats.select_kth, clstats.tile_medians,
                     clstats.sigma_clipped_stats, clstats.mad_std, clstats.Context,
                     clstats.LTSRegression, clstats.LMSRegression, clstats.Background,
                     clstats.Background.subtract):
        assert "Examples" in function.__doc__ or "Parameters" in function.__doc__


def test_examples_in_the_docstrings_run():
    import doctest
    for module in (clstats, clstats._filters, clstats._order, clstats._clipping,
                   clstats._context, clstats._regress, clstats._background):
        failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert failed == 0, module.__name__
