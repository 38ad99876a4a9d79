/* _ext.c - the Python package's bridge to libclstats: contexts, and each operation on numpy
 * arrays that the Python side has already checked and laid out (float32 or float64, rows of
 * contiguous elements, aligned, native byte order). Arguments are checked again here, so that
 * no call from Python can crash the process; the GIL is released while the device works. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "clstats.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static PyObject *DeviceError;

/* ---- Errors -------------------------------------------------------------------------------- */

/* The exception a status stands for: bad arguments are the caller's (ValueError), host memory
 * is MemoryError, and everything the device or OpenCL says is DeviceError. */
static PyObject *exception_for(int status)
{
    switch (status) {
    case CLSTATS_ERR_ARG:
    case CLSTATS_ERR_NAN:
    case CLSTATS_ERR_SINGULAR:
    case CLSTATS_ERR_EMPTY: return PyExc_ValueError;
    case CLSTATS_ERR_NOMEM: return PyExc_MemoryError;
    default: return DeviceError;
    }
}

static PyObject *raise_status(int status, const char *message)
{
    if (message && *message)
        PyErr_Format(exception_for(status), "%s (%s)", message, clstats_strerror(status));
    else
        PyErr_SetString(exception_for(status), clstats_strerror(status));
    return NULL;
}

/* ---- Contexts ----------------------------------------------------------------------------- */

#define CONTEXT_CAPSULE "clstats._ext.context"

static void context_free(PyObject *capsule)
{
    clstats_ctx_destroy(PyCapsule_GetPointer(capsule, CONTEXT_CAPSULE));
}

static clstats_ctx *context_of(PyObject *capsule)
{
    return PyCapsule_GetPointer(capsule, CONTEXT_CAPSULE);
}

static PyObject *py_context(PyObject *self, PyObject *args)
{
    (void)self;
    const char *spec = NULL;
    if (!PyArg_ParseTuple(args, "z", &spec)) return NULL;
    clstats_ctx *ctx = NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_ctx_create(&ctx, spec);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(NULL));
    PyObject *capsule = PyCapsule_New(ctx, CONTEXT_CAPSULE, context_free);
    if (!capsule) clstats_ctx_destroy(ctx);
    return capsule;
}

static PyObject *py_context_info(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule;
    if (!PyArg_ParseTuple(args, "O", &capsule)) return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_device_limits l;
    int status = clstats_ctx_limits(ctx, &l);
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return Py_BuildValue("{s:s,s:K,s:K,s:K,s:n,s:I,s:O,s:O}", "name",
                         clstats_ctx_device_name(ctx), "global_memory",
                         (unsigned long long)l.global_memory, "max_allocation",
                         (unsigned long long)l.max_allocation, "local_memory",
                         (unsigned long long)l.local_memory, "max_work_group",
                         (Py_ssize_t)l.max_work_group, "compute_units", l.compute_units, "fp64",
                         l.has_fp64 ? Py_True : Py_False, "cpu", l.is_cpu ? Py_True : Py_False);
}

static PyObject *py_last_kernel_ms(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule;
    if (!PyArg_ParseTuple(args, "O", &capsule)) return NULL;
    clstats_ctx *ctx = context_of(capsule);
    return ctx ? PyFloat_FromDouble(clstats_ctx_last_kernel_ms(ctx)) : NULL;
}

static PyObject *py_release_buffers(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule;
    if (!PyArg_ParseTuple(args, "O", &capsule)) return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    Py_BEGIN_ALLOW_THREADS
    clstats_ctx_release_buffers(ctx);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_devices(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    size_t count = 0;
    int status = clstats_list_devices(NULL, 0, &count);
    if (status == CLSTATS_ERR_NO_DEVICE) return PyList_New(0);
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(NULL));
    struct clstats_device_info *info = calloc(count ? count : 1, sizeof *info);
    if (!info) return PyErr_NoMemory();
    status = clstats_list_devices(info, count, &count);
    PyObject *list = status == CLSTATS_OK ? PyList_New(0) : NULL;
    for (size_t i = 0; list && i < count; i++) {
        PyObject *d = Py_BuildValue("{s:i,s:i,s:s,s:s,s:s,s:s}", "platform_index",
                                    info[i].platform_index, "device_index", info[i].device_index,
                                    "platform", info[i].platform_name, "name",
                                    info[i].device_name, "type", info[i].type, "version",
                                    info[i].version);
        if (!d || PyList_Append(list, d) < 0) Py_CLEAR(list);
        Py_XDECREF(d);
    }
    free(info);
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(NULL));
    return list;
}

static PyObject *py_version(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyUnicode_FromString(clstats_version());
}

/* ---- Arrays ------------------------------------------------------------------------------- */

/* The descriptor of a 1-D or 2-D numpy array of float32 or float64 whose rows are contiguous,
 * aligned and in native byte order (a 1-D array is one row); writable when it is an output.
 * Anything else is a ValueError, never a crash: the Python side lays arrays out first. */
static int describe(PyObject *obj, bool output, const char *what, struct clstats_array *a)
{
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a numpy array", what);
        return -1;
    }
    PyArrayObject *arr = (PyArrayObject *)obj;
    const int type = PyArray_TYPE(arr), nd = PyArray_NDIM(arr);
    if (type != NPY_FLOAT32 && type != NPY_FLOAT64) {
        PyErr_Format(PyExc_ValueError, "%s must be float32 or float64", what);
        return -1;
    }
    const npy_intp item = PyArray_ITEMSIZE(arr);
    const npy_intp *shape = PyArray_SHAPE(arr), *strides = PyArray_STRIDES(arr);
    const bool rows_ok = nd == 1 || nd == 2;
    const npy_intp nx = nd == 2 ? shape[1] : nd == 1 ? shape[0] : 0;
    const npy_intp ny = nd == 2 ? shape[0] : 1;
    const bool inner_ok = nx <= 1 || strides[nd - 1] == item;
    const bool outer_ok = nd == 1 || ny <= 1 || (strides[0] >= nx * item && strides[0] % item == 0);
    if (!rows_ok || !inner_ok || !outer_ok || !PyArray_ISALIGNED(arr) ||
        !PyArray_ISNOTSWAPPED(arr) || (output && !PyArray_ISWRITEABLE(arr))) {
        PyErr_Format(PyExc_ValueError,
                     "%s must be a 1-D or 2-D %s array of contiguous, aligned rows%s", what,
                     type == NPY_FLOAT32 ? "float32" : "float64", output ? ", writeable" : "");
        return -1;
    }
    memset(a, 0, sizeof *a);
    a->host = PyArray_DATA(arr);
    a->dtype = type == NPY_FLOAT32 ? CLSTATS_FLOAT32 : CLSTATS_FLOAT64;
    a->nx = (size_t)nx;
    a->ny = (size_t)ny;
    a->stride = nd == 2 && ny > 1 ? (size_t)(strides[0] / item) : (size_t)nx;
    return 0;
}

/* An optional output: None gives *present false. */
static int describe_output(PyObject *obj, const char *what, struct clstats_array *a,
                           bool *present)
{
    *present = obj != Py_None;
    return *present ? describe(obj, true, what, a) : 0;
}

/* An optional input: None gives *present false. */
static int describe_optional(PyObject *obj, const char *what, struct clstats_array *a,
                             bool *present)
{
    *present = obj != Py_None;
    return *present ? describe(obj, false, what, a) : 0;
}

static bool same_shape(const struct clstats_array *a, const struct clstats_array *b)
{
    return a->nx == b->nx && a->ny == b->ny;
}

