/* check_fashion_mnist.c - the training example's parts: the data loader;
 * the loss and the SGD update against hand-computed values and the weights
 * file, on every backend; one epoch on 2,000 images on the CPU, which must
 * learn (the loss falls, more than 60% of test images right).
 * Exits 77 (skipped) when the Fashion-MNIST files are not installed;
 * UDNN_FASHION_MNIST_DIR points elsewhere. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "examples/mnist_data.h"
#include "examples/mnist_net.h"
#include "examples/mnist_rng.h"
#include "examples/mnist_weights.h"
#include "tests/testutil.h"

enum { SIDE = MNIST_NET_SIDE, PIXELS = SIDE * SIDE, BATCH = 64 };

static const char *data_dir(void)
{
    const char *dir = getenv("UDNN_FASHION_MNIST_DIR");
    return dir && *dir ? dir : MNIST_DEFAULT_DIR;
}

static void load(const char *split, int count, mnist_set *set)
{
    char err[4096];
    ck_assert_msg(mnist_load(data_dir(), split, set, err, sizeof err) == 0, "%s", err);
    mnist_truncate(set, count);
}

static mnist_net *new_net(udnnHandle_t h, int batch, int batch_norm)
{
    const mnist_net_config cfg = {batch, batch_norm, 0.0f, 1};
    mnist_net *net = NULL;
    tu_ok(mnist_net_create(h, &cfg, &net));
    return net;
}

/* ---- data ------------------------------------------------------------------------- */

