# lit configuration for kiln's tests.
import os
import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "onnx-backend", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")

path = os.pathsep.join([config.kiln_tools_dir, config.llvm_tools_dir,
                        config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%kiln_src", config.kiln_src_root))

# ptxas (the CUDA toolkit's PTX assembler) checks the PTX of --target=cuda:
# /usr/local/cuda on the build machines, or on PATH.
import shutil
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
