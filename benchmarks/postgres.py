"""A throwaway PostgreSQL server for the storage benchmark and tests.

``TemporaryServer`` runs ``initdb`` into a fresh temporary folder and ``pg_ctl start`` on a free
port of 127.0.0.1 (trust authentication, ``fsync=off``: nothing in it outlives the run), and
removes it all on ``stop``. The binaries come from ``PATH`` or Debian's
``/usr/lib/postgresql/<version>/bin`` (``apt-get install -y postgresql``). PostgreSQL refuses to
run as root, so under root the server runs as the ``postgres`` account the package creates.
Optuna's ``RDBStorage`` reaches it through psycopg2 (``pip install psycopg2-binary``).

    python benchmarks/postgres.py      # start one, print its storage URL, stop it on Ctrl-C
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

DEBIAN_BINARIES = "/usr/lib/postgresql/*/bin"


class NoServer(RuntimeError):
    """No PostgreSQL server can be started here; the message says what is missing."""


def binaries() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl`` (raises ``NoServer`` when there is none)."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    versions = sorted(glob.glob(DEBIAN_BINARIES), key=lambda p: int(p.split("/")[-2]))
    for folder in reversed(versions):
        if (Path(folder) / "pg_ctl").exists() and (Path(folder) / "initdb").exists():
            return Path(folder)
    raise NoServer(
        "no PostgreSQL server binaries (initdb, pg_ctl) on PATH or under "
        f"{DEBIAN_BINARIES}; on Debian: apt-get install -y postgresql"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TemporaryServer:
    """A PostgreSQL server in a temporary folder; ``url`` is an Optuna storage URL for it."""

    def __init__(self, max_connections: int = 200) -> None:
        try:
            import psycopg2  # noqa: F401
        except ImportError as error:
            raise NoServer("no PostgreSQL driver: pip install psycopg2-binary") from error
        self._bin = binaries()
        self._root = Path(tempfile.mkdtemp(prefix="mixbo-pg-"))
        self._as = self._server_account()
        self.port = _free_port()
        data = self._root / "data"
        self._ctl = [*self._as, str(self._bin / "pg_ctl"), "-D", str(data)]
        try:
            self._run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
            options = (
                f"-p {self.port} -k {self._root} -c listen_addresses=127.0.0.1 "
                f"-c max_connections={max_connections} -c fsync=off"
            )
            log = str(self._root / "server.log")
            self._call([*self._ctl, "-l", log, "-w", "-t", "60", "-o", options, "start"])
        except NoServer:
            shutil.rmtree(self._root, ignore_errors=True)
            raise
        self.url = f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/postgres"

    def _server_account(self) -> list[str]:
        """The command prefix that runs the server's programs (as ``postgres`` under root)."""
        if os.geteuid() != 0:
            return []
        try:
            account = pwd.getpwnam("postgres")
        except KeyError as error:
            raise NoServer("running as root and there is no 'postgres' account") from error
        if shutil.which("runuser") is None:
            raise NoServer("running as root and runuser is missing")
        os.chown(self._root, account.pw_uid, account.pw_gid)
        return ["runuser", "-u", "postgres", "--"]

    def _run(self, program: str, *args: str) -> None:
        self._call([*self._as, str(self._bin / program), *args])

    def _call(self, command: list[str]) -> None:
        done = subprocess.run(command, capture_output=True, text=True, cwd=self._root)
        if done.returncode != 0:
            log = self._root / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise NoServer(f"{' '.join(command[:4])} failed: {done.stderr.strip()}\n{tail}")

    def stop(self) -> None:
        """Stop the server and delete its folder."""
        subprocess.run([*self._ctl, "-m", "fast", "-w", "stop"], capture_output=True)
        shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self) -> TemporaryServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    with TemporaryServer() as server:
        print(server.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
