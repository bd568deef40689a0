/*
 * bench.h - the types udnn-bench's files share: a problem (its buffers and
 * descriptors, built by an op family from the options), one handle's
 * buffers for it, and the family interface. udnn-bench is a client of the
 * public API only (udnn.h).
 */
#ifndef UDNN_BENCH_H
#define UDNN_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "tools/bench_args.h"
#include "udnn.h"

#define BENCH_MAX_BUFS 12
#define BENCH_ERR 512
#define BENCH_NAME 256

/* How an op uses a buffer. */
typedef enum { BENCH_IN, BENCH_OUT, BENCH_INOUT } bench_io;

/* What a buffer holds: a tensor, a filter, or bytes (masks, indices). */
typedef enum { BENCH_TENSOR, BENCH_FILTER, BENCH_RAW } bench_kind;

/* One operand of a problem, with its initial content on the host. */
typedef struct {
    char role[16]; /* the name its option flags use: x, w, dy, ... */
    bench_kind kind;
    bench_io io;
    int blend;     /* an output the op reads (beta != 0): starts random, not poisoned */
    int exact;     /* compared byte for byte (masks, indices) */
    udnnTensorDescriptor_t desc;
    udnnFilterDescriptor_t fdesc;
    udnnDataType_t dtype;
    int rank;
    int dims[UDNN_DIM_MAX];
    int64_t strides[UDNN_DIM_MAX]; /* elements; a filter's follow its format */
    int strided;                   /* laid out by --ROLE-strides */
    size_t bytes;
    double lo, hi; /* inputs are drawn uniformly from [lo, hi] */
    unsigned char *host;
} bench_buf;

/* alpha/beta as the op reads them: float, or double for DOUBLE data. */
typedef union {
    float f;
    double d;
} bench_scalar;

struct bench_family;

/* The ops a peer library may run for comparison (bench_peer.h). */
typedef enum {
    BENCH_PEER_NONE,
    BENCH_PEER_CONV_FWD,
    BENCH_PEER_CONV_BWD_DATA,
    BENCH_PEER_CONV_BWD_FILTER,
    BENCH_PEER_MATMUL,
    BENCH_PEER_ACT_FWD,
    BENCH_PEER_POOL_FWD,
    BENCH_PEER_SOFTMAX_FWD,
    BENCH_PEER_LRN_FWD,
    BENCH_PEER_BN_FWD_TRAIN,
    BENCH_PEER_BN_FWD_INFER,
    BENCH_PEER_CONV_BWD_BIAS,
    BENCH_PEER_CBA,
    BENCH_PEER_ACT_BWD,
    BENCH_PEER_POOL_BWD,
    BENCH_PEER_SOFTMAX_BWD,
    BENCH_PEER_LRN_BWD,
    BENCH_PEER_BN_BWD,
} bench_peer_op;

/* What a peer needs beyond the buffers, filled by the family's setup. */
typedef struct {
    bench_peer_op op;
    /* buffer indices, -1 when unused: conv's src/weights/dst are x/w/y in
     * every direction (dx, dw, dy for the backward ones; bwd-bias has dst
     * dy and bias db); cba adds z (dst itself with --z-is-y) and bias;
     * matmul's are a/b/c; the backward passes of act, pool, softmax, lrn
     * and bn read src (x; softmax has none), dst (y) and diff_dst (dy) and
     * write diff_src (dx); bn's scale, bias, mean and variance are side
     * buffers: mean/var are inference's estimates, run_mean/run_var
     * training's running averages, save_mean/save_inv the saved statistics
     * (written by training, read by the backward), dscale/dbias its
     * gradients */
    int src, weights, dst, scale, bias, mean, var;
    int z, diff_src, diff_dst, run_mean, run_var, save_mean, save_inv, dscale, dbias;
    int nd; /* spatial dims of conv and pool */
    int pad[3], stride[3], dilation[3], window[3];
    int groups;
    int mode;           /* the udnn enum: act, pool, softmax algorithm, bn mode */
    int softmax_mode;   /* udnnSoftmaxMode_t */
    int nan_prop;       /* act, cba and pool: udnnNanPropagation_t */
    double param[3];    /* act coef and swish beta; lrn alpha, beta, k; bn epsilon and, for
                           training, the exponential average factor */
    long size;          /* lrn */
    int trans_a, trans_b;
    /* conv and cba: the mode (udnnConvolutionMode_t), compute type, math
     * type, the activation of cba (mode in act_mode, coef and swish beta
     * in param[0..1]), --algo (-1 when not given) and --find */
    int conv_mode, compute, math, act_mode, algo, find;
    /* the blend as the family runs it: alpha, beta, and cba's alpha2 (z)
     * or bn backward's alpha and beta of the parameter gradients */
    double alpha, beta, alpha2, beta2;
} bench_peer_info;

/* A problem: what one command line (or batch line) describes. */
typedef struct {
    const struct bench_family *family;
    bench_args *args;
    udnnDataType_t dtype;
    udnnTensorFormat_t layout;
    char dir[16];            /* --dir, when the family has directions */
    int nbufs;
    bench_buf buf[BENCH_MAX_BUFS];
    double flops;            /* > 0: the rate is FLOP/s */
    double bytes_moved;      /* else bytes read and written, counted minimally */
    double tolerance;        /* the check's, from DESIGN.md */
    char name[BENCH_NAME];   /* the problem column */
    void *state;             /* the family's descriptors */
    bench_peer_info peer;    /* BENCH_PEER_NONE unless the family fills it */
    char err[BENCH_ERR];
} bench_problem;

