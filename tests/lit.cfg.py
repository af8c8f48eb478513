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
# Compiled steps are cached for one lit run, never in the user's home: a run
# starts with an empty cache, which its tests then share.
compile_cache = os.path.join(config.test_exec_root, "compile-cache")
shutil.rmtree(compile_cache, ignore_errors=True)
config.environment["GACC_CACHE_DIR"] = compile_cache

config.substitutions.append(("%gacc_src_root", config.gacc_src_root))
config.substitutions.append(("%gacc_obj_root", config.gacc_obj_root))
python, torch_python = config.python_executable, "/usr/bin/python3"
# A sanitized build (-DGACC_SANITIZE=ON, scripts/sanitize.sh, docs/hardening.md).
# Allocations too large to make return null, as without ASan: the
# out-of-memory tests need that. Debian's libMLIR is not instrumented, and
# LLVM's bump allocator inlined into instrumented code poisons slabs that
# its copy in libMLIR hands out unpoisoned: user poisoning stays off. Python
# loads the instrumented bindings, so ASan's runtime must come first; CPython
# frees little at exit by design, so leaks are not checked in it.
if config.gacc_sanitize:
    config.available_features.add("sanitize")
    asan_options = "allocator_may_return_null=1:allow_user_poisoning=0"
    unchecked_leaks = f"ASAN_OPTIONS={asan_options}:detect_leaks=0"
    config.environment["ASAN_OPTIONS"] = asan_options
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1"
    # libstdc++ too, or ASan cannot find the __cxa_throw it intercepts.
    libasan, libstdcxx = (subprocess.check_output(
        [config.cxx_compiler, f"-print-file-name={name}"], text=True).strip()
        for name in ("libasan.so", "libstdc++.so.6"))
    preload = f"env LD_PRELOAD='{libasan} {libstdcxx}' {unchecked_leaks} "
    python, torch_python = preload + python, preload + torch_python
    # Open MPI leaks on threads of its own, which LeakSanitizer cannot tell
    # from gacc's: the ranks of an MPI job do not check leaks.
    config.substitutions.append((r"\bmpirun\b", f"mpirun -x {unchecked_leaks}"))
config.substitutions.append(("%python", python))

# Debian's python3 has NumPy and PyTorch (scripts/test.sh installs them);
# the PyTorch parity tests need it.
config.substitutions.append(("%torch_python", torch_python))
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

# MLIR's CMake package, for tests that configure a build.
config.substitutions.append(
    ("%mlir_cmake_dir", os.path.join(os.path.dirname(config.llvm_tools_dir),
                                     "lib", "cmake", "mlir")))

# MLIR's runner and its support libraries, for kernels run on the CPU.
config.substitutions.append(
    ("%mlir_lib_dir", os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.gacc_tools_dir, config.llvm_tools_dir]
tools = ["gacc", "gacc-opt", "gacc-compile-fuzzer", "gacc-readers-fuzzer",
         ToolSubst("FileCheck", unresolved="fatal"),
         ToolSubst("not", unresolved="fatal"),
         ToolSubst("mlir-runner", unresolved="fatal")]
llvm_config.add_tool_substitutions(tools, tool_dirs)
