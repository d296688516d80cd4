"""Ray Tune with a mixbo searcher: a mixed search space, several trials at once.

Runs on an existing Ray cluster when given its address, and on a local one otherwise::

    python examples/ray_tune_quickstart.py                           # local Ray, 2 CPUs
    python examples/ray_tune_quickstart.py --address auto            # the cluster `ray start` made
    python examples/ray_tune_quickstart.py --address 10.0.0.5:6379 --method casmopolitan

The searcher runs in this driver process, the trials anywhere on the cluster. A cluster with
Ray's token authentication (Ray 2.60 turns it on for the clusters it starts) also needs
``RAY_AUTH_MODE=token`` and its token (``~/.ray/auth_token`` or ``RAY_AUTH_TOKEN``) in the
environment of this script.

The trainable stands in for a real training run: a "validation loss" that depends on a float
(log-scaled learning rate), integers (layers, batch size on a grid of 16) and categoricals
(optimiser, and an architecture given as a list of widths).
"""

from __future__ import annotations

import argparse
import math
import time

import ray
from ray import tune

SPACE = {
    "lr": tune.loguniform(1e-4, 1e-1),
    "dropout": tune.quniform(0.0, 0.5, 0.05),
    "layers": tune.randint(1, 6),  # 1..5: Tune's upper bound is exclusive
    "batch_size": tune.qrandint(16, 256, 16),
    "optimizer": tune.choice(["sgd", "adam", "rmsprop"]),
    "widths": tune.choice([[64, 64], [256, 128], [512, 256, 128]]),
    "seed": 0,  # constants are passed through to the trainable
}


def train(config: dict) -> dict:
    """A made-up validation loss with its optimum near lr=3e-3, 3 layers, adam, [256, 128]."""
    time.sleep(0.2)  # pretend to train
    loss = (math.log10(config["lr"]) - math.log10(3e-3)) ** 2
    loss += 0.1 * (config["layers"] - 3) ** 2 + (config["dropout"] - 0.2) ** 2
    loss += 0.3 * abs(math.log2(config["batch_size"] / 64))
    loss += {"sgd": 0.5, "adam": 0.0, "rmsprop": 0.2}[config["optimizer"]]
    loss += 0.0 if config["widths"] == [256, 128] else 0.3
    return {"loss": loss}


def make_searcher(method: str, num_samples: int, seed: int):
    import ray_plugins

    cls = {
        "mixbo": ray_plugins.MixboSearch,
        "cocabo": ray_plugins.CoCaBOSearch,
        "casmopolitan": ray_plugins.CasmopolitanSearch,
        "bofm": ray_plugins.BOFMSearch,
    }[method]
    return cls(seed=seed, n_startup_trials=min(8, num_samples))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None, help="an existing cluster (e.g. auto)")
    parser.add_argument("--num-cpus", type=int, default=2, help="CPUs of a local Ray")
    parser.add_argument(
        "--method", default="mixbo", choices=["mixbo", "cocabo", "casmopolitan", "bofm"]
    )
    parser.add_argument("--num-samples", type=int, default=30)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--storage-path", default=None, help="where Tune writes its results")
    args = parser.parse_args()

    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)

    tuner = tune.Tuner(
        train,
        param_space=SPACE,
        tune_config=tune.TuneConfig(
            metric="loss",
            mode="min",
            num_samples=args.num_samples,
            max_concurrent_trials=args.concurrency,
            search_alg=make_searcher(args.method, args.num_samples, args.seed),
            reuse_actors=True,
        ),
        run_config=tune.RunConfig(
            name=f"mixbo-{args.method}", storage_path=args.storage_path, verbose=1
        ),
    )
    results = tuner.fit()
    best = results.get_best_result()
    print(f"best loss {best.metrics['loss']:.4f} with {best.config}")
    ray.shutdown()


if __name__ == "__main__":
    main()
