"""Ray Tune with many trials in flight: does the searcher keep every slot busy?

A real ``Tuner`` runs ``--samples`` trials, ``--concurrent`` at a time, each asking for
``2 / concurrent`` CPUs of a 2-CPU Ray instance; the trainable sleeps ``--sleep`` seconds (a
stand-in for training) and reports when it started and ended. The searcher's ``suggest`` calls are
timed in the driver. With ``--interrupt-after k`` the run is interrupted (SIGINT, as Ctrl-C would)
after ``k`` trials complete and continued with ``Tuner.restore``; the searcher's state travels in
Tune's experiment checkpoint.

Slot idleness: the j-th suggestion (j > concurrent) fills the slot the (j - concurrent)-th trial to
end freed. The searcher sat *idle* in that slot for the time from the later of the slot's freeing
and the previous suggestion's end to this suggestion's start (Tune's event loop included): a
searcher that never leaves a slot idle for longer than one suggestion keeps that near zero. The
slot's whole *wait* (free until the next trainable starts) adds the suggestion itself and the
*launch*, Ray's time from a suggestion to its trainable running (actor start or reuse).

    nice -n 10 python benchmarks/tune_slots.py --samples 64 --concurrent 16 --sleep 8
    nice -n 10 python benchmarks/tune_slots.py --interrupt-after 24 --searcher casmopolitan
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

SEARCHERS = ("cocabo", "casmopolitan", "bofm", "mixbo")
SUGGEST_LOG = "MIXBO_SUGGEST_LOG"
INTERRUPTED = "MIXBO_TUNE_INTERRUPTED"


def space() -> dict[str, Any]:
    """A finite mixed Tune space (17 x 9 x 3 = 459 configurations): repeats are a real risk."""
    from ray import tune

    return {
        "x": tune.quniform(-2.0, 2.0, 0.25),
        "n": tune.randint(0, 9),
        "c": tune.choice(["a", "b", "c"]),
    }


def trainable(config: dict[str, Any]) -> dict[str, Any]:
    """Sleeps ``config["sleep"]`` seconds and reports the loss with its start and end times."""
    start = time.time()
    time.sleep(config["sleep"])
    loss = (config["x"] - 0.5) ** 2 + abs(config["n"] - 3) / 4 + (config["c"] != "b")
    return {"loss": loss, "started": start, "ended": time.time()}


def searcher_class(name: str) -> type:
    """A subclass of one of mixbo's Tune searchers that appends each suggestion (trial id,
    start and end times, configuration) to the file the ``SUGGEST_LOG`` variable names."""
    import ray_plugins

    base = {
        "cocabo": ray_plugins.CoCaBOSearch,
        "casmopolitan": ray_plugins.CasmopolitanSearch,
        "bofm": ray_plugins.BOFMSearch,
        "mixbo": ray_plugins.MixboSearch,
    }[name]

    class Timed(base):
        def suggest(self, trial_id: str) -> dict | str | None:
            start = time.time()
            config = super().suggest(trial_id)
            if isinstance(config, dict) and os.environ.get(SUGGEST_LOG):
                with open(os.environ[SUGGEST_LOG], "a") as log:  # survives Tune's pickling
                    log.write(json.dumps([trial_id, start, time.time(), config]) + "\n")
            return config

    Timed.__name__ = Timed.__qualname__ = f"Timed{base.__name__}"
    return Timed


@dataclass
class Slots:
    """What one run measured (seconds): per refilled slot, its wait and the searcher's idle time
    in it; per suggestion, its time; per trial, the launch from suggestion to trainable start."""

    n_trials: int
    n_reported: int  # trials whose trainable returned (an interrupted one may not have)
    errors: int
    peak_in_flight: int
    waits: list[float]
    suggest_s: list[float]
    idle: list[float]
    launch: list[float]
    n_suggested: int  # suggestions the searcher made, across both runs when restored
    duplicates: int  # configurations the searcher suggested more than once
    restored: bool


def slot_waits(rows: list[dict[str, Any]], concurrent: int) -> list[float]:
    """Each refill's wait: from "its slot free and the previous trial started" to its start."""
    starts = sorted(r["started"] for r in rows)
    ends = sorted(r["ended"] for r in rows)
    return [
        starts[j] - max(ends[j - concurrent], starts[j - 1]) for j in range(concurrent, len(starts))
    ]


def searcher_idle(ends: list[float], calls: list[tuple[float, float]], concurrent: int) -> list:
    """Per refill, how long the searcher sat idle while the slot was free: from the later of the
    slot's freeing and the previous suggestion's end to the start of the suggestion filling it."""
    ends, calls = sorted(ends), sorted(calls)
    return [
        max(0.0, calls[j][0] - max(ends[j - concurrent], calls[j - 1][1]))
        for j in range(concurrent, min(len(calls), len(ends) + concurrent))
    ]


