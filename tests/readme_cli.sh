#!/usr/bin/env bash
# Runs README.md's "The CLI at a glance" block top to bottom in a fresh folder, as a new user
# would, with train.steps=20 in place of 200 so that it takes seconds: every command must succeed.
# Usage: readme_cli.sh LENGEN_BINARY SOURCE_DIR
set -euo pipefail
binary=$1
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
ln -s "$binary" "$work/bin/lengen"
ln -s "$root/configs" "$work/configs"
# The first fenced block after the heading.
awk '/^## The CLI at a glance/ {inside = 1; next}
     inside && /^```/ {if (open) exit; open = 1; next}
     inside && open' "$root/README.md" | sed 's/train\.steps=200/train.steps=20/g' > "$work/cli.sh"
if [ ! -s "$work/cli.sh" ]; then
  echo "README.md has no command block under 'The CLI at a glance'" >&2
  exit 1
fi
cd "$work"
PATH="$work/bin:$PATH" bash -euo pipefail -x cli.sh > cli.log 2>&1 || {
  tail -n 40 cli.log
  echo "a command of README.md's CLI block failed (above)" >&2
  exit 1
}
echo "README.md's CLI block ran: $(grep -c '^+ lengen' cli.log) commands"
