/* fashion_mnist.c - udnn-fashion-mnist: trains a small convolutional network
 * on Fashion-MNIST with udnn, on whichever backend udnnCreate picks (or
 * --backend names), and reports the test accuracy after every epoch.
 *
 * The network, its memory and its passes are in mnist_net.c and
 * mnist_train.c; the data in mnist_data.c; this file is the command line,
 * the epochs and the progress display. Run with --help for the options. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <udnn.h>

#include "examples/mnist_data.h"
#include "examples/mnist_net.h"
#include "examples/mnist_rng.h"
#include "examples/mnist_weights.h"

static const char prog[] = "udnn-fashion-mnist";

enum { EXIT_USAGE = 2, EXIT_NO_BACKEND = 3 };

typedef struct {
    const char *data_dir, *save, *load, *backend;
    int epochs, batch, eval_only, batch_norm, log_every, train_images, test_images;
    int warmup, no_decay;
    float learning_rate, momentum, weight_decay, dropout;
    unsigned long long seed;
} options;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: %s [options]\n"
            "Trains a LeNet-style network on Fashion-MNIST with udnn and prints the test\n"
            "accuracy after every epoch.\n"
            "  --data DIR          the *-ubyte.gz files (default %s)\n"
            "  --backend NAME      cpu, cuda or hip (default: as udnnCreate picks)\n"
            "  --epochs N          passes over the training set (default 3)\n"
            "  --batch N           images per SGD step (default 64)\n"
            "  --lr X              peak learning rate (default 0.02)\n"
            "  --warmup N          raise the learning rate linearly over the first N steps\n"
            "                      (default 200; at most a tenth of the run)\n"
            "  --no-decay          keep it then, instead of a linear decay to 0 at the end\n"
            "  --momentum X        SGD momentum (default 0.9)\n"
            "  --weight-decay X    L2 weight decay (default 5e-4)\n"
            "  --seed N            weights from SplitMix64(N), shuffles from SplitMix64(N + 1),\n"
            "                      dropout masks from Philox(N) (default 1)\n"
            "  --bn                batch normalization after each convolution\n"
            "  --dropout P         drop hidden units with probability P (default 0)\n"
            "  --save FILE         write the trained weights to FILE\n"
            "  --load FILE         start from the weights in FILE\n"
            "  --eval-only         only test the weights of --load\n"
            "  --log-every N       print the mean loss of every N batches\n"
            "  --train-images N    train on the first N images only\n"
            "  --test-images N     test on the first N images only\n"
            "Exit status: 0 done, 1 failure, 2 bad usage, 3 the backend is not available.\n",
            prog, MNIST_DEFAULT_DIR);
}

static void usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see --help)\n");
    exit(EXIT_USAGE);
}

static long parse_int(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi)
        usage_error("%s needs a whole number in range", opt);
    return v;
}

static float parse_float(const char *opt, const char *s, double lo, double hi)
{
    char *end;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !(v >= lo && v <= hi))
        usage_error("%s needs a number in range", opt);
    return (float)v;
}

static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){.data_dir = MNIST_DEFAULT_DIR,
                   .epochs = 3,
                   .batch = 64,
                   .learning_rate = 0.02f,
                   .momentum = 0.9f,
                   .weight_decay = 5e-4f,
                   .seed = 1,
                   .warmup = 200};
    static const struct option longs[] = {
        {"data", 1, 0, 'd'},         {"backend", 1, 0, 'B'},
        {"epochs", 1, 0, 'e'},       {"batch", 1, 0, 'b'},
        {"lr", 1, 0, 'l'},           {"momentum", 1, 0, 'm'},
        {"weight-decay", 1, 0, 'w'}, {"seed", 1, 0, 's'},
        {"bn", 0, 0, 'n'},           {"dropout", 1, 0, 'p'},
        {"save", 1, 0, 'S'},         {"load", 1, 0, 'L'},
        {"eval-only", 0, 0, 'E'},    {"log-every", 1, 0, 'g'},
        {"train-images", 1, 0, 'T'}, {"test-images", 1, 0, 't'},
        {"warmup", 1, 0, 'u'},       {"no-decay", 0, 0, 'D'},
        {"help", 0, 0, 'h'},         {0, 0, 0, 0},
    };
    int c, which = 0;
    while ((c = getopt_long(argc, argv, "h", longs, &which)) != -1) {
        char name[32];
        snprintf(name, sizeof name, "--%s", longs[which].name);
        switch (c) {
        case 'd': o->data_dir = optarg; break;
        case 'B': o->backend = optarg; break;
        case 'e': o->epochs = (int)parse_int(name, optarg, 0, 100000); break;
        case 'b': o->batch = (int)parse_int(name, optarg, 1, 65536); break;
        case 'l': o->learning_rate = parse_float(name, optarg, 0.0, 100.0); break;
        case 'm': o->momentum = parse_float(name, optarg, 0.0, 1.0); break;
        case 'w': o->weight_decay = parse_float(name, optarg, 0.0, 1.0); break;
        case 's': o->seed = (unsigned long long)parse_int(name, optarg, 0, 0x7fffffffL); break;
        case 'n': o->batch_norm = 1; break;
        case 'p': o->dropout = parse_float(name, optarg, 0.0, 0.99); break;
        case 'S': o->save = optarg; break;
        case 'L': o->load = optarg; break;
        case 'E': o->eval_only = 1; break;
        case 'g': o->log_every = (int)parse_int(name, optarg, 1, 1000000); break;
        case 'T': o->train_images = (int)parse_int(name, optarg, 1, 1 << 30); break;
        case 't': o->test_images = (int)parse_int(name, optarg, 1, 1 << 30); break;
        case 'u': o->warmup = (int)parse_int(name, optarg, 0, 1 << 30); break;
        case 'D': o->no_decay = 1; break;
        case 'h': usage(stdout); exit(EXIT_SUCCESS);
        default: usage(stderr); exit(EXIT_USAGE);
        }
    }
    if (optind < argc) usage_error("unexpected argument '%s'", argv[optind]);
    if (o->eval_only && o->load == NULL) usage_error("%s needs --load FILE", "--eval-only");
}

/* ---- failures --------------------------------------------------------------------- */

