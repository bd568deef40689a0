/* bench_matmul.c - the matmul family: C = alpha op(A) op(B) + beta C, 2-D,
 * or 3-D with --bs; --a-dims or --b-dims with a batch of 1 broadcasts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench.h"
#include "tools/bench_data.h"
#include "tools/bench_families.h"

typedef struct {
    int trans_a, trans_b;
    bench_scalar alpha, beta;
    int a, b, c;
} mm_state;

static int setup(bench_problem *p)
{
    mm_state *s = calloc(1, sizeof *s);
    if (s == NULL) return bench_fail(p, "out of memory");
    p->state = s;
    long m, n, k, bs;
    double alpha, beta;
    if (bench_opt_int(p, "m", 1, &m) < 0 || bench_opt_int(p, "n", 1, &n) < 0 ||
        bench_opt_int(p, "k", 1, &k) < 0 || bench_opt_int(p, "bs", 0, &bs) < 0 ||
        bench_opt_real(p, "alpha", 1.0, &alpha) < 0 || bench_opt_real(p, "beta", 0.0, &beta) < 0)
        return -1;
    s->trans_a = bench_arg_flag(p->args, "trans-a");
    s->trans_b = bench_arg_flag(p->args, "trans-b");
    s->alpha = bench_scalar_of(p->dtype, alpha);
    s->beta = bench_scalar_of(p->dtype, beta);
    /* a batch dim only when --bs is given */
    const int rank = bs > 0 ? 3 : 2, o = rank - 2;
    int ad[3] = {(int)bs}, bd[3] = {(int)bs}, cd[3] = {(int)bs};
    ad[o] = (int)(s->trans_a ? k : m);
    ad[o + 1] = (int)(s->trans_a ? m : k);
    bd[o] = (int)(s->trans_b ? n : k);
    bd[o + 1] = (int)(s->trans_b ? k : n);
    cd[o] = (int)m;
    cd[o + 1] = (int)n;
    if ((s->a = bench_add_tensor(p, "a", p->dtype, rank, ad, BENCH_IN)) < 0 ||
        (s->b = bench_add_tensor(p, "b", p->dtype, rank, bd, BENCH_IN)) < 0 ||
        (s->c = bench_add_tensor(p, "c", p->dtype, rank, cd, BENCH_OUT)) < 0)
        return -1;
    p->buf[s->c].blend = beta != 0.0;
    p->peer.op = BENCH_PEER_MATMUL;
    p->peer.src = s->a;
    p->peer.weights = s->b;
    p->peer.dst = s->c;
    p->peer.trans_a = s->trans_a;
    p->peer.trans_b = s->trans_b;
    p->peer.alpha = alpha;
    p->peer.beta = beta;
    p->flops = 2.0 * (double)(bs > 0 ? bs : 1) * (double)m * (double)n * (double)k;
    size_t len = (size_t)snprintf(p->name, sizeof p->name, "m%ldn%ldk%ld", m, n, k);
    if (bs > 0) len += (size_t)snprintf(p->name + len, sizeof p->name - len, "bs%ld", bs);
    if (s->trans_a) len += (size_t)snprintf(p->name + len, sizeof p->name - len, ":ta");
    if (s->trans_b) snprintf(p->name + len, sizeof p->name - len, ":tb");
    return 0;
}

static udnnStatus_t run(bench_problem *p, bench_exec *e, int set)
{
    mm_state *s = p->state;
    void *const *ptr = e->ptr[set];
    return udnnMatMul(e->h, s->trans_a, s->trans_b, &s->alpha, p->buf[s->a].desc, ptr[s->a],
                      p->buf[s->b].desc, ptr[s->b], &s->beta, p->buf[s->c].desc, ptr[s->c]);
}

static void teardown(bench_problem *p)
{
    free(p->state);
    p->state = NULL;
}

const bench_family bench_family_matmul = {.name = "matmul", .setup = setup, .run = run,
                                          .teardown = teardown};
