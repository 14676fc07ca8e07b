"""A fast start: ``mipkit --help`` and ``mipkit --version`` import no heavy library and no command module.

Asserted on the modules imported (``python -X importtime``), not on seconds, so that a loaded machine does
not make the test flaky.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

HEAVY = ("sklearn", "pandas", "scipy", "matplotlib", "dp_accounting", "numpy", "pyarrow", "ray", "torch")
pytestmark = pytest.mark.timeout(1800)  # a busy machine makes the interpreter slow, not the imports different


def _imported(args: list[str]) -> set[str]:
    """Top-level package and full names of every module imported by ``python -X importtime ARGS``."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *args], capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", line)
        if match:
            names.add(match.group(1))
    assert names, "python -X importtime printed nothing"
    return names


@pytest.mark.parametrize(
    "args",
    [["-m", "mipkit", "--help"], ["-m", "mipkit", "--version"], ["-c", "import mipkit, mipkit.cli"]],
    ids=["help", "version", "import"],
)
def test_start_imports_nothing_heavy(args):
    names = _imported(args)
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY)
    assert not heavy, f"{' '.join(args)} imports {heavy[:10]}"
    assert not any(n.startswith("mipkit.workflows") for n in names)
    # no command module is imported to list the commands
    loaded = {n for n in names if n.startswith("mipkit.cli.")}
    assert loaded <= {"mipkit.cli._progress"}, loaded


def test_mipkit_value_error_is_still_importable_from_the_package():
    """``import mipkit`` is lazy, but ``mipkit.MipkitValueError`` is the class the library raises."""
    import mipkit
    from mipkit._validation import MipkitValueError

    assert mipkit.MipkitValueError is MipkitValueError
    assert issubclass(mipkit.MipkitValueError, ValueError)
    assert "MipkitValueError" in dir(mipkit)
    with pytest.raises(AttributeError):
        mipkit.no_such_name  # noqa: B018


def test_the_shell_modules_import_nothing_heavy():
    """The command modules of the CLI shell (demo, options, the progress helper) defer their imports."""
    names = _imported(["-c", "import mipkit.cli.demo, mipkit.cli.options, mipkit.cli._progress"])
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY or n.startswith("mipkit.workflows"))
    assert not heavy, heavy[:10]
