# kiln_add_model(<target> MODEL <file.onnx>
#                [NAME <prefix>] [TARGET <triple>] [MCPU <cpu>]
#                [INPUT_SHAPES <name=dims>...]
#                [QUANTIZE int8 CALIBRATION_DATA <dir>]
#                [SHARED | STATIC | OBJECT])
#
# Compiles the model with kiln at build time (again whenever the .onnx file
# or the kiln binary changes) and defines <target>, a library to link
# against (STATIC by default; SHARED; or OBJECT for firmware images) whose
# include directories hold the generated header <prefix>.h. <prefix>
# defaults to <target>; every exported symbol starts with it.
function(kiln_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 KAM "SHARED;STATIC;OBJECT"
    "MODEL;NAME;TARGET;MCPU;QUANTIZE;CALIBRATION_DATA" "INPUT_SHAPES")
  if(KAM_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_model(${target}): unknown arguments: ${KAM_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT KAM_MODEL)
    message(FATAL_ERROR "kiln_add_model(${target}): MODEL <file.onnx> is required")
  endif()
  if(KAM_QUANTIZE OR KAM_CALIBRATION_DATA)
    message(FATAL_ERROR "kiln_add_model(${target}): QUANTIZE/CALIBRATION_DATA need kiln's "
                        "INT8 support, which this kiln (${Kiln_VERSION}) does not have yet")
  endif()
  set(kinds 0)
  foreach(k SHARED STATIC OBJECT)
    if(KAM_${k})
      math(EXPR kinds "${kinds} + 1")
      set(kind ${k})
    endif()
  endforeach()
  if(kinds GREATER 1)
    message(FATAL_ERROR "kiln_add_model(${target}): give at most one of SHARED, STATIC, OBJECT")
  elseif(kinds EQUAL 0)
    set(kind STATIC)
  endif()
  if(NOT KAM_NAME)
    set(KAM_NAME ${target})
  endif()
  get_filename_component(model "${KAM_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/kiln/${target}")
  if(kind STREQUAL "SHARED")
    set(out "${dir}/lib${KAM_NAME}.so")
  elseif(kind STREQUAL "STATIC")
    set(out "${dir}/lib${KAM_NAME}.a")
  else()
    set(out "${dir}/${KAM_NAME}.o")
  endif()
  set(args compile "${model}" -o "${out}" --name "${KAM_NAME}" --quiet)
  if(KAM_TARGET)
    list(APPEND args --target "${KAM_TARGET}")
  endif()
  if(KAM_MCPU)
    list(APPEND args --mcpu "${KAM_MCPU}")
  endif()
  foreach(shape IN LISTS KAM_INPUT_SHAPES)
    list(APPEND args --input-shape "${shape}")
  endforeach()
  add_custom_command(OUTPUT "${out}" "${dir}/${KAM_NAME}.h"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${dir}"
    COMMAND Kiln::kiln ${args}
    DEPENDS "${model}" "$<TARGET_FILE:Kiln::kiln>"
    COMMENT "kiln: compiling ${KAM_MODEL} (${target})"
    VERBATIM)
  add_custom_target(${target}_kiln DEPENDS "${out}" "${dir}/${KAM_NAME}.h")

  if(kind STREQUAL "OBJECT")
    add_library(${target} OBJECT IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES IMPORTED_OBJECTS "${out}")
  else()
    add_library(${target} ${kind} IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${out}")
    if(kind STREQUAL "SHARED")
      set_target_properties(${target} PROPERTIES IMPORTED_NO_SONAME TRUE)
    endif()
  endif()
  add_dependencies(${target} ${target}_kiln)
  # The header is written at build time; the folder exists from the start.
  file(MAKE_DIRECTORY "${dir}")
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${dir}")
  target_link_libraries(${target} INTERFACE Kiln::kiln_runtime)
endfunction()
