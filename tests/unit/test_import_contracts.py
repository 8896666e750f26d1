"""The `private` import-linter contract (import_contracts.py) breaks on private imports.

Runs lint-imports over a small package whose modules import a private module of an external
package in each spelling, and a private module of an internal package, next to public ones.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULES = {
    "pkg/__init__.py": "",
    "pkg/public.py": "import kopf\nfrom kopf import on\nfrom pkg.inner import thing\n",
    "pkg/dotted.py": "import kopf._cogs.clients.watching\n",
    "pkg/fromname.py": "from kopf import _core\n",
    "pkg/frommodule.py": "from kopf._kits.hierarchies import adopt\n",
    "pkg/inner/__init__.py": "from pkg.inner._impl import thing\n",
    "pkg/inner/_impl.py": "thing = 1\n",
    "pkg/outside.py": "from pkg.inner._impl import thing\n",
}
CONFIG = """[importlinter]
root_package = pkg
include_external_packages = True
contract_types =
    private: import_contracts.PrivateModulesContract

[importlinter:contract:kopf]
name = kopf public
type = private
source_modules =
    pkg
private_of =
    kopf

[importlinter:contract:inner]
name = inner public
type = private
source_modules =
    pkg.outside
    pkg.public
private_of =
    pkg.inner
"""


def test_private_imports_break_the_contract_and_public_ones_do_not(tmp_path: Path) -> None:
    for name, text in MODULES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / ".importlinter").write_text(CONFIG)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    lint = Path(sys.executable).parent / "lint-imports"
    run = subprocess.run(
        [str(lint), "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Contracts: 0 kept, 2 broken." in run.stdout
    offences = {line.split(":")[0] for line in run.stdout.splitlines() if line.startswith("pkg.")}
    assert offences == {"pkg.dotted", "pkg.fromname", "pkg.frommodule", "pkg.outside"}
