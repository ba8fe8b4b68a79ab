# `cmake --install BUILD --prefix PREFIX`: what a user of dlc gets.
#
#   bin/dlc, bin/dlc-opt            the compiler (when DLC_BUILD_COMPILER)
#   bin/dlc-train-job               a training job compiled ahead, on the runtime
#   lib/libdlc_runtime.so.0, .a     the runtime (C API), shared and static
#   include/dlc/runtime.h(pp)       its C API and the C++ wrapper
#   lib/cmake/dlc/                  find_package(dlc): dlc::runtime, dlc::runtime_static
#   lib/pkgconfig/dlc-runtime.pc    pkg-config --cflags --libs dlc-runtime
#   share/dlc/devices/              the cost model's device descriptions
#
# Programs find the runtime next to them ($ORIGIN/../lib), so a prefix can
# be moved as a whole; LLVM/MLIR, ONNX and NVRTC, which the compiler links,
# stay where their packages put them. Included last from the top-level
# CMakeLists.txt, when every target exists. docs/embedding.md says what the
# runtime loads at run time.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(PROJECT_VERSION)
  set(DLC_PACKAGE_VERSION ${PROJECT_VERSION})
else()
  get_target_property(DLC_PACKAGE_VERSION dlc_runtime VERSION)
endif()

# The relative path from bin/ to lib/, for the programs' run path.
file(RELATIVE_PATH _dlc_bin_to_lib
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})
foreach(tool dlc dlc-opt dlc-train-job)
  if(TARGET ${tool})
    # $ORIGIN first; the link path keeps LLVM's and CUDA's own folders.
    set_target_properties(${tool} PROPERTIES
      INSTALL_RPATH "$ORIGIN/${_dlc_bin_to_lib}"
      INSTALL_RPATH_USE_LINK_PATH TRUE)
  endif()
endforeach()
foreach(tool dlc dlc-opt)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT compiler)
  endif()
endforeach()
if(TARGET dlc)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/devices/
    DESTINATION ${CMAKE_INSTALL_DATADIR}/dlc/devices COMPONENT compiler
    FILES_MATCHING PATTERN "*.json")
endif()

# The CMake package. The headers include <dlpack/dlpack.h>; where it lives
# outside the compiler's default folders, the package and the .pc file say.
set(DLC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/dlc)
install(EXPORT dlcTargets NAMESPACE dlc:: DESTINATION ${DLC_INSTALL_CMAKEDIR}
  COMPONENT runtime)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dlcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/dlcConfig.cmake
  INSTALL_DESTINATION ${DLC_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/dlcConfigVersion.cmake
  VERSION ${DLC_PACKAGE_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/dlcConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/dlcConfigVersion.cmake
  DESTINATION ${DLC_INSTALL_CMAKEDIR} COMPONENT runtime)

# pkg-config: the prefix is found from the .pc file's own place, so that a
# moved prefix still works (pkgconf and pkg-config both know ${pcfiledir}).
file(RELATIVE_PATH DLC_PC_TO_PREFIX
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" DLC_PC_TO_PREFIX "${DLC_PC_TO_PREFIX}")
set(DLC_PC_DLPACK_CFLAGS "")
if(NOT DLC_DLPACK_INCLUDE_DIR IN_LIST CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES)
  set(DLC_PC_DLPACK_CFLAGS " -I${DLC_DLPACK_INCLUDE_DIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/dlc-runtime.pc.in
  ${PROJECT_BINARY_DIR}/cmake/dlc-runtime.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/dlc-runtime.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT runtime)

# A Debian package of the same files (bonus of `cmake --install`):
#   cpack -G DEB --config BUILD/CPackConfig.cmake   ->  dlc_0.1.0_amd64.deb
# installing into /usr. One package of the runtime, the compiler and the
# default component (never the Python module's files, component "python");
# the shared libraries it needs come from dpkg-shlibdeps where dpkg-dev is
# installed, and what the compiler runs to build CPU kernels is named.
set(CPACK_PACKAGE_NAME dlc)
set(CPACK_PACKAGE_VERSION ${DLC_PACKAGE_VERSION})
set(CPACK_PACKAGE_CONTACT "dlc developers <dlc@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "dataflow graph compiler for deep-learning models, and its embeddable runtime")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL runtime compiler Unspecified)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
find_program(DLC_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(DLC_DPKG_SHLIBDEPS)
if(DLC_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
if(TARGET dlc)
  # dlc compiles CPU kernels with the host C++ compiler against oneDNN and
  # OpenBLAS; <dlc/runtime.h> includes <dlpack/dlpack.h>.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "g++, libdnnl-dev, libopenblas-dev, libdlpack-dev")
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libdlpack-dev")
endif()
include(CPack)