/* The even-count rule by name: 'mean', 'lower' or 'upper'. */
static int even_rule(const char *name, enum clstats_even *out)
{
    if (strcmp(name, "mean") == 0) *out = CLSTATS_EVEN_MEAN;
    else if (strcmp(name, "lower") == 0) *out = CLSTATS_EVEN_LOWER;
    else if (strcmp(name, "upper") == 0) *out = CLSTATS_EVEN_UPPER;
    else {
        PyErr_Format(PyExc_ValueError, "even must be 'mean', 'lower' or 'upper', not '%s'", name);
        return -1;
    }
    return 0;
}

/* ---- The filter --------------------------------------------------------------------------- */

/* Where the device cannot hold the whole image, the library filters it a strip at a time from
 * these rows of host memory. */
struct rows_in_memory {
    const struct clstats_array *image, *median, *mad;
};

static int read_rows(void *user, size_t plane, size_t row0, size_t rows, float *dst)
{
    (void)plane;
    const struct rows_in_memory *m = user;
    const float *src = (const float *)m->image->host;
    for (size_t r = 0; r < rows; r++)
        memcpy(dst + r * m->image->nx, src + (row0 + r) * m->image->stride,
               m->image->nx * sizeof *dst);
    return 0;
}

static void copy_rows(const struct clstats_array *out, const float *src, size_t row0, size_t rows)
{
    for (size_t r = 0; r < rows; r++)
        memcpy((float *)out->host + (row0 + r) * out->stride, src + r * out->nx,
               out->nx * sizeof *src);
}

static int write_rows(void *user, const struct clstats_strip *s)
{
    const struct rows_in_memory *m = user;
    if (m->median) copy_rows(m->median, s->median, s->row0, s->rows);
    if (m->mad) copy_rows(m->mad, s->mad, s->row0, s->rows);
    return 0;
}

static int filter_in_strips(clstats_ctx *ctx, const struct clstats_array *image,
                            const struct clstats_filter_params *p,
                            const struct clstats_array *median, const struct clstats_array *mad)
{
    struct rows_in_memory m = {image, median, mad};
    struct clstats_rows_job job = {
        .nx = image->nx, .ny = image->ny, .planes = 1, .params = *p,
        .maps = (median ? CLSTATS_MAP_MEDIAN : 0) | (mad ? CLSTATS_MAP_MAD : 0),
        .read = read_rows, .write = write_rows, .user = &m};
    const uint64_t strip_memory = (uint64_t)1 << 30;
    int rows = 0;
    int status = clstats_filter_window(p, NULL, &rows, NULL, NULL);
    if (status == CLSTATS_OK)
        status = clstats_filter_strip_height(ctx, image->nx, image->ny, rows, job.maps,
                                             strip_memory, &job.height);
    return status == CLSTATS_OK ? clstats_filter_rows(ctx, &job) : status;
}

/* A uint8 array of one row or rows of contiguous bytes: a footprint or a mask. */
static int describe_bytes(PyObject *obj, const char *what, struct clstats_array *a)
{
    PyArrayObject *arr = (PyArrayObject *)obj;
    if (!PyArray_Check(obj) || PyArray_TYPE(arr) != NPY_UINT8 || PyArray_NDIM(arr) != 2 ||
        !PyArray_IS_C_CONTIGUOUS(arr)) {
        PyErr_Format(PyExc_ValueError, "%s must be a C-contiguous 2-D uint8 array", what);
        return -1;
    }
    memset(a, 0, sizeof *a);
    a->host = PyArray_DATA(arr);
    a->dtype = CLSTATS_UINT8;
    a->ny = (size_t)PyArray_DIM(arr, 0);
    a->nx = (size_t)PyArray_DIM(arr, 1);
    a->stride = a->nx;
    return 0;
}

/* median_filter(ctx, image, (width, height, origin_x, origin_y), footprint, even, mode, cval,
 * mask, median_out, mad_out): footprint and mask None or C-contiguous uint8; the outputs of the
 * image's dtype. */
static PyObject *py_median_filter(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *image_obj, *footprint_obj, *mask_obj, *median_obj, *mad_obj;
    int width, height, origin_x, origin_y;
    const char *even, *mode;
    double cval;
    if (!PyArg_ParseTuple(args, "OO(iiii)OssdOOO", &capsule, &image_obj, &width, &height,
                          &origin_x, &origin_y, &footprint_obj, &even, &mode, &cval, &mask_obj,
                          &median_obj, &mad_obj))
        return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array image, median, mad, footprint, mask;
    bool want_median, want_mad;
    if (describe(image_obj, false, "image", &image) < 0 ||
        describe_output(median_obj, "median output", &median, &want_median) < 0 ||
        describe_output(mad_obj, "MAD output", &mad, &want_mad) < 0 ||
        (footprint_obj != Py_None && describe_bytes(footprint_obj, "footprint", &footprint) < 0) ||
        (mask_obj != Py_None && describe_bytes(mask_obj, "mask", &mask) < 0))
        return NULL;
    if ((want_median && !same_shape(&image, &median)) || (want_mad && !same_shape(&image, &mad)) ||
        (mask_obj != Py_None && !same_shape(&image, &mask))) {
        PyErr_SetString(PyExc_ValueError, "outputs and mask must have the image's shape");
        return NULL;
    }
    struct clstats_filter_params p = {.width = width, .height = height, .origin_x = origin_x,
                                      .origin_y = origin_y, .cval = (float)cval,
                                      .cval_f64 = &cval};
    if (footprint_obj != Py_None) {
        p.footprint = footprint.host;
        p.footprint_width = (int)footprint.nx;
        p.footprint_height = (int)footprint.ny;
    }
    if (mask_obj != Py_None) p.mask = &mask;
    if (even_rule(even, &p.even) < 0) return NULL;
    int status = clstats_boundary_from_name(mode, &p.boundary);
    if (status != CLSTATS_OK) return raise_status(status, "unknown boundary mode");
    const struct clstats_array *mo = want_median ? &median : NULL, *ao = want_mad ? &mad : NULL;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_median_filter_array(ctx, &image, &p, mo, ao);
    if (status == CLSTATS_ERR_DEVICE_MEMORY && image.dtype == CLSTATS_FLOAT32 && !p.mask)
        status = filter_in_strips(ctx, &image, &p, mo, ao);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    Py_RETURN_NONE;
}

/* SIGMA and SNR maps from C-contiguous float32 arrays of one size (the Python side makes them
 * so); snr may be None. */
