"""Peak resident memory of a long study with each sampler, each study in a fresh process.

Every sampler runs one sequential study on the 9-parameter mixed space of ``latency.py`` in its
own subprocess, so one sampler's allocations never count towards another's. The child reports its
peak resident set size (``getrusage(RUSAGE_SELF).ru_maxrss``) after the imports and every
``--every`` completed trials; the table gives those peaks in MiB and the study's wall time.

    nice -n 10 python benchmarks/memory.py --trials 1000
    nice -n 10 python benchmarks/memory.py --trials 300 --every 100 --samplers cocabo,tpe
    nice -n 10 python benchmarks/memory.py --trials 200 --every 50 --samplers catcmawm,smac,ax,gp

The peers (``catcmawm``, ``smac``, ``ax``) need the ``peers`` extra; each is built for the space
and the budget, as ``mixbo-compare`` builds it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_SAMPLERS = "cocabo,casmopolitan,bofm,mixbo,gp,tpe"
STARTUP = 10  # the first trials, a random design for every sampler here


def peak_mib() -> float:
    """This process's peak resident set size so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(name: str, n_trials: int, every: int, seed: int) -> None:
    """Run one study and print one JSON line: the peaks at each checkpoint, the wall time, the
    completed trials, the best value after the start-up trials and at the end, and the warnings."""
    import logging

    import optuna
    from latency import mixed9

    from mixbo_compare import SAMPLERS
    from mixbo_compare.cli import QUIET_PEER_LOGGERS
    from mixbo_compare.peers import PEERS

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.logging.disable_default_handler()
    for peer_logger in QUIET_PEER_LOGGERS:  # Ax logs every trial at INFO
        logging.getLogger(peer_logger).setLevel(logging.ERROR)
    warnings: list[str] = []
    catch = logging.Handler(logging.WARNING)
    catch.emit = lambda record: warnings.append(record.getMessage())
    logging.getLogger("optuna").addHandler(catch)
    peaks = {"import": peak_mib()}
    if name in PEERS:  # a peer is built for its search space and budget
        probe = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
        probe.optimize(mixed9, n_trials=1)
        sampler = PEERS[name].build(seed, probe.trials[0].distributions, n_trials)
    else:
        sampler = SAMPLERS[name](seed)
    study = optuna.create_study(sampler=sampler)
    start = time.perf_counter()

    def record(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        done = trial.number + 1
        if done % every == 0 or done == n_trials:
            peaks[str(done)] = peak_mib()

    study.optimize(mixed9, n_trials=n_trials, callbacks=[record])
    values = [t.value for t in study.trials if t.value is not None]
    report = {
        "peaks": peaks,
        "seconds": time.perf_counter() - start,
        "complete": len(values),
        "best_startup": min(values[:STARTUP]),
        "best": min(values),
        "warnings": sorted(set(warnings)),
    }
    print(json.dumps(report))


def measure(name: str, n_trials: int, every: int, seed: int) -> dict:
    """The child's report for one sampler (raises if the child fails)."""
    command = [sys.executable, __file__, "--child", name, "--trials", str(n_trials)]
    command += ["--every", str(every), "--seed", str(seed)]
    root = str(Path(__file__).resolve().parents[1])  # this checkout's packages, installed or not
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samplers", default=DEFAULT_SAMPLERS, help="comma-separated")
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100, help="checkpoint every so many trials")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.trials, args.every, args.seed)
        return
    checkpoints = [str(c) for c in range(args.every, args.trials + 1, args.every)]
    if str(args.trials) not in checkpoints:
        checkpoints.append(str(args.trials))
    print(f"peak RSS in MiB, 9-parameter mixed space, seed {args.seed}, one process per sampler")
    print("| sampler | after import | " + " | ".join(f"{c} trials" for c in checkpoints) + " | s |")
    print("|---|---|" + "---|" * (len(checkpoints) + 1))
    for name in (s for s in args.samplers.split(",") if s):
        report = measure(name, args.trials, args.every, args.seed)
        peaks = report["peaks"]
        cells = " | ".join(f"{peaks[c]:.0f}" for c in checkpoints)
        print(f"| {name} | {peaks['import']:.0f} | {cells} | {report['seconds']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
