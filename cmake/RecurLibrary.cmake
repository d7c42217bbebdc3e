# recur::recur, the library applications link (docs/architecture.md, "Library layout").
#
# Shared (BUILD_SHARED_LIBS=ON, the default when recur is the top-level project): librecur.so,
# made of the internal static libraries whole (they are compiled with PIC and hidden
# visibility) and exporting only what include/recur marks RECUR_API. Its dependencies
# (protobuf, onnx_proto, oneDNN, OpenMP) are linked into it privately, so an application
# needs nothing but the library and the C++ runtime. Tests and tools keep linking the internal
# libraries (recur, recur_base, ...), never librecur.so: one copy of each symbol per program.
#
# Static (BUILD_SHARED_LIBS=OFF): recur::recur is the internal `recur` archive itself, and
# the install exports it with the archives and packages it depends on (cmake/RecurInstall.cmake).

# In link order (users before what they use), as a static consumer needs them.
set(RECUR_INTERNAL_LIBRARIES recur recur_provider_reference)
if(RECUR_WITH_ONEDNN)
  list(APPEND RECUR_INTERNAL_LIBRARIES recur_provider_onednn)
endif()
get_target_property(_recur_conv_type recur_converters TYPE)
if(NOT _recur_conv_type STREQUAL "INTERFACE_LIBRARY")
  list(APPEND RECUR_INTERNAL_LIBRARIES recur_converters)
endif()
list(APPEND RECUR_INTERNAL_LIBRARIES recur_base)
# Never the CUDA providers: they are the module librecur_cuda.so (providers/cuda).

if(BUILD_SHARED_LIBS)
  # A target needs a source; the code is all in the archives linked whole below.
  set(_recur_stub ${PROJECT_BINARY_DIR}/recur_shared.cc)
  file(CONFIGURE OUTPUT ${_recur_stub}
       CONTENT "// librecur.so is the internal archives linked whole (cmake/RecurLibrary.cmake).\n")
  add_library(recur_shared SHARED ${_recur_stub})
  set_target_properties(recur_shared PROPERTIES
    OUTPUT_NAME recur
    EXPORT_NAME recur
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib
    LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/recur.map)
  set(_recur_whole)
  foreach(lib ${RECUR_INTERNAL_LIBRARIES})
    list(APPEND _recur_whole $<TARGET_FILE:${lib}>)
  endforeach()
  target_link_options(recur_shared PRIVATE
    -Wl,--whole-archive ${_recur_whole} -Wl,--no-whole-archive
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/recur.map -Wl,--no-undefined
    -Wl,--as-needed)
  # For the archives' own dependencies (and the build order); their symbols are already in.
  target_link_libraries(recur_shared PRIVATE ${RECUR_INTERNAL_LIBRARIES})
  target_include_directories(recur_shared INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include> $<INSTALL_INTERFACE:include>)
  # What an application needs from its compiler: the public headers are C++17.
  target_compile_features(recur_shared INTERFACE cxx_std_17)
  set(RECUR_PUBLIC_TARGET recur_shared)
else()
  set_target_properties(recur PROPERTIES EXPORT_NAME recur)
  set(RECUR_PUBLIC_TARGET recur)
endif()
add_library(recur::recur ALIAS ${RECUR_PUBLIC_TARGET})