static PyObject *py_sigma_snr(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *objs[5];
    if (!PyArg_ParseTuple(args, "OOOOO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4]))
        return NULL;
    static const char *const names[5] = {"pixels", "median", "mad", "sigma output",
                                         "snr output"};
    void *ptr[5] = {NULL};
    npy_intp n = -1;
    /* the MAD's dtype decides: every array float32, or every one float64 */
    const int type = PyArray_Check(objs[2]) ? PyArray_TYPE((PyArrayObject *)objs[2]) : -1;
    if (type != NPY_FLOAT32 && type != NPY_FLOAT64) {
        PyErr_SetString(PyExc_ValueError, "mad must be a float32 or float64 array");
        return NULL;
    }
    for (int i = 0; i < 5; i++) {
        if (objs[i] == Py_None && (i == 4 || i == 0 || i == 1)) continue;
        PyArrayObject *a = (PyArrayObject *)objs[i];
        if (!PyArray_Check(objs[i]) || PyArray_TYPE(a) != type ||
            !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a) ||
            (i >= 3 && !PyArray_ISWRITEABLE(a)) || (n >= 0 && PyArray_SIZE(a) != n)) {
            PyErr_Format(PyExc_ValueError, "%s must be a C-contiguous %s array of %zd values",
                         names[i], type == NPY_FLOAT32 ? "float32" : "float64", n);
            return NULL;
        }
        n = PyArray_SIZE(a);
        ptr[i] = PyArray_DATA(a);
    }
    if (ptr[4] && (!ptr[0] || !ptr[1])) {
        PyErr_SetString(PyExc_ValueError, "the SNR map needs the pixels and the median map");
        return NULL;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = type == NPY_FLOAT32
                 ? clstats_sigma_snr(ptr[0], ptr[1], ptr[2], (size_t)n, ptr[3], ptr[4])
                 : clstats_sigma_snr_f64(ptr[0], ptr[1], ptr[2], (size_t)n, ptr[3], ptr[4]);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, NULL);
    Py_RETURN_NONE;
}

/* ---- Order statistics --------------------------------------------------------------------- */


/* (value, NaNs met) of one order statistic of all the array's elements; value None where no
 * element is valid (numpy's all-NaN case, which the Python side warns about). what: "median"
 * or "kth" (k the 0-based rank among the valid values). */
static PyObject *py_select(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *data_obj;
    const char *what, *even = "mean";
    unsigned long long k = 0;
    if (!PyArg_ParseTuple(args, "OOsK|s", &capsule, &data_obj, &what, &k, &even)) return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array data;
    if (describe(data_obj, false, "data", &data) < 0) return NULL;
    uint64_t nans = 0;
    struct clstats_select_options o = {.nan_count = &nans};
    if (even_rule(even, &o.even) < 0) return NULL;
    const bool median = strcmp(what, "median") == 0;
    if (!median && strcmp(what, "kth") != 0) {
        PyErr_SetString(PyExc_ValueError, "what must be 'median' or 'kth'");
        return NULL;
    }
    double value = NAN;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = median ? clstats_median_array(ctx, &data, &o, &value)
                    : clstats_select_kth_array(ctx, &data, k, &o, &value);
    Py_END_ALLOW_THREADS
    if (status == CLSTATS_ERR_EMPTY) return Py_BuildValue("(OK)", Py_None, nans);
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return Py_BuildValue("(dK)", value, nans);
}

/* Quantiles (fractions, a contiguous float64 vector) of all the array's elements by numpy's
 * 'linear' rule into a float64 vector of the same length; returns the NaNs met, or None where
 * no element is valid. */
static PyObject *py_quantiles(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *data_obj, *q_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOOO", &capsule, &data_obj, &q_obj, &out_obj)) return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array data, q, out;
    if (describe(data_obj, false, "data", &data) < 0 || describe(q_obj, false, "q", &q) < 0 ||
        describe(out_obj, true, "out", &out) < 0)
        return NULL;
    if (q.dtype != CLSTATS_FLOAT64 || out.dtype != CLSTATS_FLOAT64 || q.ny != 1 || out.ny != 1 ||
        q.nx != out.nx) {
        PyErr_SetString(PyExc_ValueError, "q and out must be float64 vectors of one length");
        return NULL;
    }
    uint64_t nans = 0;
    struct clstats_select_options o = {.nan_count = &nans};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_quantiles_array(ctx, &data, q.host, q.nx, &o, out.host);
    Py_END_ALLOW_THREADS
    if (status == CLSTATS_ERR_EMPTY) Py_RETURN_NONE;
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return PyLong_FromUnsignedLongLong(nans);
}

/* ---- Over MPI ranks (include/clstats/mpi.h; clstats.mpi) -------------------------------------
 * Built where the library has its MPI module. The calls go through the extension clstats._mpi
 * (_mpi_api.h), imported on the first one, so that this extension links no MPI. The
 * communicator comes as its Fortran handle (mpi4py's Comm.py2f()), so that this file needs no
 * mpi4py headers. */
#ifdef CLSTATS_HAVE_MPI
#include "_mpi_api.h"

/* clstats._mpi's calls, imported once (NULL with the ImportError set where it cannot be). */
static const struct clstats_py_mpi_api *mpi_api(void)
{
    static const struct clstats_py_mpi_api *api;
    if (api) return api;
    PyObject *module = PyImport_ImportModule("clstats._mpi"); /* the capsule's import finds
                                                                 attributes, not submodules */
    if (!module) return NULL;
    Py_DECREF(module);
    api = PyCapsule_Import(CLSTATS_PY_MPI_CAPSULE, 0);
    return api;
}

/* mpi_select(ctx, comm_handle, part, what, k, q, out, even, method) -> (value or None, nans,
 * bytes, messages): what 'kth' or 'median' (value), or 'quantiles' (q and out float64 vectors,
 * value 0.0); None for the value where no rank holds a valid value; method an enum
 * clstats_select_method. */
static PyObject *py_mpi_select(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *part_obj, *q_obj, *out_obj;
    long long handle;
    const char *what, *even = "mean";
    unsigned long long k = 0;
    int method = CLSTATS_SELECT_AUTO;
    const struct clstats_py_mpi_api *api;
    if (!PyArg_ParseTuple(args, "OLOsKOO|si", &capsule, &handle, &part_obj, &what, &k, &q_obj,
                          &out_obj, &even, &method) ||
        !(api = mpi_api()))
        return NULL;
    /* A rank whose own arguments are bad still joins the call, with none, so that every rank
     * fails together (mpi.h); it raises its own error, the others the library's. */
    clstats_ctx *ctx = capsule == Py_None ? NULL : context_of(capsule);
    struct clstats_array part, q = {0}, out = {0};
    uint64_t nans = 0;
    struct clstats_select_options o = {.nan_count = &nans,
                                       .method = (enum clstats_select_method)method};
    const bool quantiles = strcmp(what, "quantiles") == 0;
    bool bad = !ctx || describe(part_obj, false, "part", &part) < 0 || even_rule(even, &o.even) < 0;
    if (!bad && !quantiles && strcmp(what, "kth") != 0 && strcmp(what, "median") != 0) {
        PyErr_SetString(PyExc_ValueError, "what must be 'kth', 'median' or 'quantiles'");
        bad = true;
    }
    if (!bad && quantiles &&
        (describe(q_obj, false, "q", &q) < 0 || describe(out_obj, true, "out", &out) < 0))
        bad = true;
    if (!bad && quantiles && (q.dtype != CLSTATS_FLOAT64 || out.dtype != CLSTATS_FLOAT64 ||
                              q.ny != 1 || out.ny != 1 || q.nx != out.nx)) {
        PyErr_SetString(PyExc_ValueError, "q and out must be float64 vectors of one length");
        bad = true;
    }
    PyObject *type = NULL, *value_err = NULL, *trace = NULL;
    if (bad) PyErr_Fetch(&type, &value_err, &trace);
    const struct clstats_array *p = bad ? NULL : &part;
    uint64_t t[2] = {0, 0}; /* bytes, messages */
    double value = NAN;
    int status;
    Py_BEGIN_ALLOW_THREADS if (quantiles) status =
        api->quantiles(ctx, handle, p, q.host, q.nx, &o, out.host, t);
    else if (strcmp(what, "median") == 0) status = api->median(ctx, handle, p, &o, &value, t);
    else status = api->select_kth(ctx, handle, p, k, &o, &value, t);
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_Restore(type, value_err, trace);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad arguments");
        return NULL;
    }
    if (status == CLSTATS_ERR_EMPTY)
        return Py_BuildValue("(OKKK)", Py_None, nans, (unsigned long long)t[0],
                             (unsigned long long)t[1]);
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return Py_BuildValue("(dKKK)", quantiles ? 0.0 : value, nans, (unsigned long long)t[0],
                         (unsigned long long)t[1]);
}