/* Prints udnn's own message for a failed call and exits. */
static void check(udnnStatus_t st)
{
    if (st == UDNN_STATUS_SUCCESS) return;
    char msg[1024];
    udnnGetLastErrorString(msg, sizeof msg);
    fprintf(stderr, "%s: %s: %s\n", prog, udnnGetErrorString(st), msg);
    exit(st == UDNN_STATUS_RUNTIME_PREREQUISITE_MISSING ? EXIT_NO_BACKEND : EXIT_FAILURE);
}

static void fail(const char *msg)
{
    fprintf(stderr, "%s: %s\n", prog, msg);
    exit(EXIT_FAILURE);
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) fail("out of memory");
    return p;
}

/* ---- progress --------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct {
    int tty, epoch, epochs, total;
    double start, last_draw;
    int last_quarter;
} progress;

/* On a terminal a bar redrawn in place (at most ten times a second);
 * otherwise a plain line at every quarter of the epoch. */
static void progress_show(progress *p, int done, double mean_loss)
{
    const double t = now_s(), rate = done / (t - p->start + 1e-9);
    if (p->tty) {
        if (done < p->total && t - p->last_draw < 0.1) return;
        enum { WIDTH = 30 };
        char bar[WIDTH + 1];
        const int filled = (int)((long long)done * WIDTH / p->total);
        for (int i = 0; i < WIDTH; i++) bar[i] = i < filled ? '#' : '.';
        bar[WIDTH] = '\0';
        printf("\r\033[Kepoch %d/%d [%s] %d/%d  %.0f images/s  loss %.4f", p->epoch, p->epochs, bar,
               done, p->total, rate, mean_loss);
        if (done == p->total) printf("\r\033[K");
        fflush(stdout);
        p->last_draw = t;
        return;
    }
    const int quarter = (int)((long long)done * 4 / p->total);
    if (quarter > p->last_quarter && done < p->total) {
        printf("epoch %d/%d: %d/%d images, %.0f images/s, loss %.4f\n", p->epoch, p->epochs, done,
               p->total, rate, mean_loss);
        fflush(stdout);
    }
    p->last_quarter = quarter;
}

/* A line that must not be drawn over by the bar. */
static void progress_line(const progress *p, const char *line)
{
    printf("%s%s\n", p->tty ? "\r\033[K" : "", line);
    fflush(stdout);
}

/* ---- epochs ----------------------------------------------------------------------- */

typedef struct {
    float mean, std;
    float *images, *onehot;
    uint32_t *classes;
} batch_buffers;

