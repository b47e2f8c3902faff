#!/usr/bin/env bash
# Every subcommand fluxopctl's --help lists, and every long flag of each, is
# documented in the man page and offered by the bash, zsh and fish completions.
set -uo pipefail
bin=$1
root=$2
failed=0 passed=0
docs=("$root/man/fluxopctl.1" "$root/completions/fluxopctl.bash" "$root/completions/_fluxopctl"
  "$root/completions/fluxopctl.fish")

commands=$("$bin" --help | awk '/^Subcommands:/ {on=1; next} on && NF {print $1}')
[ -n "$commands" ] || { echo "FAIL no subcommands in --help"; exit 1; }
for command in $commands; do
  flags=$("$bin" "$command" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u | grep -v -- '--help')
  for doc in "${docs[@]}"; do
    for word in "$command" $flags; do
      name=${word#--}
      # man pages escape dashes as \-
      if grep -qE -- "(^|[^a-z-])(\\\\-\\\\-|--|-l )?${name//-/(\\\\)?-}([^a-z-]|$)" "$doc"; then
        passed=$((passed + 1))
      else
        failed=$((failed + 1))
        echo "FAIL $(basename "$doc") does not mention '$word' (of $command)"
      fi
    done
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