/* mpi_median_filter(ctx, comm_handle, band, ny, row0, (width, height, origin_x, origin_y),
 * mode name, cval, median_out, mad_out) -> bytes: a float32 band of rows of a ny-row image. */
static PyObject *py_mpi_median_filter(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *band_obj, *med_obj, *mad_obj;
    long long handle;
    unsigned long long ny, row0;
    int width, height, ox, oy;
    const char *mode_name;
    double cval;
    const struct clstats_py_mpi_api *api;
    if (!PyArg_ParseTuple(args, "OLOKK(iiii)sdOO", &capsule, &handle, &band_obj, &ny, &row0, &width,
                          &height, &ox, &oy, &mode_name, &cval, &med_obj, &mad_obj) ||
        !(api = mpi_api()))
        return NULL;
    /* A rank whose own arguments are bad joins the call without a context (py_mpi_select). */
    enum clstats_boundary mode = CLSTATS_BOUNDARY_REFLECT;
    clstats_ctx *ctx = capsule == Py_None ? NULL : context_of(capsule);
    struct clstats_array band = {0}, med = {0}, mad = {0};
    bool has_med = false, has_mad = false;
    bool bad = !ctx || describe(band_obj, false, "band", &band) < 0 ||
               describe_output(med_obj, "median output", &med, &has_med) < 0 ||
               describe_output(mad_obj, "mad output", &mad, &has_mad) < 0;
    if (!bad && clstats_boundary_from_name(mode_name, &mode) != CLSTATS_OK) {
        PyErr_Format(PyExc_ValueError, "unknown boundary mode '%s'", mode_name);
        bad = true;
    }
    const bool packed = band.dtype == CLSTATS_FLOAT32 && band.stride == band.nx &&
                        (!has_med || (same_shape(&med, &band) && med.dtype == CLSTATS_FLOAT32 &&
                                      med.stride == med.nx)) &&
                        (!has_mad || (same_shape(&mad, &band) && mad.dtype == CLSTATS_FLOAT32 &&
                                      mad.stride == mad.nx));
    if (!bad && !packed) {
        PyErr_SetString(PyExc_ValueError,
                        "band and outputs must be C-contiguous float32 arrays of one shape");
        bad = true;
    }
    PyObject *type = NULL, *value_err = NULL, *trace = NULL;
    if (bad) PyErr_Fetch(&type, &value_err, &trace);
    const size_t rows = band.nx ? band.ny : 0;
    struct clstats_filter_params p = {.width = width, .height = height, .origin_x = ox,
                                      .origin_y = oy, .boundary = mode,
                                      .cval = (float)cval};
    uint64_t t[2] = {0, 0};
    int status;
    Py_BEGIN_ALLOW_THREADS status = api->median_filter_rows(
        bad ? NULL : ctx, handle, band.host, band.nx, (size_t)ny, (size_t)row0, rows, &p,
        has_med ? med.host : NULL, has_mad ? mad.host : NULL, t);
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_Restore(type, value_err, trace);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad arguments");
        return NULL;
    }
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return PyLong_FromUnsignedLongLong(t[0]);
}

/* mpi_columns(ctx, comm_handle, part, k, out, sums, even) -> (nans, bytes, messages, empty):
 * the column medians (k None) or k-th values (k a uint64 vector, 1-based; sums a vector of the
 * part's dtype or None) of a matrix whose rows the ranks hold, into out (float64); empty tells
 * that some column had too few valid values (NaN there). */
static PyObject *py_mpi_columns(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *part_obj, *k_obj, *out_obj, *sums_obj;
    long long handle;
    const char *even = "mean";
    const struct clstats_py_mpi_api *api;
    if (!PyArg_ParseTuple(args, "OLOOOO|s", &capsule, &handle, &part_obj, &k_obj, &out_obj,
                          &sums_obj, &even) ||
        !(api = mpi_api()))
        return NULL;
    clstats_ctx *ctx = capsule == Py_None ? NULL : context_of(capsule);
    struct clstats_array part, out = {0}, sums = {0};
    uint64_t nans = 0;
    struct clstats_select_options o = {.nan_count = &nans};
    bool has_sums = false;
    bool bad = !ctx || describe(part_obj, false, "part", &part) < 0 ||
               describe(out_obj, true, "out", &out) < 0 ||
               describe_output(sums_obj, "sums", &sums, &has_sums) < 0 ||
               even_rule(even, &o.even) < 0;
    const uint64_t *k = NULL;
    if (!bad && k_obj != Py_None) {
        PyArrayObject *ka = PyArray_Check(k_obj) ? (PyArrayObject *)k_obj : NULL;
        if (!ka || PyArray_TYPE(ka) != NPY_UINT64 || !PyArray_IS_C_CONTIGUOUS(ka) ||
            PyArray_SIZE(ka) != (npy_intp)part.nx) {
            PyErr_SetString(PyExc_ValueError, "k must be a uint64 vector, one a column");
            bad = true;
        } else {
            k = PyArray_DATA(ka);
        }
    }
    if (!bad && (out.dtype != CLSTATS_FLOAT64 || out.ny != 1 || out.nx != part.nx ||
                 (has_sums && (sums.ny != 1 || sums.nx != part.nx)))) {
        PyErr_SetString(PyExc_ValueError, "out and sums must be vectors, one value a column");
        bad = true;
    }
    double *sums64 = has_sums && !bad ? malloc((part.nx ? part.nx : 1) * sizeof *sums64) : NULL;
    if (has_sums && !bad && !sums64) {
        PyErr_NoMemory();
        bad = true;
    }
    PyObject *type = NULL, *value_err = NULL, *trace = NULL;
    if (bad) PyErr_Fetch(&type, &value_err, &trace);
    uint64_t t[2] = {0, 0};
    int status;
    /* A rank whose own arguments are bad joins the call without a context (py_mpi_select). */
    Py_BEGIN_ALLOW_THREADS if (k_obj == Py_None) status = api->column_medians(
        bad ? NULL : ctx, handle, bad ? NULL : &part, &o, bad ? NULL : out.host, t);
    else status = api->column_smallest(bad ? NULL : ctx, handle, bad ? NULL : &part, k, &o,
                                       bad ? NULL : out.host, sums64, t);
    Py_END_ALLOW_THREADS
    if (bad) {
        free(sums64);
        PyErr_Restore(type, value_err, trace);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad arguments");
        return NULL;
    }
    for (size_t c = 0; sums64 && c < part.nx; c++) {
        if (sums.dtype == CLSTATS_FLOAT64) ((double *)sums.host)[c] = sums64[c];
        else ((float *)sums.host)[c] = (float)sums64[c];
    }
    free(sums64);
    if (status != CLSTATS_OK && status != CLSTATS_ERR_EMPTY)
        return raise_status(status, clstats_ctx_message(ctx));
    return Py_BuildValue("(KKKO)", (unsigned long long)nans, (unsigned long long)t[0],
                         (unsigned long long)t[1],
                         status == CLSTATS_ERR_EMPTY ? Py_True : Py_False);
}
#endif

/* Medians of the columns of a float32 matrix into a float32 vector. */
static PyObject *py_column_medians(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *m_obj, *out_obj;
    const char *even = "mean";
    if (!PyArg_ParseTuple(args, "OOO|s", &capsule, &m_obj, &out_obj, &even)) return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array m, out;
    if (describe(m_obj, false, "matrix", &m) < 0 || describe(out_obj, true, "out", &out) < 0)
        return NULL;
    if (m.dtype != CLSTATS_FLOAT32 || out.dtype != CLSTATS_FLOAT32 || out.ny != 1 ||
        out.nx != m.nx) {
        PyErr_SetString(PyExc_ValueError, "column medians take float32, out one per column");
        return NULL;
    }
    struct clstats_select_options o = {0};
    if (even_rule(even, &o.even) < 0) return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_column_medians(ctx, m.host, m.ny, m.nx, m.stride, &o, out.host);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    Py_RETURN_NONE;
}

