"""The kgate Python package's sources (python/kgate/) made importable without a build, for CPU tests:
copied into a folder with a _build.py rendered from python/build.py.in as CMake renders it, and a
synthetic kgate._engine (a Python stand-in for the nanobind module) where a test needs one."""

import os
import shutil


def install_package(folder, source_dir, version, engine_built, absent_reason="", engine=None):
    """python/kgate/ of `source_dir` into folder/kgate, its _build.py from build.py.in, and `engine`
    (Python source) as kgate/_engine.py."""
    package = os.path.join(folder, "kgate")
    shutil.copytree(os.path.join(source_dir, "python", "kgate"), package)
    with open(os.path.join(source_dir, "python", "build.py.in"), encoding="utf-8") as template:
        build = (template.read().replace("@PROJECT_VERSION@", version)
                 .replace("@engine_built@", str(engine_built)).replace("@KGATE_ENGINE_ABSENT_REASON@", absent_reason))
    with open(os.path.join(package, "_build.py"), "w", encoding="utf-8") as out:
        out.write(build)
    if engine is not None:
        with open(os.path.join(package, "_engine.py"), "w", encoding="utf-8") as out:
            out.write(engine)
