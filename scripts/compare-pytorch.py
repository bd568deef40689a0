#!/usr/bin/python3
"""compare-pytorch.py - udnn-fashion-mnist against the same training in PyTorch.

Trains the network of udnn-fashion-mnist (conv 5x5x16 + ReLU, max pool,
conv 5x5x32 + ReLU, max pool, fc 128 + ReLU, fc 10, softmax cross-entropy;
SGD with momentum and weight decay) with udnn and with PyTorch, both on the
CPU or both on an NVIDIA GPU (--device cuda: udnn's CUDA backend, PyTorch's
CUDA device with cuDNN), and prints seconds per epoch and test accuracy
side by side.

The PyTorch run is the udnn run as closely as two libraries allow: the same
normalization, the same initial weights (He-uniform drawn from SplitMix64 in
the same order) and the same shuffles (Fisher-Yates driven by SplitMix64),
so the two loss curves start identical and part only by rounding. Both time
the training loop alone (batching included, testing not), on every core.
On the GPU, PyTorch keeps the data and the loss sum on the device and
synchronizes once an epoch, its fastest way; udnn brings each batch's loss
back, as the example does.

PyTorch is not a dependency of udnn: Debian's python3-torch serves
(/usr/bin/python3 only). Usage:
    scripts/compare-pytorch.py [--device cpu|cuda] [--udnn PATH] [--epochs N] [--bn] [--dropout P] ...
"""
import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

MASK = (1 << 64) - 1
DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


