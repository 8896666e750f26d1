"""The committed gRPC modules are what grpcio-tools makes of our .proto files today, and the
services carry the names the kubelet calls."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dra_operator.driver._proto import dra_v1_pb2, pluginregistration_v1_pb2

SOURCE_ROOT = Path(__file__).resolve().parents[3] / "operator"
PROTO_DIR = SOURCE_ROOT / "dra_operator" / "driver" / "_proto"


def test_generated_modules_match_the_proto_files(tmp_path: Path) -> None:
    protos = sorted(PROTO_DIR.glob("*.proto"))
    assert [p.name for p in protos] == ["dra_v1.proto", "pluginregistration_v1.proto"]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{SOURCE_ROOT}",
            f"--python_out={tmp_path}",
            f"--pyi_out={tmp_path}",
            f"--grpc_python_out={tmp_path}",
            *map(str, protos),
        ],
        check=True,
    )
    fresh = sorted((tmp_path / "dra_operator" / "driver" / "_proto").iterdir())
    committed = sorted(p for p in PROTO_DIR.iterdir() if "_pb2" in p.name)
    assert [p.name for p in fresh] == [p.name for p in committed]
    for new, old in zip(fresh, committed, strict=True):
        assert new.read_text() == old.read_text(), f"{old.name} is stale: run `make proto`"


def test_services_have_the_kubelets_full_names() -> None:
    dra = dra_v1_pb2.DESCRIPTOR.services_by_name["DRAPlugin"]
    registration = pluginregistration_v1_pb2.DESCRIPTOR.services_by_name["Registration"]
    assert dra.full_name == "k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin"
    assert [m.name for m in dra.methods] == ["NodePrepareResources", "NodeUnprepareResources"]
    assert registration.full_name == "pluginregistration.Registration"
    assert [m.name for m in registration.methods] == ["GetInfo", "NotifyRegistrationStatus"]


def test_field_numbers_are_the_documented_ones() -> None:
    device = dra_v1_pb2.Device.DESCRIPTOR.fields_by_name
    numbers = {name: field.number for name, field in device.items()}
    assert numbers == {
        "request_names": 1,
        "pool_name": 2,
        "device_name": 3,
        "cdi_device_ids": 4,
        "share_id": 5,
    }
    claim = dra_v1_pb2.Claim.DESCRIPTOR.fields_by_name
    assert {n: f.number for n, f in claim.items()} == {"namespace": 1, "uid": 2, "name": 3}
    info = pluginregistration_v1_pb2.PluginInfo.DESCRIPTOR.fields_by_name
    assert {n: f.number for n, f in info.items()} == {
        "type": 1,
        "name": 2,
        "endpoint": 3,
        "supported_versions": 4,
    }