/* Medians of tw x th tiles of a float32 image into a C-contiguous float32 array of
 * ceil(ny / th) x ceil(nx / tw). */
static PyObject *py_tile_medians(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *im_obj, *out_obj;
    Py_ssize_t tw, th;
    const char *even = "mean";
    if (!PyArg_ParseTuple(args, "OOnnO|s", &capsule, &im_obj, &tw, &th, &out_obj, &even))
        return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array im, out;
    if (describe(im_obj, false, "image", &im) < 0 || describe(out_obj, true, "out", &out) < 0)
        return NULL;
    if (tw < 1 || th < 1) {
        PyErr_SetString(PyExc_ValueError, "tiles must be at least 1 x 1");
        return NULL;
    }
    const size_t ntx = (im.nx + (size_t)tw - 1) / (size_t)tw;
    const size_t nty = (im.ny + (size_t)th - 1) / (size_t)th;
    if (im.dtype != CLSTATS_FLOAT32 || out.dtype != CLSTATS_FLOAT32 || out.nx != ntx ||
        out.ny != nty || out.stride != ntx) {
        PyErr_SetString(PyExc_ValueError, "tile medians take float32, out one per tile");
        return NULL;
    }
    struct clstats_select_options o = {0};
    if (even_rule(even, &o.even) < 0) return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_tile_medians(ctx, im.host, im.nx, im.ny, im.stride, (size_t)tw, (size_t)th,
                                  &o, out.host);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    Py_RETURN_NONE;
}

/* ---- Robust regression ------------------------------------------------------------------ */

/* A C-contiguous vector of n values of a type, writable: a fit's outputs. */
static void *vector_out(PyObject *obj, int type, npy_intp n, const char *what)
{
    PyArrayObject *arr = (PyArrayObject *)obj;
    if (!PyArray_Check(obj) || PyArray_TYPE(arr) != type || !PyArray_IS_C_CONTIGUOUS(arr) ||
        !PyArray_ISWRITEABLE(arr) || PyArray_SIZE(arr) != n) {
        PyErr_Format(PyExc_ValueError, "%s must be a writable contiguous vector of %zd", what, n);
        return NULL;
    }
    return PyArray_DATA(arr);
}

/* regress(ctx, x, y, (method, alpha, h, n_subsets, intercept, reweight, seed, omit_nan),
 * coef, raw_coef, support, outliers) -> dict of the fit's numbers; x an n x p float64 matrix,
 * y n float64 values, coef and raw_coef p float64, support and outliers n uint8. */
static PyObject *py_regress(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *x_obj, *y_obj, *coef_obj, *raw_obj, *support_obj, *outliers_obj;
    const char *method;
    double alpha;
    Py_ssize_t h;
    unsigned int n_subsets;
    int intercept, reweight, omit_nan;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "OOO(sdnIppKp)OOOO", &capsule, &x_obj, &y_obj, &method, &alpha,
                          &h, &n_subsets, &intercept, &reweight, &seed, &omit_nan, &coef_obj,
                          &raw_obj, &support_obj, &outliers_obj))
        return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array x, y;
    if (describe(x_obj, false, "X", &x) < 0 || describe(y_obj, false, "y", &y) < 0) return NULL;
    const npy_intp n = (npy_intp)x.ny, p = (npy_intp)x.nx;
    struct clstats_regress_result r = {0};
    if (!(r.coef = vector_out(coef_obj, NPY_FLOAT64, p, "coef")) ||
        !(r.raw_coef = vector_out(raw_obj, NPY_FLOAT64, p, "raw_coef")) ||
        !(r.support = vector_out(support_obj, NPY_UINT8, n, "support")) ||
        !(r.outliers = vector_out(outliers_obj, NPY_UINT8, n, "outliers")))
        return NULL;
    if (h < 0) {
        PyErr_SetString(PyExc_ValueError, "h must not be negative");
        return NULL;
    }
    struct clstats_regress_options o = {
        .alpha = alpha, .h = (size_t)h, .n_subsets = n_subsets, .no_intercept = !intercept,
        .no_reweight = !reweight, .seed = seed,
        .nan_policy = omit_nan ? CLSTATS_NAN_OMIT : CLSTATS_NAN_ERROR};
    if (strcmp(method, "lts") == 0) o.method = CLSTATS_REGRESS_LTS;
    else if (strcmp(method, "lms") == 0) o.method = CLSTATS_REGRESS_LMS;
    else {
        PyErr_SetString(PyExc_ValueError, "method must be 'lts' or 'lms'");
        return NULL;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_regress_fit(ctx, &x, &y, &o, &r);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:n,s:n}", "intercept", r.intercept,
                         "raw_intercept", r.raw_intercept, "scale", r.scale, "raw_scale",
                         r.raw_scale, "crit", r.crit, "h", (Py_ssize_t)r.h, "n_used",
                         (Py_ssize_t)r.n_used);
}

/* The mesh background of a float32 or float64 image (mask: None or a C-contiguous uint8 array
 * of the image's shape), its maps written into float32 arrays of that shape (either None);
 * returns (mesh background, mesh rms, global background, global rms) with the meshes as lists
 * of rows. */
static PyObject *py_background(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *im_obj, *mask_obj, *back_obj, *rms_obj;
    Py_ssize_t bw, bh, fw, fh;
    double fthresh, clip, exclude;
    int estimator, clipping, rms_estimator, iters;
    if (!PyArg_ParseTuple(args, "OOOnnnnddiiiidOO", &capsule, &im_obj, &mask_obj, &bw, &bh, &fw,
                          &fh, &fthresh, &clip, &estimator, &clipping, &rms_estimator, &iters,
                          &exclude, &back_obj, &rms_obj))
        return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array im, back, rms;
    if (describe(im_obj, false, "image", &im) < 0) return NULL;
    if (back_obj != Py_None && describe(back_obj, true, "background", &back) < 0) return NULL;
    if (rms_obj != Py_None && describe(rms_obj, true, "rms", &rms) < 0) return NULL;
    const uint8_t *mask = NULL;
    if (mask_obj != Py_None) {
        struct clstats_array m;
        if (describe_bytes(mask_obj, "mask", &m) < 0) return NULL;
        if (!same_shape(&im, &m)) {
            PyErr_SetString(PyExc_ValueError, "the mask must have the image's shape");
            return NULL;
        }
        mask = m.host;
    }
    if (bw < 1 || bh < 1 || fw < 1 || fh < 1) {
        PyErr_SetString(PyExc_ValueError, "box and filter sizes must be at least 1");
        return NULL;
    }
    struct clstats_background_options o = {
        .box_w = (size_t)bw, .box_h = (size_t)bh, .filter_w = (size_t)fw, .filter_h = (size_t)fh,
        .filter_threshold = fthresh, .clip_sigma = clip,
        .estimator = (enum clstats_bkg_estimator)estimator,
        .clipping = (enum clstats_bkg_clipping)clipping,
        .rms_estimator = (enum clstats_bkg_rms)rms_estimator, .clip_iters = iters,
        .exclude_percentile = exclude};
    struct clstats_background *bkg = NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_background(ctx, &im, mask, &o, &bkg);
    if (status == CLSTATS_OK)
        status = clstats_background_maps(ctx, bkg, back_obj != Py_None ? &back : NULL,
                                         rms_obj != Py_None ? &rms : NULL);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) {
        clstats_background_free(bkg);
        return raise_status(status, clstats_ctx_message(ctx));
    }
    PyObject *meshes[2] = {PyList_New((Py_ssize_t)bkg->ny), PyList_New((Py_ssize_t)bkg->ny)};
    for (int m = 0; m < 2; m++)
        for (size_t y = 0; meshes[m] && y < bkg->ny; y++) {
            PyObject *row = PyList_New((Py_ssize_t)bkg->nx);
            for (size_t x = 0; row && x < bkg->nx; x++) {
                const float v = (m ? bkg->rms : bkg->back)[y * bkg->nx + x];
                PyList_SET_ITEM(row, (Py_ssize_t)x, PyFloat_FromDouble(v));
            }
            if (!row) {
                Py_CLEAR(meshes[m]);
                break;
            }
            PyList_SET_ITEM(meshes[m], (Py_ssize_t)y, row);
        }
    PyObject *result = meshes[0] && meshes[1]
                           ? Py_BuildValue("(OOdd)", meshes[0], meshes[1],
                                           (double)bkg->global_back, (double)bkg->global_rms)
                           : NULL;
    Py_XDECREF(meshes[0]);
    Py_XDECREF(meshes[1]);
    clstats_background_free(bkg);
    return result;
}

