#!/usr/bin/env bash
# Every subcommand fluxopctl's --help lists, and every long flag of each, is
# documented in the man page and offered by the bash, zsh and fish completions,
# each in the form that document uses for it: the bare word "offline" in prose
# does not document --offline.
set -uo pipefail
bin=$1
root=$2
# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
man=$root/man/fluxopctl.1
bash_completion=$root/completions/fluxopctl.bash
zsh_completion=$root/completions/_fluxopctl
fish_completion=$root/completions/fluxopctl.fish
declare -A docs=([man]=$man [bash]=$bash_completion [zsh]=$zsh_completion [fish]=$fish_completion)

# Lines of the man page that head a .TP item in SECTION (COMMANDS, OPTIONS).
man_items() { awk -v s="$1" '/^\.SH / {section = $2} tp && section == s {print} {tp = ($0 == ".TP")}' "$man"; }

# The arm of a completion's `case` on the subcommand: from "    COMMAND)" to
# its ";;". zsh arms use shared arrays ($instance_flags, $cluster_flags, ...),
# which may name others: their definitions are added when the arm names them.
case_arm() {
  local doc=$1 command=$2 arm
  arm=$(awk -v c="$command" '$0 ~ "^    " c "\\)" {on = 1} on {print} on && /;;/ {exit}' "$doc")
  printf '%s\n' "$arm"
  # The arrays it names, and those these name in turn.
  local array arrays seen=
  arrays=$(grep -oE '\$[a-z_]+_flags' <<<"$arm" | tr -d '$' | sort -u)
  while [ -n "$arrays" ]; do
    local next=
    for array in $arrays; do
      [[ " $seen " == *" $array "* ]] && continue
      seen+=" $array"
      local definition
      definition=$(awk -v a="$array" '$0 ~ "^  " a "=\\(" {on = 1} on {print} on && /^  \)/ {exit}' "$doc")
      printf '%s\n' "$definition"
      next+=" $(grep -oE '\$[a-z_]+_flags' <<<"$definition" | tr -d '$' | sort -u | tr '\n' ' ')"
    done
    arrays=$next
    [ -n "${arrays// /}" ] || arrays=
  done
}

# The fish completions whose condition is __fish_seen_subcommand_from COMMAND.
fish_lines() {
  grep -E "\"__fish_seen_subcommand_from ([a-z ]* )?$1( [a-z ]*)?\"" "$fish_completion"
}

# COMMAND is offered or documented as a subcommand in FORMAT.
has_command() {
  local format=$1 command=$2
  case $format in
    man) man_items COMMANDS | grep -E "^\\.BR? \"?$command( |\"|\$)" >/dev/null ;;
    bash) grep -qE "^    $command\\)" "$bash_completion" &&
      grep -qE "compgen -W \"([^\"]* )?$command( |\")" "$bash_completion" ;;
    zsh) grep -qE "^    '$command:" "$zsh_completion" && grep -qE "^    $command\\)" "$zsh_completion" ;;
    fish) grep -qE "\"not __fish_seen_subcommand_from \\\$commands\" -a $command " "$fish_completion" ;;
  esac
}

# FLAG (a long flag, without its dashes) of COMMAND in FORMAT. (grep reads
# all its input: grep -q would close the pipe early, a failure under pipefail.)
has_flag() {
  local format=$1 command=$2 flag=$3
  case $format in
    # an item of OPTIONS; groff escapes each dash (\-\-no\-wait)
    man) man_items OPTIONS | grep -E -- "(^|[^a-z\\\\-])(\\\\-\\\\-${flag//-/\\\\-}|--$flag)([^a-z\\\\-]|\\\\[^-]|\$)" >/dev/null ;;
    # a word of the subcommand's compgen -W list
    bash) case_arm "$bash_completion" "$command" | grep -E -- "(^|[ \"])--$flag([ \"]|\$)" >/dev/null ;;
    # an _arguments spec: '--offline[...]', '--dry-run=[...]', {-o,--output}'[...]'
    zsh) case_arm "$zsh_completion" "$command" | grep -E -- "(^|['\"{,)*])--$flag(=?\\[|\\})" >/dev/null ;;
    fish) fish_lines "$command" | grep -E -- " -l $flag( |\$)" >/dev/null ;;
  esac
}

documented() {  # documented WHAT TEST FORMAT ARGS...
  local what=$1 format=$3
  shift
  if "$@"; then
    pass "$format: $what"
  else
    fail "$format: ${docs[$format]##*/} does not document $what"
  fi
}

commands=$(timeout 30 "$bin" --help | awk '/^Subcommands:/ {on=1; next} on && NF {print $1}')
[ -n "$commands" ] || abort "no subcommands in --help"
for command in $commands; do
  # (The examples at the end use flags of the subcommands: tests/cli/examples_test.sh runs them.)
  flags=$(timeout 30 "$bin" "$command" --help | sed '/^Examples:/,$d' | grep -oE -- '--[a-z][a-z-]+' |
    sort -u | grep -v -- '--help')
  for format in man bash zsh fish; do
    documented "the subcommand $command" has_command "$format" "$command"
    for flag in $flags; do
      documented "$flag of $command" has_flag "$format" "$command" "${flag#--}"
    done
  done
done
summary