/* The runtime of a handle's GPU, where udnn-bench links it
 * (bench_device.h). */
typedef struct bench_device bench_device;

/* One handle's copy of a problem: `sets` buffer sets in its memory, and
 * what the family prepared on it (algo, workspace, handle-bound state). */
#define BENCH_MAX_SETS 16
typedef struct {
    udnnHandle_t h;
    bench_device *dev; /* NULL: the host's clock, udnnMemcpy's copy */
    int sets;
    void *ptr[BENCH_MAX_SETS][BENCH_MAX_BUFS];
    void *ws;
    size_t ws_bytes;
    int algo; /* the algo the family chose, -1 for none */
    int oracle; /* the check's CPU reference run: the family picks its own algo */
    void *state;
} bench_exec;

/* An op family: conv, act, pool, ... */
typedef struct bench_family {
    const char *name;
    /* What the solver column says when the family runs no solver (copy
     * runs udnnMemcpy); NULL: the solver is found by a probe. */
    const char *solver;
    /* Reads the options, creates descriptors and adds buffers; 0 or -1
     * with p->err set. */
    int (*setup)(bench_problem *p);
    /* Per handle, with e->ptr[0] allocated: algo, workspace, handle-bound
     * descriptors. Optional. */
    udnnStatus_t (*prepare)(bench_problem *p, bench_exec *e);
    /* Runs the op once on buffer set `set`. */
    udnnStatus_t (*run)(bench_problem *p, bench_exec *e, int set);
    /* After the inputs are drawn: makes inputs that must agree with each
     * other (a backward op's y = forward(x)) by running the forward on
     * `cpu`, a CPU handle, in host memory. Optional. */
    int (*derive)(bench_problem *p, udnnHandle_t cpu);
    /* Undoes prepare. Optional. */
    void (*release)(bench_problem *p, bench_exec *e);
    /* Undoes setup's descriptors. Optional. */
    void (*teardown)(bench_problem *p);
} bench_family;

/* The families (bench_families.c), by name; NULL when unknown. */
const bench_family *bench_family_find(const char *name);
/* "conv, cba, act, ..." for usage messages. */
const char *bench_family_list(void);

/* ---- problem helpers (bench_problem.c) ------------------------------------------ */

/* Fills p from args for the family; 0, or -1 with p->err set. */
int bench_problem_init(bench_problem *p, const bench_family *f, bench_args *args);
void bench_problem_free(bench_problem *p);
/* Sets p->err (printf-style) and returns -1. */
int bench_fail(bench_problem *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* bench_fail with udnnGetLastErrorString appended, when a udnn call failed. */
int bench_fail_udnn(bench_problem *p, udnnStatus_t st, const char *what);

/* Adds a tensor of role with dims (overridable by --ROLE-dims), in the
 * problem's data type (--ROLE-dtype) and layout (--ROLE-layout,
 * --ROLE-strides). A role "name:opts" names the buffer `name` and reads
 * the options of `opts` (several buffers sharing one descriptor's flags).
 * Returns its index, or -1 with p->err set. */
int bench_add_tensor(bench_problem *p, const char *role, udnnDataType_t dtype, int rank,
                     const int dims[], bench_io io);
/* Adds a filter: dims k, c, spatial..., packed in --ROLE-layout or --layout. */
int bench_add_filter(bench_problem *p, const char *role, int rank, const int dims[], bench_io io);
/* Adds bytes (masks, indices): exact, drawn from [lo, hi] when read. */
int bench_add_raw(bench_problem *p, const char *role, size_t bytes, bench_io io, int lo, int hi);
/* The index of role, -1 when the problem has none. */
int bench_buf_index(const bench_problem *p, const char *role);

/* The shape of the main tensor: --dims, else n, c, (d,) h, w. */
int bench_main_dims(bench_problem *p, int dims[UDNN_DIM_MAX]);
/* "2x16x8x8" */
void bench_dims_str(char *out, size_t n, int rank, const int dims[]);
/* Bytes of the logical elements of a buffer (what a minimal count moves). */
double bench_logical_bytes(const bench_buf *b);
/* An alpha/beta for the problem's data type (float, or double for DOUBLE). */
bench_scalar bench_scalar_of(udnnDataType_t t, double v);
/* Reads --key as a real (dflt when absent) into *out; -1 with p->err when
 * it is not a number. */
int bench_opt_real(bench_problem *p, const char *key, double dflt, double *out);
int bench_opt_int(bench_problem *p, const char *key, long dflt, long *out);
/* --key among names[count] (dflt when absent); its index, or -1 with p->err. */
int bench_opt_choice(bench_problem *p, const char *key, const char *const *names, int count,
                     int dflt);
/* Reads --key as 1..max comma-separated ints; count, 0 when absent, -1 bad. */
int bench_opt_ints(bench_problem *p, const char *key, int *out, int max);

#endif /* UDNN_BENCH_H */
