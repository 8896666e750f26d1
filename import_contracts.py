"""import-linter contract types of our own (registered by `contract_types` in .importlinter).

import-linter's `forbidden` contract names whole modules, and an external package is one node
of its graph (`kopf`, never `kopf._cogs`), so it can neither say "no private module of kopf"
nor "any private module below dra_operator.controllers" without listing each one. The
`private` contract says both: the source modules may import a package's public modules, never
one whose dotted path below the package has a part beginning with `_`. For external packages
it reads the import's own line, which import-linter keeps with each import.
"""

from __future__ import annotations

import re
from typing import cast

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output
from importlinter.domain.imports import ModuleExpression

_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+\(?\s*([\w\s,.]*)")
_IMPORT = re.compile(r"^\s*import\s+([\w.,\s]+)")


def named_modules(line: str) -> list[str]:
    """Every dotted name an import line reaches: `from a import b, c` gives a.b and a.c."""
    if found := _FROM.match(line):
        base = found.group(1)
        names = [n.split(" as ")[0].strip() for n in found.group(2).split(",")]
        return [base] + [f"{base}.{name}" for name in names if name]
    if found := _IMPORT.match(line):
        return [part.split(" as ")[0].strip() for part in found.group(1).split(",")]
    return []


def private_below(module: str, package: str) -> bool:
    """Whether `module` is `package`'s private module (a part below it begins with `_`)."""
    if not module.startswith(package + "."):
        return False
    return any(part.startswith("_") for part in module[len(package) + 1 :].split("."))


class PrivateModulesContract(Contract):
    """Source modules use only the public modules of the listed packages."""

    source_modules = fields.ListField(subfield=fields.ModuleExpressionField())
    private_of = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        """Collect every import from a source module that reaches a private module."""
        # import-linter sets each field's parsed value on the instance in place of the field.
        expressions = cast("list[ModuleExpression]", self.source_modules)
        packages = cast("list[str]", self.private_of)
        sources: set[str] = set()
        for expression in expressions:
            for module in graph.find_matching_modules(expression.expression):
                sources |= {module} | graph.find_descendants(module)
        broken: list[dict[str, object]] = []
        for importer in sorted(sources):
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                for detail in graph.get_import_details(importer=importer, imported=imported):
                    reached = {imported, *named_modules(detail["line_contents"])}
                    if any(private_below(m, p) for m in reached for p in packages):
                        broken.append({"importer": importer, **detail})
        return ContractCheck(kept=not broken, metadata={"broken": broken})

    def render_broken_contract(self, check: ContractCheck) -> None:
        """One line per offending import, as import-linter prints its own contracts."""
        for item in check.metadata["broken"]:
            output.print_error(
                f"{item['importer']}:{item['line_number']}: {item['line_contents']}", bold=False
            )
            output.new_line()