def peak_in_flight(rows: list[dict[str, Any]]) -> int:
    events = sorted([(r["started"], 1) for r in rows] + [(r["ended"], -1) for r in rows])
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


def run(
    name: str = "cocabo",
    samples: int = 64,
    concurrent: int = 16,
    sleep: float = 8.0,
    startup: int = 8,
    interrupt_after: int = 0,
    seed: int = 0,
    storage: str | None = None,
) -> Slots:
    """One Tuner run on a fresh 2-CPU Ray instance (shut down afterwards)."""
    import ray
    from ray import tune

    if __name__ != "__main__":  # Ray workers need not import this module to run the trainable
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    searcher = searcher_class(name)
    storage = storage or tempfile.mkdtemp(prefix="mixbo-tune-")
    os.environ[SUGGEST_LOG] = log = os.path.join(storage, "suggestions.jsonl")
    os.environ.pop(INTERRUPTED, None)
    experiment = f"slots-{name}"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        fn = tune.with_resources(trainable, {"cpu": 2 / concurrent})
        param_space = {**space(), "sleep": sleep}
        alg = searcher(metric="loss", mode="min", seed=seed, n_startup_trials=startup)
        callbacks = [_Interrupt(interrupt_after)] if interrupt_after else []
        tuner = tune.Tuner(
            fn,
            param_space=param_space,
            tune_config=tune.TuneConfig(
                search_alg=alg, num_samples=samples, max_concurrent_trials=concurrent
            ),
            run_config=tune.RunConfig(
                name=experiment, storage_path=storage, callbacks=callbacks, verbose=0
            ),
        )
        results = tuner.fit()
        restored = False
        if interrupt_after:
            restored = True
            tuner = tune.Tuner.restore(
                os.path.join(storage, experiment), fn, resume_unfinished=True
            )
            results = tuner.fit()
        rows = [r.metrics for r in results if r.metrics and "started" in r.metrics]
        n_trials = len(results)
        errors = sum(r.error is not None for r in results)
    finally:
        ray.shutdown()
    with open(log) as f:
        suggestions = [json.loads(line) for line in f]
    calls = {trial_id: (t0, t1) for trial_id, t0, t1, _ in suggestions}
    configs = [(c["x"], c["n"], c["c"]) for *_, c in suggestions]
    return Slots(
        n_trials=n_trials,
        n_reported=len(rows),
        errors=errors,
        peak_in_flight=peak_in_flight(rows),
        waits=slot_waits(rows, concurrent),
        suggest_s=[t1 - t0 for t0, t1 in calls.values()],
        idle=searcher_idle([r["ended"] for r in rows], list(calls.values()), concurrent),
        launch=[r["started"] - calls[r["trial_id"]][1] for r in rows if r["trial_id"] in calls],
        n_suggested=len(configs),
        duplicates=len(configs) - len(set(configs)),
        restored=restored,
    )


class _Interrupt:
    """A Tune callback that sends this process SIGINT once ``after`` trials have completed, once
    per experiment (it travels with the Tuner into the restored run, where it does nothing)."""

    def __new__(cls, after: int):
        from ray.tune import Callback

        class Interrupt(Callback):
            def __init__(self) -> None:
                self.done = 0

            def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info) -> None:
                self.done += 1
                if self.done == after and not os.environ.get(INTERRUPTED):
                    os.environ[INTERRUPTED] = "1"
                    os.kill(os.getpid(), signal.SIGINT)

        return Interrupt()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searcher", choices=SEARCHERS, default="cocabo")
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--concurrent", type=int, default=16)
    parser.add_argument("--sleep", type=float, default=8.0)
    parser.add_argument("--startup", type=int, default=8)
    parser.add_argument("--interrupt-after", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = run(
        args.searcher,
        args.samples,
        args.concurrent,
        args.sleep,
        args.startup,
        args.interrupt_after,
        args.seed,
    )
    print(
        f"{args.searcher}: {out.n_trials} trials ({out.n_reported} reported, {out.errors} "
        f"errors), peak {out.peak_in_flight} in flight, "
        f"{out.duplicates} duplicates, restored mid-run: {out.restored}"
    )
    rows = (
        ("slot wait", out.waits),
        ("suggest", out.suggest_s),
        ("idle", out.idle),
        ("launch", out.launch),
    )
    for label, xs in rows:
        if xs:
            print(
                f"  {label:9s} s: median {statistics.median(xs):.2f}  "
                f"p90 {sorted(xs)[int(0.9 * (len(xs) - 1))]:.2f}  max {max(xs):.2f}"
            )


if __name__ == "__main__":
    main()
