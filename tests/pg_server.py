"""A throwaway PostgreSQL server for tests: Debian's ``postgresql`` binaries (installed by ``make test``), a new
cluster in a temporary folder, listening on 127.0.0.1 on a free port, stopped at the end.

PostgreSQL refuses to run as root, so under root (CI, these machines) the cluster belongs to the ``postgres``
user the Debian package creates and its commands run through ``runuser``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path


def postgres_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl`` (the newest installed major version), or None."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """``start()``, then ``new_database()`` for each test's own database URL; ``stop()`` removes everything."""

    def __init__(self) -> None:
        self.bin = postgres_bin()
        if self.bin is None:
            raise RuntimeError("PostgreSQL is not installed (make test installs Debian's postgresql)")
        self.root = Path(tempfile.mkdtemp(prefix="planner-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        # No pipes: the server started by pg_ctl would hold them open (it logs to a file instead).
        subprocess.run(
            [*self.as_user, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300
        )

    def start(self) -> PostgresServer:
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "planner", "-E", "UTF8")
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c max_connections=60"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "server.log"),
            "-w",
            "-t",
            "120",
            "start",
        )
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://planner@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A new empty database's URL."""
        import psycopg  # noqa: PLC0415

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url().replace("postgresql://", "postgresql://", 1), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
