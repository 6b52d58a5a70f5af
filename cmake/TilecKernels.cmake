# tilec_add_kernels(<target> FILES a.tile [b.tile ...]
#                   [ARCH sm_90a] [DEFINES NAME=VALUE ...])
#
# Compiles each .tile file at build time into a C++ header
# (<build>/tilec_kernels/<target>/<name>.tile.h) with the PTX embedded and one
# typed launch function per kernel in namespace <name>_kernels, adds the
# directory to <target>'s include path and links the tilec runtime. The
# program then needs no LLVM/MLIR at run time:
#
#   #include "saxpy.tile.h"
#   saxpy_kernels::saxpy(2.0f, x, y);
#
# TILEC_EXECUTABLE (the compiler) and TILEC_RUNTIME_TARGET (the runtime
# library) are set by the tilec build or by find_package(tilec).
function(tilec_add_kernels target)
  cmake_parse_arguments(ARG "" "ARCH" "FILES;DEFINES" ${ARGN})
  if(NOT ARG_FILES)
    message(FATAL_ERROR "tilec_add_kernels(${target}): no FILES given")
  endif()
  if(NOT ARG_ARCH)
    set(ARG_ARCH sm_90a)
  endif()
  set(outdir ${CMAKE_CURRENT_BINARY_DIR}/tilec_kernels/${target})
  set(flags)
  foreach(d IN LISTS ARG_DEFINES)
    list(APPEND flags "-D${d}")
  endforeach()
  set(headers)
  foreach(f IN LISTS ARG_FILES)
    get_filename_component(abs ${f} ABSOLUTE)
    get_filename_component(stem ${f} NAME_WE)
    set(header ${outdir}/${stem}.tile.h)
    add_custom_command(
      OUTPUT ${header}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${outdir}
      COMMAND ${TILEC_EXECUTABLE} ${abs} -emit=header --arch=${ARG_ARCH} ${flags}
              -o ${header}
      DEPENDS ${abs} ${TILEC_EXECUTABLE}
      COMMENT "tilec: compiling ${f} to ${stem}.tile.h"
      VERBATIM)
    list(APPEND headers ${header})
  endforeach()
  add_custom_target(${target}_tilec_kernels DEPENDS ${headers})
  add_dependencies(${target} ${target}_tilec_kernels)
  target_include_directories(${target} PRIVATE ${outdir})
  target_link_libraries(${target} PRIVATE ${TILEC_RUNTIME_TARGET})
endfunction()
