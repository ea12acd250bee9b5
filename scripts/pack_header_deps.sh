#!/usr/bin/env bash
# Copies lengen's header-only dependencies (CLI11, nlohmann-json, spdlog + fmt as header-only,
# GoogleTest's sources, and Gloo's headers in a folder of their own) from this machine's Debian
# packages into DEST, with CMake package files, so that lengen builds on a machine that has a
# compiler, CMake and PyTorch but not these packages (a GPU node without apt, say):
#   scripts/pack_header_deps.sh DEST
#   cmake -S . -B build-cuda -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)');DEST" \
#         -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON -DCMAKE_CXX_FLAGS=-IDEST/include
# (the -I puts this fmt ahead of any other on the include path; spdlog 1.10 needs fmt 9).
set -euo pipefail
dest=${1:?usage: scripts/pack_header_deps.sh DEST}
rm -rf "$dest"
mkdir -p "$dest/include" "$dest/src" "$dest/gloo/include"
cp -r /usr/include/CLI /usr/include/nlohmann /usr/include/spdlog /usr/include/fmt "$dest/include/"
cp -r /usr/include/gloo "$dest/gloo/include/"
cp -r /usr/src/googletest "$dest/src/"

package() {  # package NAME: writes DEST/lib/cmake/NAME/NAMEConfig.cmake from stdin
  mkdir -p "$dest/lib/cmake/$1"
  cat >"$dest/lib/cmake/$1/$1Config.cmake"
}
root='${CMAKE_CURRENT_LIST_DIR}/../../..'
# header_package NAME TARGET [PROPERTY VALUE...]: an INTERFACE target over the packed headers.
header_package() {
  local name=$1 target=$2
  shift 2
  package "$name" <<CMAKE
if(NOT TARGET $target)
  find_package(Threads REQUIRED)
  add_library($target INTERFACE IMPORTED)
  set_target_properties($target PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "$root/include" $*)
endif()
CMAKE
}
header_package CLI11 CLI11::CLI11
header_package nlohmann_json nlohmann_json::nlohmann_json
header_package spdlog spdlog::spdlog INTERFACE_COMPILE_DEFINITIONS '"SPDLOG_FMT_EXTERNAL;FMT_HEADER_ONLY"' \
  INTERFACE_LINK_LIBRARIES Threads::Threads
package GTest <<CMAKE
if(NOT TARGET GTest::gtest)
  find_package(Threads REQUIRED)
  set(_lengen_gtest "$root/src/googletest")
  add_library(lengen_packed_gmock STATIC "\${_lengen_gtest}/googletest/src/gtest-all.cc"
                                         "\${_lengen_gtest}/googlemock/src/gmock-all.cc")
  target_include_directories(lengen_packed_gmock SYSTEM PUBLIC "\${_lengen_gtest}/googletest/include"
                             "\${_lengen_gtest}/googlemock/include")
  target_include_directories(lengen_packed_gmock PRIVATE "\${_lengen_gtest}/googletest" "\${_lengen_gtest}/googlemock")
  target_link_libraries(lengen_packed_gmock PUBLIC Threads::Threads)
  add_library(lengen_packed_gtest_main STATIC "\${_lengen_gtest}/googletest/src/gtest_main.cc")
  target_link_libraries(lengen_packed_gtest_main PUBLIC lengen_packed_gmock)
  add_library(GTest::gtest ALIAS lengen_packed_gmock)
  add_library(GTest::gmock ALIAS lengen_packed_gmock)
  add_library(GTest::gtest_main ALIAS lengen_packed_gtest_main)
endif()
set(GTest_FOUND TRUE)
CMAKE
echo "packed into $dest ($(du -sh "$dest" | cut -f1))"
