"""The container tier's seccomp profile: the engine's own default, made to refuse a new user
namespace, as the bwrap tier's ``--disable-userns`` does."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Mapping
from functools import cache
from pathlib import Path

__all__ = ["no_userns_profile", "seccomp_args"]

_CLONE_NEWUSER = 0x10000000
_ENOSYS = 38
_GATED = ("clone", "clone3", "unshare")


def no_userns_profile(default: Mapping[str, object]) -> dict[str, object]:
    """The engine's seccomp profile, made to refuse a new user namespace (as the bwrap tier's
    ``--disable-userns`` does): ``clone`` and ``unshare`` only without ``CLONE_NEWUSER`` in their
    flags (the first argument, on x86-64 and arm64), and ``clone3``, whose flags are behind a
    pointer no filter can read, answered ENOSYS, so that the C library falls back to ``clone``
    (as Docker's own default profile does). Every other rule as it was."""
    profile: dict[str, object] = json.loads(json.dumps(default))
    rules = profile.get("syscalls")
    if not isinstance(rules, list):
        raise ValueError("a seccomp profile without a list of syscalls")
    for rule in rules:
        if isinstance(rule, dict) and rule.get("action") == "SCMP_ACT_ALLOW":
            names = rule.get("names")
            if isinstance(names, list):
                rule["names"] = [n for n in names if n not in _GATED]
    without_newuser = {
        "index": 0,
        "value": _CLONE_NEWUSER,
        "valueTwo": 0,
        "op": "SCMP_CMP_MASKED_EQ",
    }
    rules += [
        {"names": ["clone", "unshare"], "action": "SCMP_ACT_ALLOW", "args": [without_newuser]},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": _ENOSYS},
    ]
    return profile


@cache
def seccomp_args(name: str, exe: str, timeout_s: float) -> tuple[str, ...]:
    """``--security-opt seccomp=PATH`` of a profile without user namespaces, for podman, whose
    default profile allows them; () for docker, whose built-in default refuses them to a
    container without CAP_SYS_ADMIN (every capability is dropped here), and where podman names
    no profile file."""
    if name != "podman":
        return ()
    done = subprocess.run(
        [exe, "info", "--format", "{{.Host.Security.SECCOMPProfilePath}}"],
        capture_output=True, text=True, check=False, timeout=timeout_s,
    )  # fmt: skip
    source = Path(done.stdout.strip()) if done.returncode == 0 else None
    if source is None or not source.is_file():
        return ()
    text = json.dumps(no_userns_profile(json.loads(source.read_text())), sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"trialbook-seccomp-{digest}.json"
    if not path.is_file():
        partial = path.with_suffix(f".{os.getpid()}.partial")
        partial.write_text(text)
        partial.chmod(0o644)
        os.replace(partial, path)
    return ("--security-opt", f"seccomp={path}")
