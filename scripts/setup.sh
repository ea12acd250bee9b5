#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build, test and run lengen.
# Idempotent and quiet when everything is present.
set -euo pipefail

packages=(
  cmake g++ make
  libtorch-dev libopenblas0-pthread
  libcli11-dev nlohmann-json3-dev libspdlog-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libgloo-dev
  gnuplot-nox
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "lengen setup: missing packages: ${missing[*]}" >&2
  echo "run: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "lengen setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
