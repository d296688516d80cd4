"""Fitted GP hyper-parameters as text, so that a new worker warm-starts where the study left off.

A strategy warm-starts each hyper-parameter fit from the previous one (:meth:`Strategy.remember`).
A new process that joins a study (another worker, a restarted job) has no previous fit and pays a
full fit from the priors: at 1000 trials 40 s for CASMOPOLITAN, against a fraction of a second
warm. The adapters store the latest fits with the study (Optuna: a trial's system attributes) and a
new strategy adopts them (:meth:`Strategy.adopt_warm`): its first suggestion then costs what the
next suggestion of the worker that stored them would have cost.

The text is JSON: each cache key's digest (a hash of the key's ``repr``, which names the space's
parameters, bounds and choices, so a key means the same model in every process) to that fit's
raw parameters. Floats are written exactly (``repr`` round-trips), so an adopted fit is the fit.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

import torch

VERSION = 1


def key_digest(key: Any) -> str:
    """A process-independent name for a warm-start cache key."""
    return hashlib.sha1(repr(key).encode()).hexdigest()[:20]


def dumps(fits: Mapping[str, Mapping[str, torch.Tensor]]) -> str:
    """Fits by key digest as JSON text (entries whose parameters are not finite tensors are left
    out)."""
    entries = {}
    for digest, params in fits.items():
        try:
            entry = {
                name: [list(t.shape), t.detach().cpu().double().flatten().tolist()]
                for name, t in params.items()
            }
        except AttributeError:  # not a mapping of tensors: nothing we know how to store
            continue
        if all(math.isfinite(v) for _, values in entry.values() for v in values):
            entries[digest] = entry
    return json.dumps({"version": VERSION, "fits": entries}, separators=(",", ":"))


def loads(text: str) -> dict[str, dict[str, torch.Tensor]]:
    """The fits of :func:`dumps`'s ``text`` by key digest; ``{}`` for text this version cannot
    read (a corrupted attribute or another mixbo's format is no reason to fail a suggestion)."""
    try:
        data = json.loads(text)
        if data.get("version") != VERSION:
            return {}
        return {
            digest: {
                name: torch.tensor(values, dtype=torch.float64).reshape(shape)
                for name, (shape, values) in entry.items()
            }
            for digest, entry in data["fits"].items()
        }
    except (ValueError, TypeError, KeyError, AttributeError, RuntimeError):
        return {}
