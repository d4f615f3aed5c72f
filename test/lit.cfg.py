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