class SplitMix64:
    """The generator of examples/mnist_rng.h, bit for bit."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def below(self, n):
        return self.next() % n


def read_idx(path, magic):
    with gzip.open(path, "rb") as f:
        data = f.read()
    if int.from_bytes(data[0:4], "big") != magic:
        sys.exit(f"{path}: not an IDX file of magic {magic:#x}")
    rank = magic & 0xFF
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load_split(data_dir, split):
    images = read_idx(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz"), 0x803)
    labels = read_idx(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz"), 0x801)
    return images, labels.astype(np.int64)


def find_udnn(given):
    if given:
        return given
    here = os.path.join(os.getcwd(), "examples", "udnn-fashion-mnist")
    return here if os.access(here, os.X_OK) else shutil.which("udnn-fashion-mnist")


def run_udnn(prog, args):
    """Runs udnn-fashion-mnist; returns [(seconds, loss, accuracy)] per epoch."""
    cmd = [prog, "--data", args.data, "--epochs", str(args.epochs), "--batch", str(args.batch),
           "--lr", str(args.lr), "--momentum", str(args.momentum),
           "--weight-decay", str(args.weight_decay), "--seed", str(args.seed), "--backend", args.device]
    if args.bn:
        cmd.append("--bn")
    if args.dropout:
        cmd += ["--dropout", str(args.dropout)]
    if args.warmup is not None:
        cmd += ["--warmup", str(args.warmup)]
    if args.no_decay:
        cmd.append("--no-decay")
    if args.train_images:
        cmd += ["--train-images", str(args.train_images)]
    if args.test_images:
        cmd += ["--test-images", str(args.test_images)]
    print("$ " + " ".join(cmd), flush=True)
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if out.returncode != 0:
        sys.exit(f"udnn-fashion-mnist failed ({out.returncode}):\n{out.stdout}")
    # seconds from the rate: the example prints them to 0.1 s, too coarse on a GPU
    pattern = re.compile(r"^epoch (\d+)/\d+: train loss ([\d.]+), [\d.]+ s \(([\d.]+) images/s\).*"
                         r"test accuracy: ([\d.]+)%", re.M)
    images = args.train_images or 60000
    epochs = [(images / float(r), float(l), float(a)) for _, l, r, a in pattern.findall(out.stdout)]
    for e, (s, l, a) in enumerate(epochs, 1):
        print(f"  udnn    epoch {e}: {s:7.2f} s, train loss {l:.4f}, test accuracy {a:.2f}%")
    return epochs


def build_torch_model(torch, args):
    nn = torch.nn
    bn = args.bn
    layers = [nn.Conv2d(1, 16, 5, padding=2, bias=not bn)]
    layers += [nn.BatchNorm2d(16)] if bn else []
    layers += [nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 5, padding=2, bias=not bn)]
    layers += [nn.BatchNorm2d(32)] if bn else []
    layers += [nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU()]
    layers += [nn.Dropout(args.dropout)] if args.dropout else []
    layers += [nn.Linear(128, 10)]
    model = nn.Sequential(*layers)

    # udnn's initialization: weights in layer order from one SplitMix64
    # stream, He-uniform where a ReLU follows, LeCun-uniform for the output
    # layer; zero biases (batch norm: scale 1, shift 0)
    rng = SplitMix64(args.seed)
    with torch.no_grad():
        for m in model:
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                fan_in = m.weight[0].numel()
                bound = ((3.0 if m is model[-1] else 6.0) / fan_in) ** 0.5
                u = np.array([rng.uniform() for _ in range(m.weight.numel())])
                w = ((2.0 * u - 1.0) * bound).astype(np.float32)
                m.weight.copy_(torch.from_numpy(w.reshape(m.weight.shape)))
                if m.bias is not None:
                    m.bias.zero_()
    return model


def run_torch(args, train, test, mean, std):
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    gpu = device.type == "cuda"
    if gpu:
        torch.backends.cudnn.benchmark = True
    model = build_torch_model(torch, args).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                          weight_decay=args.weight_decay)
    loss_fn = torch.nn.CrossEntropyLoss()

    def normalized(images):
        x = (images.astype(np.float32) / np.float32(255.0) - mean) / std
        return torch.from_numpy(x.reshape(-1, 1, 28, 28)).to(device)

    x_train, y_train = normalized(train[0]), torch.from_numpy(train[1]).to(device)
    x_test, y_test = normalized(test[0]), torch.from_numpy(test[1]).to(device)
    count = len(y_train)
    # udnn-fashion-mnist's schedule: linear warm-up, then linear decay to 0
    total = args.epochs * ((count + args.batch - 1) // args.batch)
    warmup = min(200 if args.warmup is None else args.warmup, total // 10)

    def lr_at(t):
        lr = args.lr
        if t < warmup:
            lr *= (t + 1) / warmup
        if not args.no_decay:
            lr *= 1.0 - t / total
        return lr

    step = 0
    order = list(range(count))
    shuffler = SplitMix64(args.seed + 1)
    epochs = []
    for e in range(1, args.epochs + 1):
        for i in range(count - 1, 0, -1):  # examples/fashion_mnist.c's shuffle
            j = shuffler.below(i + 1)
            order[i], order[j] = order[j], order[i]
        index = torch.tensor(order, device=device)
        model.train()
        if gpu:
            torch.cuda.synchronize()
        start = time.perf_counter()
        loss_sum = torch.zeros((), device=device, dtype=torch.float64)
        for first in range(0, count, args.batch):
            batch = index[first:first + args.batch]
            for group in opt.param_groups:
                group["lr"] = lr_at(step)
            step += 1
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x_train[batch]), y_train[batch])
            loss.backward()
            opt.step()
            loss_sum += loss.detach() * len(batch)
        loss_sum = loss_sum.item()  # waits for the epoch's last kernel
        seconds = time.perf_counter() - start
        model.eval()
        with torch.no_grad():
            correct = sum(int((model(x_test[i:i + 1000]).argmax(1) == y_test[i:i + 1000]).sum())
                          for i in range(0, len(y_test), 1000))
        accuracy = 100.0 * correct / len(y_test)
        epochs.append((seconds, loss_sum / count, accuracy))
        print(f"  PyTorch epoch {e}: {seconds:7.2f} s, train loss {loss_sum / count:.4f}, "
              f"test accuracy {accuracy:.2f}%", flush=True)
    return epochs


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--udnn", help="the udnn-fashion-mnist program (default: "
                   "./examples/udnn-fashion-mnist, else $PATH)")
    p.add_argument("--data", default=DEFAULT_DATA)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--warmup", type=int, help="warm-up steps (udnn's default: 200)")
    p.add_argument("--no-decay", action="store_true")
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--bn", action="store_true")
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="where both train: the CPU, or udnn's CUDA backend and PyTorch's CUDA device")
    p.add_argument("--train-images", type=int, default=0, help="the first N only")
    p.add_argument("--test-images", type=int, default=0, help="the first N only")
    p.add_argument("--skip-udnn", action="store_true")
    p.add_argument("--skip-torch", action="store_true")
    args = p.parse_args()

    print(f"Fashion-MNIST, {args.epochs} epochs of batch {args.batch}, peak lr {args.lr}, "
          f"momentum {args.momentum}, weight decay {args.weight_decay}, seed {args.seed}"
          f"{', batch norm' if args.bn else ''}"
          f"{f', dropout {args.dropout}' if args.dropout else ''}")
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; PyTorch threads: {args.threads}")
    results = {}
    if not args.skip_udnn:
        prog = find_udnn(args.udnn)
        if prog is None:
            sys.exit("udnn-fashion-mnist not found: build udnn and run this from the build "
                     "directory, or give --udnn PATH")
        results["udnn"] = run_udnn(prog, args)
    if not args.skip_torch:
        try:
            import torch
        except ImportError:
            sys.exit("PyTorch is missing: apt-get install python3-torch (for /usr/bin/python3)")
        print(f"PyTorch {torch.__version__}", flush=True)
        if args.device == "cuda":
            if not torch.cuda.is_available():
                sys.exit("--device cuda: this PyTorch sees no CUDA device")
            print(f"GPU: {torch.cuda.get_device_name(0)}, cuDNN {torch.backends.cudnn.version()}",
                  flush=True)
        train, test = load_split(args.data, "train"), load_split(args.data, "t10k")
        if args.train_images:
            train = (train[0][:args.train_images], train[1][:args.train_images])
        if args.test_images:
            test = (test[0][:args.test_images], test[1][:args.test_images])
        pixels = train[0].astype(np.float64) / 255.0
        mean, std = np.float32(pixels.mean()), np.float32(pixels.std())
        results["PyTorch"] = run_torch(args, train, test, mean, std)

    print()
    # on a shared machine other work only ever adds time: the best epoch is
    # the least disturbed measure, the mean the honest one
    print(f"{'':10} {'best s/epoch':>13} {'mean s/epoch':>13} {'final loss':>11} "
          f"{'final accuracy':>15}")
    summary = {}
    for name, epochs in results.items():
        if not epochs:
            continue
        times = [e[0] for e in epochs]
        summary[name] = (min(times), sum(times) / len(times))
        print(f"{name:10} {summary[name][0]:13.2f} {summary[name][1]:13.2f} "
              f"{epochs[-1][1]:11.4f} {epochs[-1][2]:14.2f}%")
    if len(summary) == 2:
        (ub, um), (tb, tm) = summary["udnn"], summary["PyTorch"]
        print(f"PyTorch takes {tb / ub:.2f}x udnn's time per epoch (best), {tm / um:.2f}x (mean)")

if __name__ == "__main__":
    main()