/* ---- PaSS variable selection --------------------------------------------------------------- */

/* pass_fit(ctx, x, y, (criterion, gamma, n_particles, n_iter, probs (5), max_size, seed),
 * coef, support, history) -> dict; x n x p and y n of one float dtype, coef p float64, support
 * p uint8, history n_iter + 1 float64. */
static PyObject *py_pass_fit(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *x_obj, *y_obj, *coef_obj, *support_obj, *history_obj;
    const char *crit;
    struct clstats_pass_options o;
    clstats_pass_default_options(&o);
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "OOO(sdII(ddddd)IK)OOO", &capsule, &x_obj, &y_obj, &crit,
                          &o.gamma, &o.n_particles, &o.n_iter, &o.p_forward[0], &o.p_forward[1],
                          &o.p_forward[2], &o.p_backward[0], &o.p_backward[1], &o.max_size,
                          &seed, &coef_obj, &support_obj, &history_obj))
        return NULL;
    o.seed = seed;
    static const char *const names[] = {"hdbic", "hdhqc", "ebic", "bic", "aic"};
    int c = 0;
    while (c < 5 && strcmp(crit, names[c]) != 0) c++;
    if (c == 5) {
        PyErr_SetString(PyExc_ValueError, "criterion must be 'hdbic', 'hdhqc', 'ebic', 'bic' or 'aic'");
        return NULL;
    }
    o.criterion = (enum clstats_varsel_criterion)c;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array x, y;
    if (describe(x_obj, false, "X", &x) < 0 || describe(y_obj, false, "y", &y) < 0) return NULL;
    const npy_intp p = (npy_intp)x.nx;
    struct clstats_pass_result r = {0};
    if (!(r.coef = vector_out(coef_obj, NPY_FLOAT64, p, "coef")) ||
        !(r.support = vector_out(support_obj, NPY_UINT8, p, "support")) ||
        !(r.history = vector_out(history_obj, NPY_FLOAT64, (npy_intp)o.n_iter + 1, "history")))
        return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_pass_fit(ctx, &x, &y, &o, &r);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return Py_BuildValue("{s:d,s:d,s:n}", "intercept", r.intercept, "criterion", r.criterion,
                         "n_selected", (Py_ssize_t)r.n_selected);
}

/* ---- The module --------------------------------------------------------------------------- */

/* ---- k-means ------------------------------------------------------------------------------ */

/* The labels' output: a writeable contiguous int32 vector of n, or NULL with a ValueError. */
static int32_t *labels_vector(PyObject *obj, size_t n)
{
    PyArrayObject *arr = (PyArrayObject *)obj;
    if (!PyArray_Check(obj) || PyArray_TYPE(arr) != NPY_INT32 || !PyArray_IS_C_CONTIGUOUS(arr) ||
        !PyArray_ISWRITEABLE(arr) || (size_t)PyArray_SIZE(arr) != n) {
        PyErr_SetString(PyExc_ValueError, "labels must be a contiguous int32 vector of n");
        return NULL;
    }
    return PyArray_DATA(arr);
}

/* The arrays the k-means fits take: X, the centres' output, the optional initial centres and
 * weights, the labels' output. 0, or -1 with a Python error. */
static int kmeans_arrays(PyObject *x_obj, PyObject *c_obj, PyObject *init_obj, PyObject *w_obj,
                         PyObject *l_obj, struct clstats_array *x, struct clstats_array *centres,
                         struct clstats_array *given, bool *has_given,
                         struct clstats_array *weight, bool *has_weight, int32_t **labels)
{
    if (describe(x_obj, false, "X", x) < 0 || describe(c_obj, true, "centres", centres) < 0 ||
        describe_optional(init_obj, "init", given, has_given) < 0 ||
        describe_optional(w_obj, "sample_weight", weight, has_weight) < 0)
        return -1;
    *labels = labels_vector(l_obj, x->ny);
    return *labels ? 0 : -1;
}

/* kmeans(ctx, X, k, init, init_centres or None, weights or None, n_init, max_iter, tol, seed,
 * skip_nan, centres_out, labels_out (int32)) -> (inertia, n_iter). init: 0 k-means++, 1
 * random, 2 given. */
static PyObject *py_kmeans(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *x_obj, *init_obj, *w_obj, *c_obj, *l_obj;
    Py_ssize_t k;
    int init, n_init, max_iter, skip_nan;
    double tol;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "OOniOOiidKiOO", &capsule, &x_obj, &k, &init, &init_obj, &w_obj,
                          &n_init, &max_iter, &tol, &seed, &skip_nan, &c_obj, &l_obj))
        return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array x, centres, given, weight;
    bool has_given, has_weight;
    int32_t *labels;
    if (kmeans_arrays(x_obj, c_obj, init_obj, w_obj, l_obj, &x, &centres, &given, &has_given,
                      &weight, &has_weight, &labels) < 0)
        return NULL;
    int n_iter = 0;
    double inertia = 0.0;
    struct clstats_kmeans_options o;
    clstats_kmeans_options_init(&o);
    o.init = (enum clstats_kmeans_init)init;
    o.init_centers = has_given ? &given : NULL;
    o.sample_weight = has_weight ? &weight : NULL;
    o.n_init = n_init;
    o.max_iter = max_iter;
    o.tol = tol;
    o.seed = seed;
    o.skip_nan = skip_nan;
    o.n_iter = &n_iter;
    o.inertia = &inertia;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_kmeans(ctx, &x, (size_t)k, &o, &centres, labels);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return Py_BuildValue("(di)", inertia, n_iter);
}

/* kmeans_predict(ctx, X, centres, weights or None, labels_out) -> inertia */
static PyObject *py_kmeans_predict(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *x_obj, *c_obj, *w_obj, *l_obj;
    if (!PyArg_ParseTuple(args, "OOOOO", &capsule, &x_obj, &c_obj, &w_obj, &l_obj)) return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array x, centres, weight;
    bool has_weight;
    if (describe(x_obj, false, "X", &x) < 0 || describe(c_obj, false, "centres", &centres) < 0 ||
        describe_optional(w_obj, "sample_weight", &weight, &has_weight) < 0)
        return NULL;
    int32_t *labels = labels_vector(l_obj, x.ny);
    if (!labels) return NULL;
    double inertia = 0.0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_kmeans_predict(ctx, &x, &centres, has_weight ? &weight : NULL, labels,
                                    &inertia);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return PyFloat_FromDouble(inertia);
}

