/* testutil.h - helpers shared by the Check suites: handles on every
 * available backend, guarded and poisoned buffers, tensors with host
 * mirrors, random data, error norms and DESIGN.md's tolerances. */
#ifndef UDNN_TESTUTIL_H
#define UDNN_TESTUTIL_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "udnn.h"

/* ---- backends ---------------------------------------------------------------- */

/* The backends that have a device here, CPU first, less those that
 * UDNN_TEST_BACKENDS (e.g. "cpu" or "cpu,cuda") leaves out; returns the count. */
int tu_backends(udnnBackend_t out[3]);
const char *tu_backend_name(udnnBackend_t b);
/* Whether backend b has a device, asked in a child process so that this
 * one initializes no GPU runtime before Check forks each test (a CUDA
 * context does not survive fork); prints why not ("skipped") when absent. */
int tu_device_present(udnnBackend_t b);
/* A handle on backend b (asserts success). */
udnnHandle_t tu_handle(udnnBackend_t b);
/* Runs the statement that follows once per backend of tu_backends, with
 * bk that backend and h a handle on it, destroyed after the statement
 * (which must not leave the loops by break or return). */
#define TU_FOR_EACH_BACKEND(h, bk)                                                  \
    udnnBackend_t bks_[3];                                                          \
    int nbk_ = tu_backends(bks_);                                                   \
    for (int bi_ = 0; bi_ < nbk_; bi_++)                                            \
        for (udnnBackend_t bk = bks_[bi_]; bk == bks_[bi_]; bk = (udnnBackend_t)-1) \
            for (udnnHandle_t h = tu_handle(bk); h != NULL; udnnDestroy(h), h = NULL)

/* ---- errors -------------------------------------------------------------------- */

/* Asserts st == expected and that udnnGetLastErrorString contains every
 * one of the (NULL-terminated) substrings, e.g. the function and argument. */
#define tu_assert_fails(st, expected, ...) \
    tu_assert_fails_at(__FILE__, __LINE__, (st), (expected), __VA_ARGS__, (const char *)NULL)
void tu_assert_fails_at(const char *file, int line, udnnStatus_t st, udnnStatus_t expected, ...);

#define tu_ok(expr) ck_assert_int_eq((expr), UDNN_STATUS_SUCCESS)

/* ---- random numbers -------------------------------------------------------------- */

void tu_seed(uint64_t seed);
/* Seeds from the clock (printed on failure through tu_seed_used), or from
 * UDNN_TEST_SEED when set, to replay a failure's seed. */
void tu_seed_fresh(void);
uint64_t tu_seed_used(void);
double tu_uniform(double lo, double hi);
int tu_int(int lo, int hi); /* inclusive */

/* ---- guarded buffers in the backend's memory ---------------------------------------- */

/* payload bytes in the handle's memory between two guard zones; a host
 * mirror of the payload. New payloads are poisoned with 0xFF bytes (NaN in
 * every float type). */
typedef struct {
    udnnHandle_t h;
    size_t bytes;
    unsigned char *dev; /* guard | payload | guard */
    unsigned char *host;
} tu_buf;

void tu_buf_init(tu_buf *b, udnnHandle_t h, size_t bytes);
void *tu_buf_ptr(const tu_buf *b); /* the payload in the handle's memory */
void tu_buf_upload(tu_buf *b);     /* host mirror -> backend */
void tu_buf_download(tu_buf *b);   /* backend -> host mirror */
void tu_buf_poison(tu_buf *b);     /* 0xFF into both */
int tu_buf_guards_intact(const tu_buf *b);
void tu_buf_free(tu_buf *b);

/* ---- tensors --------------------------------------------------------------------------- */

typedef enum { TU_NCHW, TU_NHWC, TU_STRIDED } tu_layout;
const char *tu_layout_name(tu_layout l);

/* A tensor: its descriptor, dims, strides and a guarded buffer. TU_STRIDED
 * is NCHW order with gaps between rows, planes and images. */
typedef struct {
    udnnTensorDescriptor_t desc;
    udnnDataType_t dtype;
    int nb;
    int dims[UDNN_DIM_MAX];
    int strides[UDNN_DIM_MAX];
    int64_t count; /* logical elements */
    tu_buf buf;
} tu_tensor;

void tu_tensor_init(tu_tensor *t, udnnHandle_t h, udnnDataType_t dtype, int nb, const int *dims,
                    tu_layout layout);
