# `cmake --install build --prefix P` installs the public headers, librecur and the package
# files under P, so that a project builds against P alone:
#   find_package(recur REQUIRED)  +  target_link_libraries(app PRIVATE recur::recur)
# or pkg-config --cflags --libs recur. The build tree is usable the same way
# (CMAKE_PREFIX_PATH=build, or recur::recur after add_subdirectory).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RECUR_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/recur CACHE STRING
    "Where recurConfig.cmake is installed, relative to the prefix")
mark_as_advanced(RECUR_INSTALL_CMAKEDIR)

# Every public header, the generated version.h included; nothing from the internal folders.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/recur DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT recur_dev FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/recur/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/recur COMPONENT recur_dev)

if(BUILD_SHARED_LIBS)
  install(TARGETS recur_shared EXPORT recurTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT recur_runtime
                  NAMELINK_COMPONENT recur_dev
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set(RECUR_CONFIG_DEPENDENCIES "")
  set(RECUR_PC_LIBS "-lrecur")
  set(RECUR_PC_LIBS_PRIVATE "")
else()
  # A static librecur.a cannot hide its dependencies: the consumer links every internal
  # archive and the packages they use, which recurConfig.cmake finds again.
  set(_recur_export ${RECUR_INTERNAL_LIBRARIES})
  get_target_property(_recur_conv_type recur_converters TYPE)
  if(_recur_conv_type STREQUAL "INTERFACE_LIBRARY")
    list(APPEND _recur_export recur_converters)
  endif()
  install(TARGETS ${_recur_export} EXPORT recurTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT recur_dev
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set(RECUR_CONFIG_DEPENDENCIES "find_dependency(Protobuf)\nfind_dependency(ONNX)\n")
  set(RECUR_PC_LIBS "-lrecur")
  set(RECUR_PC_LIBS_PRIVATE "")
  foreach(lib ${RECUR_INTERNAL_LIBRARIES})
    if(NOT lib STREQUAL "recur")
      string(APPEND RECUR_PC_LIBS_PRIVATE " -l${lib}")
    endif()
  endforeach()
  string(APPEND RECUR_PC_LIBS_PRIVATE " -lonnx_proto -lprotobuf")
  if(RECUR_WITH_ONEDNN)
    string(APPEND RECUR_CONFIG_DEPENDENCIES "find_dependency(dnnl CONFIG)\nfind_dependency(OpenMP)\n")
    string(APPEND RECUR_PC_LIBS_PRIVATE " -ldnnl -fopenmp")
  endif()
  foreach(lib ${CMAKE_DL_LIBS})
    string(APPEND RECUR_PC_LIBS_PRIVATE " -l${lib}")
  endforeach()
endif()

# The GPU module lies beside librecur, where the engine looks for it first.
if(RECUR_WITH_CUDA)
  install(TARGETS recur_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT recur_cuda)
endif()

install(EXPORT recurTargets NAMESPACE recur:: DESTINATION ${RECUR_INSTALL_CMAKEDIR}
        FILE recurTargets.cmake COMPONENT recur_dev)
# The same targets for find_package against the build tree itself.
export(EXPORT recurTargets NAMESPACE recur:: FILE ${PROJECT_BINARY_DIR}/recurTargets.cmake)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/recurConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/recurConfig.cmake
                              INSTALL_DESTINATION ${RECUR_INSTALL_CMAKEDIR})
# librecur.so.MAJOR is the SONAME, so a config of the same major version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/recurConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/recurConfig.cmake ${PROJECT_BINARY_DIR}/recurConfigVersion.cmake
        DESTINATION ${RECUR_INSTALL_CMAKEDIR} COMPONENT recur_dev)

# recur.pc, relocatable: its prefix is found from where the file lies, so that
# `cmake --install --prefix P` for any P gives a working file.
set(_recur_pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH RECUR_PC_PREFIX_FROM_PCDIR /prefix/${_recur_pcdir} /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/recur.pc.in ${PROJECT_BINARY_DIR}/recur.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/recur.pc DESTINATION ${_recur_pcdir} COMPONENT recur_dev)
