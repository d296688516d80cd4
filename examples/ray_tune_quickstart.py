"""Ray Tune with a mixbo searcher: a mixed search space, several trials at once.

Runs on an existing Ray cluster when given its address, and on a local one otherwise::

    python examples/ray_tune_quickstart.py                           # local Ray, 2 CPUs
    python examples/ray_tune_quickstart.py --address auto            # the cluster `ray start` made
    python examples/ray_tune_quickstart.py --address 10.0.0.5:6379 --method casmopolitan
    python examples/ray_tune_quickstart.py --compare              # ours beside Tune's OptunaSearch

``--compare`` runs the same trainable, budget and seed under mixbo's searchers and Tune's own
``OptunaSearch`` with TPE and with Optuna's GP sampler, and prints each one's best loss. Tune's
``HEBOSearch`` is not among them: no release of the ``hebo`` package runs beside numpy 2 and
pandas 2+ (``mixbo_compare/peers/__init__.py`` says which releases fail, and why).

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


OURS = ("mixbo", "cocabo", "casmopolitan", "bofm")
TUNES = ("optuna-tpe", "optuna-gp")  # Tune's own OptunaSearch with Optuna's samplers


def make_searcher(method: str, num_samples: int, seed: int):
    import ray_plugins

    if method in TUNES:
        import optuna
        from ray.tune.search.optuna import OptunaSearch

        sampler = {"optuna-tpe": optuna.samplers.TPESampler, "optuna-gp": optuna.samplers.GPSampler}
        return OptunaSearch(sampler=sampler[method](seed=seed))
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
    parser.add_argument("--method", default="mixbo", choices=[*OURS, *TUNES])
    parser.add_argument(
        "--compare", action="store_true", help="run every method above and print their best losses"
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

    methods = [*OURS, *TUNES] if args.compare else [args.method]
    table = []
    for method in methods:
        start = time.perf_counter()
        best = run(method, args)
        table.append((method, best.metrics["loss"], time.perf_counter() - start))
        print(f"{method}: best loss {best.metrics['loss']:.4f} with {best.config}")
    if args.compare:
        print(
            f"\n{'searcher':<14} best loss  seconds   ({args.num_samples} trials, seed {args.seed})"
        )
        for method, loss, seconds in sorted(table, key=lambda row: row[1]):
            print(f"{method:<14} {loss:9.4f}  {seconds:7.1f}")
    ray.shutdown()


def run(method: str, args: argparse.Namespace):
    """One Tune run of ``train`` with ``method``'s searcher; its best result."""
    tuner = tune.Tuner(
        train,
        param_space=SPACE,
        tune_config=tune.TuneConfig(
            metric="loss",
            mode="min",
            num_samples=args.num_samples,
            max_concurrent_trials=args.concurrency,
            search_alg=make_searcher(method, args.num_samples, args.seed),
            reuse_actors=True,
        ),
        run_config=tune.RunConfig(
            name=f"mixbo-{method}", storage_path=args.storage_path, verbose=0 if args.compare else 1
        ),
    )
    return tuner.fit().get_best_result()


if __name__ == "__main__":
    main()
