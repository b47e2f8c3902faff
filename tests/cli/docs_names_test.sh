#!/usr/bin/env bash
# The names the documents cite exist: every path of the repository the README
# and docs/ name (src/..., tests/..., scripts/...), and every code name the
# design documents cite in backquotes (a function `name()`, a type
# `CamelCase`, a qualified `ns::name`) is defined or used in src/.
#
#   docs_names_test.sh ROOT
set -uo pipefail
root=$1
# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
work=$(mktemp -d)
on_exit cleanup
cleanup() { rm -rf "$work"; }
cd "$root" || abort "no $root"

documents=(README.md docs/*.md deploy/README.md)
design=(docs/architecture.md docs/contributing.md)

# Paths: a top folder of the repository, then a path (no placeholder such as
# <name>, no glob), as written in the documents; one after a "/" (an install
# PREFIX/share/...) is not the repository's.
paths_exist() {
  local document=$1 missing=
  while IFS= read -r path; do
    path=${path%.}
    # From the repository's root, or from the document's folder.
    [ -e "$path" ] || [ -e "$(dirname "$document")/$path" ] || missing+=" $path"
  done < <(grep -oE '(^|[^A-Za-z0-9_./-])(src|tests|scripts|docs|share|man|completions|deploy|examples|cmake)/[A-Za-z0-9_.+/-]*[A-Za-z0-9_/]' "$document" |
    sed -E 's/^[^a-z]//' | grep -vE '/(NAME|CASE|SUITE|TARGET)(/|$)' | sort -u)
  [ -z "$missing" ] || {
    echo "names paths that do not exist:$missing"
    return 1
  }
}

# Code names in backquotes: `name()`, `ns::name`, `CamelCase`.
code_names_exist() {
  local document=$1 missing= name word
  while IFS= read -r name; do
    for word in ${name//::/ }; do
      word=${word%()}
      [ -n "$word" ] || continue
      grep -rqw --include='*.cpp' --include='*.h' -- "$word" src || missing+=" $name"
    done
  done < <(grep -oE '`[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*(\(\))?`' "$document" | tr -d '`' |
    grep -E '\(\)$|::|^[A-Z][a-z]+[A-Z][A-Za-z]*$' | sort -u)
  [ -z "$missing" ] || {
    echo "cites code names src/ does not have:$missing"
    return 1
  }
}

# docs/architecture.md's table of the layers: one row per fluxop_layer of
# CMakeLists.txt, in its order, each with the layers it links (its DEPS).
layers_match() {
  python3 - CMakeLists.txt docs/architecture.md <<'PY'
import re, sys
declared = [(m.group(1), sorted((m.group(3) or "").split()))
            for m in re.finditer(r"^fluxop_layer\((\w+)( DEPS ([\w ]+))?\)", open(sys.argv[1]).read(), re.M)]
rows = []
for line in open(sys.argv[2]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 3 or not line.startswith("| ") or cells[0] in ("layer", "---", "`src/cli`"):
        continue
    # base, which every other layer links, is written where it is the only one.
    links = [] if cells[2] == "—" else sorted(l.strip() for l in cells[2].split(",") if l.strip() != "base")
    rows.append((cells[0].split(" ")[0], links))
if rows != declared:
    print("the table says", rows, "; CMakeLists.txt declares", declared)
    sys.exit(1)
PY
}

for document in "${documents[@]}"; do
  check "$document: paths" paths_exist "$document"
done
check "docs/architecture.md: the layers as CMakeLists.txt declares them" layers_match
for document in "${design[@]}"; do
  check "$document: code names" code_names_exist "$document"
done
summary