START_TEST(test_missing_data_names_the_package)
{
    mnist_set set;
    char err[4096];
    ck_assert_int_eq(mnist_load("/nonexistent/fmnist", "train", &set, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/fmnist/train-images-idx3-ubyte.gz"));
    ck_assert_ptr_nonnull(strstr(err, "dataset-fashion-mnist"));
    ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

START_TEST(test_data_loads_and_normalizes)
{
    tu_seed_fresh();
    mnist_set train, test;
    load("train", 0, &train);
    load("t10k", 0, &test);
    ck_assert_int_eq(train.count, 60000);
    ck_assert_int_eq(test.count, 10000);
    ck_assert_int_eq(train.rows, SIDE);
    ck_assert_int_eq(train.cols, SIDE);
    /* every class is there, about equally often (6,000 each) */
    int per_class[MNIST_CLASSES] = {0};
    for (int i = 0; i < train.count; i++) per_class[train.labels[i]]++;
    for (int c = 0; c < MNIST_CLASSES; c++) ck_assert_int_eq(per_class[c], 6000);

    float mean, std;
    mnist_pixel_stats(&train, &mean, &std);
    ck_assert_float_eq_tol(mean, 0.2860f, 1e-3f);
    ck_assert_float_eq_tol(std, 0.3530f, 1e-3f);

    /* a random image of a batch is its pixels, normalized; its label one-hot */
    const uint32_t order[2] = {(uint32_t)tu_int(0, train.count - 1), 7};
    float images[2 * PIXELS], onehot[2 * MNIST_CLASSES];
    mnist_fill_batch(&train, order, 0, 2, mean, std, images, onehot);
    for (int p = 0; p < PIXELS; p++)
        ck_assert_float_eq_tol(images[p],
                               (train.pixels[order[0] * PIXELS + p] / 255.0f - mean) / std, 1e-5f);
    for (int c = 0; c < MNIST_CLASSES; c++)
        ck_assert_float_eq(onehot[c], c == train.labels[order[0]] ? 1.0f : 0.0f);
    mnist_free(&train);
    mnist_free(&test);
}
END_TEST

/* ---- the loss and the update against hand-computed values ------------------------- */

/* With every weight 0 but the last layer's bias b, every image's logits are
 * b: the loss is the mean of logsumexp(b) - b[label], the only nonzero
 * gradient is that bias's, mean(softmax(b) - onehot), and one SGD step
 * from zero momentum moves b by -lr * (gradient + weight_decay * b). */
static void check_loss_and_update(udnnBackend_t backend)
{
    udnnHandle_t h = tu_handle(backend);
    mnist_net *net = new_net(h, BATCH, 0);
    const size_t count = mnist_net_weight_count(net);
    float *w = calloc(count, sizeof *w);
    double b[MNIST_CLASSES], lse = 0.0;
    for (int c = 0; c < MNIST_CLASSES; c++) {
        b[c] = (float)tu_uniform(-2.0, 2.0);
        w[count - MNIST_CLASSES + c] = (float)b[c];
        lse += exp(b[c]);
    }
    lse = log(lse);
    tu_ok(mnist_net_set_weights(net, w));

    const int n = tu_int(2, BATCH); /* a partial batch too */
    float *images = malloc(sizeof(float) * PIXELS * n),
          *onehot = calloc(n * MNIST_CLASSES, sizeof *onehot);
    double loss_ref = 0.0, grad[MNIST_CLASSES] = {0};
    for (int i = 0; i < n; i++) {
        const int label = tu_int(0, MNIST_CLASSES - 1);
        for (int p = 0; p < PIXELS; p++) images[i * PIXELS + p] = (float)tu_uniform(-1.0, 3.0);
        onehot[i * MNIST_CLASSES + label] = 1.0f;
        loss_ref += (lse - b[label]) / n;
        for (int c = 0; c < MNIST_CLASSES; c++) grad[c] += (exp(b[c] - lse) - (c == label)) / n;
    }
    const mnist_sgd sgd = {0.05f, 0.9f, 1e-3f};
    float loss;
    tu_ok(mnist_net_upload(net, n, images, onehot));
    tu_ok(mnist_net_train_step(net, n, &sgd, &loss));
    ck_assert_double_eq_tol(loss, loss_ref, 1e-5 * loss_ref);

    float *after = malloc(count * sizeof *after);
    tu_ok(mnist_net_get_weights(net, after));
    for (size_t i = 0; i < count - MNIST_CLASSES; i++) ck_assert_float_eq(after[i], 0.0f);
    for (int c = 0; c < MNIST_CLASSES; c++) {
        const double want = b[c] - sgd.learning_rate * (grad[c] + sgd.weight_decay * b[c]);
        ck_assert_double_eq_tol(after[count - MNIST_CLASSES + c], want, 1e-6);
    }

    /* every prediction is the largest bias */
    int best = 0;
    for (int c = 1; c < MNIST_CLASSES; c++)
        if (after[count - MNIST_CLASSES + c] > after[count - MNIST_CLASSES + best]) best = c;
    uint32_t classes[BATCH];
    tu_ok(mnist_net_predict(net, n, classes));
    for (int i = 0; i < n; i++) ck_assert_uint_eq(classes[i], (unsigned)best);

    free(w);
    free(after);
    free(images);
    free(onehot);
    mnist_net_destroy(net);
    udnnDestroy(h);
}

START_TEST(test_loss_and_update_by_hand)
{
    tu_seed_fresh();
    udnnBackend_t backends[3];
    const int count = tu_backends(backends);
    for (int i = 0; i < count; i++) check_loss_and_update(backends[i]);
}
END_TEST

/* ---- the weights file ------------------------------------------------------------- */

/* Saved and loaded again, the weights give the same values and the same
 * predictions; a damaged file is refused with its name. */
static void check_round_trip(udnnBackend_t backend, int batch_norm)
{
    udnnHandle_t h = tu_handle(backend);
    mnist_set test;
    load("t10k", BATCH, &test);
    mnist_net *a = new_net(h, BATCH, batch_norm), *b = new_net(h, BATCH, batch_norm);
    tu_ok(mnist_net_init(a, tu_seed_used()));
    const size_t count = mnist_net_weight_count(a);
    mnist_weights w = {batch_norm, 0.25f, 0.5f, count, malloc(count * sizeof(float))}, back;
    tu_ok(mnist_net_get_weights(a, w.values));

    char path[] = "/tmp/udnn-mnist-XXXXXX", err[4096];
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(mnist_weights_save(path, &w, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(mnist_weights_load(path, &back, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(back.batch_norm, batch_norm);
    ck_assert_float_eq(back.mean, 0.25f);
    ck_assert_float_eq(back.std, 0.5f);
    ck_assert_uint_eq(back.count, count);
    ck_assert_int_eq(memcmp(back.values, w.values, count * sizeof(float)), 0);
    tu_ok(mnist_net_set_weights(b, back.values));

    float images[BATCH * PIXELS], onehot[BATCH * MNIST_CLASSES];
    uint32_t ca[BATCH], cb[BATCH];
    mnist_fill_batch(&test, NULL, 0, BATCH, 0.25f, 0.5f, images, onehot);
    tu_ok(mnist_net_upload(a, BATCH, images, NULL));
    tu_ok(mnist_net_predict(a, BATCH, ca));
    tu_ok(mnist_net_upload(b, BATCH, images, NULL));
    tu_ok(mnist_net_predict(b, BATCH, cb));
    for (int i = 0; i < BATCH; i++) ck_assert_uint_lt(ca[i], MNIST_CLASSES);
    ck_assert_int_eq(memcmp(ca, cb, sizeof ca), 0);

    /* cut short: refused, and the message names the file */
    ck_assert_int_eq(truncate(path, 40), 0);
    mnist_weights_free(&back);
    ck_assert_int_eq(mnist_weights_load(path, &back, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, path));
    ck_assert_ptr_nonnull(strstr(err, "truncated"));
    unlink(path);

    free(w.values);
    mnist_net_destroy(a);
    mnist_net_destroy(b);
    mnist_free(&test);
    udnnDestroy(h);
}

START_TEST(test_weights_round_trip)
{
    tu_seed_fresh();
    udnnBackend_t backends[3];
    const int count = tu_backends(backends);
    for (int i = 0; i < count; i++) check_round_trip(backends[i], _i);
}
END_TEST

/* ---- it learns, on the CPU -------------------------------------------------------- */

/* What `udnn-fashion-mnist --train-images 2000 --epochs 1 --batch 32` does:
 * 63 steps on the default schedule. Over 20 seeds a PyTorch twin of this
 * run reached 76% test accuracy on average, 73% at worst; 17 runs here
 * gave 69% to 78%. */
enum { SUBSET = 2000, TEST_SUBSET = 2000, STEP_BATCH = 32, WINDOW = 8 };

START_TEST(test_one_epoch_on_2000_images)
{
    tu_seed_fresh();
    const uint64_t seed = tu_seed_used();
    udnnHandle_t h = tu_handle(UDNN_BACKEND_CPU);
    mnist_set train, test;
    load("train", SUBSET, &train);
    load("t10k", TEST_SUBSET, &test);
    float mean, std;
    mnist_pixel_stats(&train, &mean, &std);
    mnist_net *net = new_net(h, STEP_BATCH, 0);
    tu_ok(mnist_net_init(net, seed));

    uint32_t order[SUBSET];
    for (int i = 0; i < SUBSET; i++) order[i] = (uint32_t)i;
    mnist_rng rng = mnist_rng_seeded(seed + 1);
    for (int i = SUBSET - 1; i > 0; i--) {
        const uint32_t j = mnist_rng_below(&rng, (uint32_t)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }

    enum { STEPS = (SUBSET + STEP_BATCH - 1) / STEP_BATCH };
    const mnist_schedule sched = mnist_schedule_of(0.02f, 0.9f, 5e-4f, STEPS, 200, 1);
    static float images[STEP_BATCH * PIXELS], onehot[STEP_BATCH * MNIST_CLASSES];
    float losses[STEPS];
    int batches = 0;
    for (int first = 0; first < SUBSET; first += STEP_BATCH) {
        const int n = SUBSET - first < STEP_BATCH ? SUBSET - first : STEP_BATCH;
        const mnist_sgd sgd = mnist_schedule_at(&sched, batches);
        mnist_fill_batch(&train, order, first, n, mean, std, images, onehot);
        tu_ok(mnist_net_upload(net, n, images, onehot));
        tu_ok(mnist_net_train_step(net, n, &sgd, &losses[batches]));
        ck_assert(isfinite(losses[batches]));
        batches++;
    }
    double early = 0.0, late = 0.0;
    for (int i = 0; i < WINDOW; i++) {
        early += losses[i] / WINDOW;
        late += losses[batches - 1 - i] / WINDOW;
    }
    ck_assert_msg(late < 0.7 * early, "the loss went from %.4f to %.4f (seed %llu)", early, late,
                  (unsigned long long)seed);

    int correct = 0;
    uint32_t classes[STEP_BATCH];
    for (int first = 0; first < test.count; first += STEP_BATCH) {
        const int n = test.count - first < STEP_BATCH ? test.count - first : STEP_BATCH;
        mnist_fill_batch(&test, NULL, first, n, mean, std, images, onehot);
        tu_ok(mnist_net_upload(net, n, images, NULL));
        tu_ok(mnist_net_predict(net, n, classes));
        for (int i = 0; i < n; i++) correct += classes[i] == test.labels[first + i];
    }
    const double accuracy = (double)correct / test.count;
    printf("one epoch on %d images: loss %.4f -> %.4f, test accuracy %.2f%% on %d images\n", SUBSET,
           early, late, 100.0 * accuracy, test.count);
    ck_assert_msg(accuracy > 0.60, "test accuracy %.2f%% (seed %llu)", 100.0 * accuracy,
                  (unsigned long long)seed);

    mnist_net_destroy(net);
    mnist_free(&train);
    mnist_free(&test);
    udnnDestroy(h);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fashion_mnist");
    TCase *data = tcase_create("data");
    tcase_add_test(data, test_missing_data_names_the_package);
    tcase_add_test(data, test_data_loads_and_normalizes);
    suite_add_tcase(s, data);

    TCase *net = tcase_create("network");
    tcase_add_test(net, test_loss_and_update_by_hand);
    tcase_add_loop_test(net, test_weights_round_trip, 0, 2); /* without, with batch norm */
    tcase_set_timeout(net, 60);
    suite_add_tcase(s, net);

    TCase *learn = tcase_create("learning");
    tcase_add_test(learn, test_one_epoch_on_2000_images);
    tcase_set_timeout(learn, 300);
    suite_add_tcase(s, learn);
    return s;
}

int main(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte.gz", data_dir());
    if (access(path, R_OK) != 0) {
        printf("skipped: no %s (Debian: apt-get install dataset-fashion-mnist)\n", path);
        return 77;
    }
    return tu_run_suite(suite());
}