void tu_tensor_free(tu_tensor *t);
/* Offset in elements of logical (row-major over dims) element i. */
int64_t tu_offset(const tu_tensor *t, int64_t i);
/* Host-mirror access by logical index; set rounds to the tensor's type. */
double tu_get(const tu_tensor *t, int64_t i);
void tu_set(tu_tensor *t, int64_t i, double v);
/* Fills the host mirror (logical elements) and uploads. */
void tu_fill_uniform(tu_tensor *t, double lo, double hi);
void tu_fill_int(tu_tensor *t, int lo, int hi);
void tu_upload(tu_tensor *t);
void tu_download(tu_tensor *t);
/* Copies all logical values of the mirror into out[count]. */
void tu_values(const tu_tensor *t, double *out);
/* ref[i] = alpha ref[i] + beta old[i] over old's elements. With beta 0,
 * old keeps what it holds (NaN poison: the call must not read it); else
 * old is drawn uniform in [-1, 1] and uploaded, and drawn again while the
 * two terms cancel to under 1/32 of the result in norm: on a tensor of
 * one or two elements the float rounding of the terms would then exceed
 * the tolerance. Call it after ref holds the op's result and before the
 * call under test. */
void tu_blend_drawn(double *ref, double alpha, double beta, tu_tensor *old);

/* A new descriptor of packed NCHW-order dims (asserts success); the caller
 * destroys it. */
udnnTensorDescriptor_t tu_packed_desc(udnnDataType_t dtype, int nb, const int *dims);
/* sum over the logical elements of w[i] * t[i] (the host mirror): the loss
 * L = sum(dy . f(x)) that finite-difference checks differentiate. */
double tu_dot(const tu_tensor *t, const double *w);

/* Filters, packed in format fmt; dims are k, c, spatial... */
typedef struct {
    udnnFilterDescriptor_t desc;
    udnnDataType_t dtype;
    udnnTensorFormat_t format;
    int nb;
    int dims[UDNN_DIM_MAX];
    int64_t strides[UDNN_DIM_MAX]; /* of the logical k, c, ... dims */
    int64_t count;
    tu_buf buf;
} tu_filter;

void tu_filter_init(tu_filter *f, udnnHandle_t h, udnnDataType_t dtype, udnnTensorFormat_t fmt,
                    int nb, const int *dims);
void tu_filter_free(tu_filter *f);
double tu_fget(const tu_filter *f, int64_t i);
void tu_fset(tu_filter *f, int64_t i, double v);

/* ---- numerics -------------------------------------------------------------------------------- */

/* Rounds v to the precision of type t. */
double tu_round(udnnDataType_t t, double v);
/* DESIGN.md section 3's tolerance for the type. */
double tu_tolerance(udnnDataType_t t);
/* Normwise relative error ||out - ref|| / ||ref|| over n values; +inf when
 * any out is NaN or the reference is all zero. */
double tu_rel_error(const double *out, const double *ref, int64_t n);
/* Whether the root mean square of ref (n values) reaches type t's smallest
 * normal number. Below it the type's spacing near zero (2^-24 for HALF)
 * alone can exceed its tolerance: such data does not exercise the op. */
int tu_ref_normal(udnnDataType_t t, const double *ref, int64_t n);
/* Downloads t and compares its logical elements with ref; asserts the
 * guards are intact, every element was written and the error is within
 * the type's tolerance. what names the case in the failure message. */
void tu_check_tensor_at(const char *file, int line, tu_tensor *t, const double *ref,
                        const char *what);
#define tu_check_tensor(t, ref, what) tu_check_tensor_at(__FILE__, __LINE__, (t), (ref), (what))

/* Asserts that every byte of b is still the 0xFF poison and its guards are
 * intact: a call that failed (or must not write b) left it alone. */
void tu_assert_untouched(tu_buf *b, const char *what);

/* The scalars alpha/beta as the op reads them for data of type t. */
typedef union {
    float f;
    double d;
} tu_scalar;
tu_scalar tu_scalar_of(udnnDataType_t t, double v);

/* The data types every op supports, and their names. */
extern const udnnDataType_t tu_float_types[4];
const char *tu_dtype_name(udnnDataType_t t);

/* Runs a suite with Check, returns the exit status for main(). CK_FORK=no
 * runs every test in this process (scripts/gpu-check does, to set up one
 * GPU context per suite instead of one per test). */
int tu_run_suite(Suite *s);
/* The same, each test in a process of its own whatever CK_FORK says: for
 * suites whose tests change the environment or other process state. */
int tu_run_suite_forked(Suite *s);

/* Path of a file in tests/inputs (UDNN_TEST_INPUTS or the source tree). */
const char *tu_input_path(const char *name, char *buf, size_t n);

#endif /* UDNN_TESTUTIL_H */
