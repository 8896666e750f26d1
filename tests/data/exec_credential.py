"""An `exec` credential plugin for the tests: prints an ExecCredential holding a token.

Usage: exec_credential.py TOKEN_FILE CALLS_FILE [TTL_SECONDS]. The token is read from
TOKEN_FILE; each run appends a line to CALLS_FILE (so tests can count the runs); with a TTL
the credential carries `expirationTimestamp` that far ahead, without one it never expires.
The apiVersion is the one the kubeconfig asked for, from $KUBERNETES_EXEC_INFO.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    token = Path(argv[1]).read_text().strip()
    with Path(argv[2]).open("a") as calls:
        calls.write("run\n")
    info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
    status: dict[str, str] = {"token": token}
    if len(argv) > 3:
        expiry = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=int(argv[3]))
        status["expirationTimestamp"] = expiry.strftime("%Y-%m-%dT%H:%M:%SZ")
    credential = {"apiVersion": info["apiVersion"], "kind": "ExecCredential", "status": status}
    print(json.dumps(credential))


if __name__ == "__main__":
    main(sys.argv)