/* kmeans_minibatch(ctx, X, k, init, init_centres or None, weights or None, batch_size, init_size,
 * max_iter, tol, seed, skip_nan, centres_out, labels_out) -> (inertia, n_iter, n_steps) */
static PyObject *py_kmeans_minibatch(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *x_obj, *init_obj, *w_obj, *c_obj, *l_obj;
    Py_ssize_t k, batch_size, init_size;
    int init, max_iter, skip_nan;
    double tol;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "OOniOOnnidKiOO", &capsule, &x_obj, &k, &init, &init_obj, &w_obj,
                          &batch_size, &init_size, &max_iter, &tol, &seed, &skip_nan, &c_obj,
                          &l_obj))
        return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array x, centres, given, weight;
    bool has_given, has_weight;
    int32_t *labels;
    if (kmeans_arrays(x_obj, c_obj, init_obj, w_obj, l_obj, &x, &centres, &given, &has_given,
                      &weight, &has_weight, &labels) < 0)
        return NULL;
    int n_iter = 0;
    size_t n_steps = 0;
    double inertia = 0.0;
    struct clstats_kmeans_minibatch_options o;
    clstats_kmeans_minibatch_options_init(&o);
    o.init = (enum clstats_kmeans_init)init;
    o.init_centers = has_given ? &given : NULL;
    o.sample_weight = has_weight ? &weight : NULL;
    o.batch_size = (size_t)batch_size;
    o.init_size = (size_t)init_size;
    o.max_iter = max_iter;
    o.tol = tol;
    o.seed = seed;
    o.skip_nan = skip_nan;
    o.n_iter = &n_iter;
    o.n_steps = &n_steps;
    o.inertia = &inertia;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_kmeans_minibatch(ctx, &x, (size_t)k, &o, &centres, labels);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return Py_BuildValue("(din)", inertia, n_iter, (Py_ssize_t)n_steps);
}

/* kmeans_minibatch_step(ctx, X, weights or None, skip_nan, centres (in and out), weight_sums
 * (float64 k, in and out), labels_out) -> the batch's inertia before the step */
static PyObject *py_kmeans_minibatch_step(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *x_obj, *w_obj, *c_obj, *s_obj, *l_obj;
    int skip_nan;
    if (!PyArg_ParseTuple(args, "OOOiOOO", &capsule, &x_obj, &w_obj, &skip_nan, &c_obj, &s_obj,
                          &l_obj))
        return NULL;
    clstats_ctx *ctx = context_of(capsule);
    if (!ctx) return NULL;
    struct clstats_array x, centres, weight;
    bool has_weight;
    if (describe(x_obj, false, "X", &x) < 0 || describe(c_obj, true, "centres", &centres) < 0 ||
        describe_optional(w_obj, "sample_weight", &weight, &has_weight) < 0)
        return NULL;
    PyArrayObject *sums = (PyArrayObject *)s_obj;
    if (!PyArray_Check(s_obj) || PyArray_TYPE(sums) != NPY_FLOAT64 ||
        !PyArray_IS_C_CONTIGUOUS(sums) || !PyArray_ISWRITEABLE(sums) ||
        (size_t)PyArray_SIZE(sums) != centres.ny) {
        PyErr_SetString(PyExc_ValueError, "weight_sums must be a writeable float64 vector of k");
        return NULL;
    }
    int32_t *labels = labels_vector(l_obj, x.ny);
    if (!labels) return NULL;
    double inertia = 0.0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_kmeans_minibatch_step(ctx, &x, has_weight ? &weight : NULL, skip_nan,
                                           &centres, PyArray_DATA(sums), labels, &inertia);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return PyFloat_FromDouble(inertia);
}

/* ---- Gaussian processes ------------------------------------------------------------------- */

/* A contiguous float64 array of exactly n elements (writable when `out`), or NULL with a
 * ValueError; _gp.py makes its arrays so, this only guards the extension. */
static double *f64_data(PyObject *obj, npy_intp n, bool out, const char *what)
{
    PyArrayObject *arr = (PyArrayObject *)obj;
    if (!PyArray_Check(obj) || PyArray_TYPE(arr) != NPY_FLOAT64 || !PyArray_IS_C_CONTIGUOUS(arr) ||
        (out && !PyArray_ISWRITEABLE(arr)) || PyArray_SIZE(arr) != n) {
        PyErr_Format(PyExc_ValueError, "%s must be a contiguous float64 array of %zd", what, n);
        return NULL;
    }
    return PyArray_DATA(arr);
}

/* The model from (corr, power, nugget (NaN: GPfit's rule), nug_thres). */
static int gp_model(PyObject *t, struct clstats_gp_model *m)
{
    int corr;
    clstats_gp_model_init(m);
    if (!PyArg_ParseTuple(t, "iddd", &corr, &m->power, &m->nugget, &m->nug_thres)) return -1;
    m->corr = (enum clstats_gp_corr)corr;
    return 0;
}

/* The design (X n x d, y n) of a GP call. */
static int gp_design(PyObject *x_obj, PyObject *y_obj, const double **x, const double **y,
                     size_t *n, size_t *d)
{
    PyArrayObject *xa = (PyArrayObject *)x_obj;
    if (!PyArray_Check(x_obj) || PyArray_NDIM(xa) != 2) {
        PyErr_SetString(PyExc_ValueError, "X must be a 2-D float64 array");
        return -1;
    }
    *n = (size_t)PyArray_DIM(xa, 0);
    *d = (size_t)PyArray_DIM(xa, 1);
    if (!(*x = f64_data(x_obj, (npy_intp)(*n * *d), false, "X")) ||
        !(*y = f64_data(y_obj, (npy_intp)*n, false, "y")))
        return -1;
    return 0;
}

/* gp_deviance(ctx, X, y, model, beta (count x d), dev, mu, sigma2, nugget (count each), grad (d)
 * or None) */
static PyObject *py_gp_deviance(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *x_obj, *y_obj, *m_obj, *b_obj, *dev_obj, *mu_obj, *s2_obj, *nug_obj,
        *g_obj;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "OOOOOnOOOOO", &capsule, &x_obj, &y_obj, &m_obj, &b_obj, &count,
                          &dev_obj, &mu_obj, &s2_obj, &nug_obj, &g_obj))
        return NULL;
    clstats_ctx *ctx = context_of(capsule);
    struct clstats_gp_model m;
    const double *x, *y, *beta;
    size_t n, d;
    if (!ctx || gp_model(m_obj, &m) < 0 || gp_design(x_obj, y_obj, &x, &y, &n, &d) < 0 ||
        count < 1 || !(beta = f64_data(b_obj, (npy_intp)(count * (Py_ssize_t)d), false, "beta")))
        return PyErr_Occurred() ? NULL : raise_status(CLSTATS_ERR_ARG, "count < 1");
    struct clstats_gp_eval out = {0};
    if (!(out.deviance = f64_data(dev_obj, count, true, "deviance")) ||
        !(out.mu = f64_data(mu_obj, count, true, "mu")) ||
        !(out.sigma2 = f64_data(s2_obj, count, true, "sigma2")) ||
        !(out.nugget = f64_data(nug_obj, count, true, "nugget")) ||
        (g_obj != Py_None && !(out.gradient = f64_data(g_obj, (npy_intp)d, true, "gradient"))))
        return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_gp_deviance(ctx, &m, x, y, n, d, beta, (size_t)count, &out);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    Py_RETURN_NONE;
}

/* gp_fit(ctx, X, y, model, (n_search, n_best, n_starts, diagonal, max_iter, lower, upper,
 * seed, method, population, generations), beta_out (d)) -> dict */