static void shuffle(uint32_t *order, int n, mnist_rng *rng)
{
    for (int i = n - 1; i > 0; i--) {
        const uint32_t j = mnist_rng_below(rng, (uint32_t)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* One pass over the training set in the order given; returns the mean loss. */
static double train_epoch(mnist_net *net, const mnist_set *train, const uint32_t *order,
                          const options *o, const mnist_schedule *sched, long *step,
                          batch_buffers *bb, progress *p)
{
    double loss_sum = 0.0, window_sum = 0.0;
    int batches = 0, window_images = 0;
    for (int first = 0; first < train->count; first += o->batch) {
        const int n = train->count - first < o->batch ? train->count - first : o->batch;
        float loss;
        mnist_fill_batch(train, order, first, n, bb->mean, bb->std, bb->images, bb->onehot);
        check(mnist_net_upload(net, n, bb->images, bb->onehot));
        const mnist_sgd sgd = mnist_schedule_at(sched, (*step)++);
        check(mnist_net_train_step(net, n, &sgd, &loss));
        loss_sum += (double)loss * n;
        window_sum += (double)loss * n;
        window_images += n;
        batches++;
        if (o->log_every && batches % o->log_every == 0) {
            char line[128];
            snprintf(line, sizeof line, "epoch %d batch %d: loss %.7g", p->epoch, batches,
                     window_sum / window_images);
            progress_line(p, line);
            window_sum = 0.0;
            window_images = 0;
        }
        progress_show(p, first + n, loss_sum / (first + n));
    }
    return loss_sum / train->count;
}

/* Classifies the whole set; returns how many images got their label. */
static int count_correct(mnist_net *net, const mnist_set *set, int batch, batch_buffers *bb)
{
    int correct = 0;
    for (int first = 0; first < set->count; first += batch) {
        const int n = set->count - first < batch ? set->count - first : batch;
        mnist_fill_batch(set, NULL, first, n, bb->mean, bb->std, bb->images, bb->onehot);
        check(mnist_net_upload(net, n, bb->images, NULL));
        check(mnist_net_predict(net, n, bb->classes));
        for (int i = 0; i < n; i++) correct += bb->classes[i] == set->labels[first + i];
    }
    return correct;
}

/* ---- setup ------------------------------------------------------------------------ */

static void load_set(const options *o, const char *split, int limit, mnist_set *set)
{
    char err[4096];
    if (mnist_load(o->data_dir, split, set, err, sizeof err) != 0) fail(err);
    mnist_truncate(set, limit);
}

static udnnHandle_t open_handle(const char *name)
{
    static const struct {
        const char *name;
        udnnBackend_t kind;
    } kinds[] = {{"cpu", UDNN_BACKEND_CPU}, {"cuda", UDNN_BACKEND_CUDA}, {"hip", UDNN_BACKEND_HIP}};
    udnnHandle_t h;
    if (name == NULL) {
        check(udnnCreate(&h));
        return h;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (strcmp(name, kinds[i].name) == 0) {
            check(udnnCreateWithBackend(&h, kinds[i].kind, 0));
            return h;
        }
    usage_error("--backend is '%s'; it must be cpu, cuda or hip", name);
    return NULL;
}

static const char *backend_name(udnnHandle_t h)
{
    udnnBackend_t b;
    check(udnnGetBackend(h, &b));
    return b == UDNN_BACKEND_CUDA ? "cuda" : b == UDNN_BACKEND_HIP ? "hip" : "cpu";
}

/* The weights of --load, checked against the network they are for. */
static void load_weights(const options *o, mnist_weights *w)
{
    char err[4096];
    if (mnist_weights_load(o->load, w, err, sizeof err) != 0) fail(err);
    if (o->batch_norm && !w->batch_norm) {
        snprintf(err, sizeof err, "%s has no batch normalization; drop --bn to use it", o->load);
        fail(err);
    }
}

static void save_weights(const options *o, mnist_net *net, const mnist_weights *shape)
{
    char err[4096];
    mnist_weights w = *shape;
    w.count = mnist_net_weight_count(net);
    w.values = xmalloc(w.count * sizeof(float));
    check(mnist_net_get_weights(net, w.values));
    if (mnist_weights_save(o->save, &w, err, sizeof err) != 0) fail(err);
    free(w.values);
    printf("weights saved to %s\n", o->save);
}

/* The network of the options, its weights from --load or fresh from the
 * seed, and the input normalization that goes with them. */
static mnist_net *make_network(udnnHandle_t h, options *o, const mnist_set *train,
                               batch_buffers *bb)
{
    mnist_weights loaded = {0};
    if (o->load) {
        load_weights(o, &loaded);
        o->batch_norm = loaded.batch_norm;
        bb->mean = loaded.mean;
        bb->std = loaded.std;
    } else {
        mnist_pixel_stats(train, &bb->mean, &bb->std);
    }
    mnist_net *net;
    const mnist_net_config cfg = {o->batch, o->batch_norm, o->dropout, o->seed};
    check(mnist_net_create(h, &cfg, &net));
    if (o->load) {
        if (loaded.count != mnist_net_weight_count(net)) {
            char err[4096];
            snprintf(err, sizeof err, "%s holds %zu weights; this network has %zu", o->load,
                     loaded.count, mnist_net_weight_count(net));
            fail(err);
        }
        check(mnist_net_set_weights(net, loaded.values));
    } else {
        check(mnist_net_init(net, o->seed));
    }
    mnist_weights_free(&loaded);
    printf("network: conv 5x5x16%s, max pool, conv 5x5x32%s, max pool, fc 128 + ReLU%s, fc 10, "
           "softmax; %zu weights\n",
           o->batch_norm ? " + BN + ReLU" : " + ReLU", o->batch_norm ? " + BN + ReLU" : " + ReLU",
           o->dropout > 0.0f ? " + dropout" : "", mnist_net_weight_count(net));
    return net;
}

/* The epochs, each followed by the test. */
static void train_and_test(mnist_net *net, const mnist_set *train, const mnist_set *test,
                           const options *o, batch_buffers *bb)
{
    printf("data: %d training and %d test images from %s\n", train->count, test->count,
           o->data_dir);
    const long steps_per_epoch = (train->count + o->batch - 1) / o->batch;
    const mnist_schedule sched =
        mnist_schedule_of(o->learning_rate, o->momentum, o->weight_decay,
                          steps_per_epoch * o->epochs, o->warmup, !o->no_decay);
    printf("training: %d epoch%s of batch %d, SGD with momentum %g and weight decay %g, "
           "lr %g (warm-up %ld steps%s), seed %llu\n",
           o->epochs, o->epochs == 1 ? "" : "s", o->batch, (double)o->momentum,
           (double)o->weight_decay, (double)o->learning_rate, sched.warmup,
           sched.decay ? ", linear decay to 0" : "", o->seed);
    long step = 0;
    uint32_t *order = xmalloc((size_t)train->count * sizeof *order);
    for (int i = 0; i < train->count; i++) order[i] = (uint32_t)i;
    mnist_rng shuffler = mnist_rng_seeded(o->seed + 1);
    progress p = {.tty = isatty(STDOUT_FILENO), .epochs = o->epochs, .total = train->count};
    const double started = now_s();
    for (int e = 1; e <= o->epochs; e++) {
        shuffle(order, train->count, &shuffler);
        p.epoch = e;
        p.start = p.last_draw = now_s();
        p.last_quarter = 0;
        const double loss = train_epoch(net, train, order, o, &sched, &step, bb, &p);
        const double seconds = now_s() - p.start;
        const int correct = count_correct(net, test, o->batch, bb);
        printf("epoch %d/%d: train loss %.4f, %.1f s (%.0f images/s); test accuracy: %.2f%%\n", e,
               o->epochs, loss, seconds, train->count / seconds, 100.0 * correct / test->count);
    }
    printf("%d epoch%s in %.1f s, testing included\n", o->epochs, o->epochs == 1 ? "" : "s",
           now_s() - started);
    free(order);
}

int main(int argc, char **argv)
{
    options o;
    parse_options(argc, argv, &o);
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* the backend first: when it is missing, say so before reading data */
    udnnHandle_t h = open_handle(o.backend);
    mnist_set train = {0}, test;
    if (!o.eval_only) load_set(&o, "train", o.train_images, &train);
    load_set(&o, "t10k", o.test_images, &test);
    const size_t v = udnnGetVersion();
    /* logs of runs that should agree bit for bit say so */
    const char *det = getenv("UDNN_DETERMINISTIC");
    const int reference = det != NULL && strcmp(det, "reference") == 0;
    printf("udnn %zu.%zu.%zu on the %s backend%s\n", v / 10000, v / 100 % 100, v % 100,
           backend_name(h),
           reference ? " (UDNN_DETERMINISTIC=reference: the CPU reference's bits)" : "");

    batch_buffers bb = {0};
    mnist_net *net = make_network(h, &o, &train, &bb);
    bb.images = xmalloc((size_t)o.batch * MNIST_NET_SIDE * MNIST_NET_SIDE * sizeof(float));
    bb.onehot = xmalloc((size_t)o.batch * MNIST_CLASSES * sizeof(float));
    bb.classes = xmalloc((size_t)o.batch * sizeof(uint32_t));
    if (o.eval_only) {
        const int correct = count_correct(net, &test, o.batch, &bb);
        printf("test accuracy: %.2f%% (%d of %d images)\n", 100.0 * correct / test.count, correct,
               test.count);
    } else {
        train_and_test(net, &train, &test, &o, &bb);
    }
    if (o.save) {
        const mnist_weights shape = {.batch_norm = o.batch_norm, .mean = bb.mean, .std = bb.std};
        save_weights(&o, net, &shape);
    }

    free(bb.images);
    free(bb.onehot);
    free(bb.classes);
    mnist_net_destroy(net);
    udnnDestroy(h);
    mnist_free(&train);
    mnist_free(&test);
    return EXIT_SUCCESS;
}
