"""Build the optional C reader for JSONL ledgers (everything else is declared in pyproject.toml).

``optional=True``: where no C compiler is at hand the package still installs and reads JSONL with
pyarrow (slower on large files, same results); ``trialbook.ledger.formats.NATIVE_JSONL`` says which one it uses.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "trialbook.ledger.formats._cjsonl",
            ["src/trialbook/ledger/formats/_cjsonl.c"],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror=implicit"],
            optional=True,
        )
    ]
)