static PyObject *py_gp_fit(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *x_obj, *y_obj, *m_obj, *b_obj;
    struct clstats_gp_fit_options o;
    clstats_gp_fit_options_init(&o);
    Py_ssize_t ns, nb, nst, iters, pop, gens;
    int diagonal, method;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "OOOO(nnnpnddKinn)O", &capsule, &x_obj, &y_obj, &m_obj, &ns, &nb,
                          &nst, &diagonal, &iters, &o.lower, &o.upper, &seed, &method, &pop,
                          &gens, &b_obj))
        return NULL;
    clstats_ctx *ctx = context_of(capsule);
    struct clstats_gp_model m;
    const double *x, *y;
    size_t n, d;
    if (!ctx || gp_model(m_obj, &m) < 0 || gp_design(x_obj, y_obj, &x, &y, &n, &d) < 0)
        return NULL;
    if (ns < 0 || nb < 0 || nst < 0 || iters < 1 || pop < 0 || gens < 0) {
        PyErr_SetString(PyExc_ValueError, "counts must be non-negative, max_iter positive");
        return NULL;
    }
    o.method = (enum clstats_gp_optimiser)method;
    o.population = (size_t)pop;
    o.generations = (size_t)gens;
    o.n_search = (size_t)ns;
    o.n_best = (size_t)nb;
    o.n_starts = (size_t)nst;
    o.diagonal = diagonal;
    o.max_iter = (size_t)iters;
    o.seed = seed;
    struct clstats_gp_fit_result r = {0};
    if (!(r.beta = f64_data(b_obj, (npy_intp)d, true, "beta"))) return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_gp_fit(ctx, &m, x, y, n, d, &o, &r);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:n}", "deviance", r.deviance, "nugget", r.nugget,
                         "mu", r.mu, "sigma2", r.sigma2, "evaluations",
                         (Py_ssize_t)r.evaluations);
}

/* gp_predict(ctx, X, y, model, beta (d), nugget, Xnew (m x d), mean (m), mse (m) or None) */
static PyObject *py_gp_predict(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule, *x_obj, *y_obj, *m_obj, *b_obj, *xn_obj, *mean_obj, *mse_obj;
    double nugget;
    if (!PyArg_ParseTuple(args, "OOOOOdOOO", &capsule, &x_obj, &y_obj, &m_obj, &b_obj, &nugget,
                          &xn_obj, &mean_obj, &mse_obj))
        return NULL;
    clstats_ctx *ctx = context_of(capsule);
    struct clstats_gp_model m;
    const double *x, *y, *beta, *xnew;
    double *mean, *mse = NULL;
    size_t n, d;
    if (!ctx || gp_model(m_obj, &m) < 0 || gp_design(x_obj, y_obj, &x, &y, &n, &d) < 0 ||
        !(beta = f64_data(b_obj, (npy_intp)d, false, "beta")))
        return NULL;
    const npy_intp rows = PyArray_Check(xn_obj) ? PyArray_SIZE((PyArrayObject *)xn_obj) /
                                                      (npy_intp)d
                                                : 0;
    if (!(xnew = f64_data(xn_obj, rows * (npy_intp)d, false, "Xnew")) ||
        !(mean = f64_data(mean_obj, rows, true, "mean")) ||
        (mse_obj != Py_None && !(mse = f64_data(mse_obj, rows, true, "mse"))))
        return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = clstats_gp_predict(ctx, &m, x, y, n, d, beta, nugget, xnew, (size_t)rows, mean, mse);
    Py_END_ALLOW_THREADS
    if (status != CLSTATS_OK) return raise_status(status, clstats_ctx_message(ctx));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"context", py_context, METH_VARARGS, "context(spec) -> a context capsule"},
    {"gp_deviance", py_gp_deviance, METH_VARARGS,
     "gp_deviance(ctx, X, y, model, beta, count, dev, mu, sigma2, nugget, grad)"},
    {"gp_fit", py_gp_fit, METH_VARARGS, "gp_fit(ctx, X, y, model, options, beta) -> dict"},
    {"gp_predict", py_gp_predict, METH_VARARGS,
     "gp_predict(ctx, X, y, model, beta, nugget, Xnew, mean, mse)"},
    {"kmeans", py_kmeans, METH_VARARGS, "kmeans(ctx, X, k, init, ...) -> (inertia, n_iter)"},
    {"kmeans_predict", py_kmeans_predict, METH_VARARGS,
     "kmeans_predict(ctx, X, centres, weights, labels) -> inertia"},
    {"kmeans_minibatch", py_kmeans_minibatch, METH_VARARGS,
     "kmeans_minibatch(ctx, X, k, init, ...) -> (inertia, n_iter, n_steps)"},
    {"kmeans_minibatch_step", py_kmeans_minibatch_step, METH_VARARGS,
     "kmeans_minibatch_step(ctx, X, weights, skip_nan, centres, weight_sums, labels) -> inertia"},
    {"context_info", py_context_info, METH_VARARGS, "context_info(ctx) -> dict"},
    {"last_kernel_ms", py_last_kernel_ms, METH_VARARGS, "device ms of the last call's kernels"},
    {"release_buffers", py_release_buffers, METH_VARARGS, "release_buffers(ctx)"},
    {"devices", py_devices, METH_NOARGS, "devices() -> list of dicts"},
    {"version", py_version, METH_NOARGS, "the library's version"},
    {"median_filter", py_median_filter, METH_VARARGS,
     "median_filter(ctx, image, (w, h, ox, oy), footprint, even, mode, cval, mask, median, mad)"},
    {"sigma_snr", py_sigma_snr, METH_VARARGS, "sigma_snr(pixels, median, mad, sigma, snr)"},
    {"select", py_select, METH_VARARGS, "select(ctx, data, what, k[, even]) -> (value, nans)"},
    {"quantiles", py_quantiles, METH_VARARGS, "quantiles(ctx, data, q, out) -> nans"},
    {"column_medians", py_column_medians, METH_VARARGS, "column_medians(ctx, m, out[, even])"},
#ifdef CLSTATS_HAVE_MPI
    {"mpi_select", py_mpi_select, METH_VARARGS,
     "mpi_select(ctx, comm, part, what, k, q, out[, even, method]) -> (value, nans, bytes, "
     "messages)"},
    {"mpi_median_filter", py_mpi_median_filter, METH_VARARGS,
     "mpi_median_filter(ctx, comm, band, ny, row0, window, mode, cval, median, mad) -> bytes"},
    {"mpi_columns", py_mpi_columns, METH_VARARGS,
     "mpi_columns(ctx, comm, part, k, out, sums[, even]) -> (nans, bytes, messages, empty)"},
#endif
    {"tile_medians", py_tile_medians, METH_VARARGS, "tile_medians(ctx, im, tw, th, out[, even])"},
    {"regress", py_regress, METH_VARARGS, "regress(ctx, x, y, options, coef, raw, sup, out)"},
    {"background", py_background, METH_VARARGS,
     "background(ctx, im, mask, bw, bh, fw, fh, fthresh, clip, estimator, clipping, "
     "rms_estimator, clip_iters, exclude_percentile, back, rms)"},
    {"pass_fit", py_pass_fit, METH_VARARGS, "pass_fit(ctx, x, y, options, coef, support, history)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ext",
                                    "libclstats for the clstats package", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__ext(void)
{
    import_array();
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    DeviceError = PyErr_NewExceptionWithDoc(
        "clstats.DeviceError",
        "The OpenCL device failed: no device, a kernel that would not build, or the device out "
        "of memory. The message is the library's.",
        PyExc_RuntimeError, NULL);
    if (!DeviceError || PyModule_AddObject(m, "DeviceError", DeviceError) < 0) {
        Py_XDECREF(DeviceError);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(DeviceError);
    return m;
}
