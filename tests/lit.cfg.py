# -*- Python -*- lit configuration for gacc.
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "GACC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit",
                   "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gacc_obj_root, "tests")

config.substitutions.append(("%gacc_src_root", config.gacc_src_root))
config.substitutions.append(("%gacc_obj_root", config.gacc_obj_root))
config.substitutions.append(("%python", config.python_executable))

# Debian's python3 has NumPy and PyTorch (scripts/test.sh installs them);
# the PyTorch parity tests need it.
config.substitutions.append(("%torch_python", "/usr/bin/python3"))
for module in ("torch", "sklearn"):
    if subprocess.call(["/usr/bin/python3", "-c", f"import {module}"],
                       stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL) == 0:
        config.available_features.add(module)

# CUDA's ptxas (no GPU needed) validates the emitted PTX.
if os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", "/usr/local/cuda/bin/ptxas"))

# A CUDA driver (a GPU machine): the "no driver" errors cannot be seen.
import ctypes
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# Open MPI's launcher, for the multi-rank (ZeRO) tests.
if shutil.which("mpirun"):
    config.available_features.add("mpirun")

# MLIR's runner and its support libraries, for kernels run on the CPU.
config.substitutions.append(
    ("%mlir_lib_dir", os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.gacc_tools_dir, config.llvm_tools_dir]
tools = ["gacc", "gacc-opt", ToolSubst("FileCheck", unresolved="fatal"),
         ToolSubst("not", unresolved="fatal"),
         ToolSubst("mlir-runner", unresolved="fatal")]
llvm_config.add_tool_substitutions(tools, tool_dirs)
