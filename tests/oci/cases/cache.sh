# The artifact cache against hostile input: a corrupted blob, tarballs with
# ../, absolute paths and links, parallel pulls, --prune, entries damaged
# after the pull, a record of a missing entry, a pull racing --prune.
# Sourced by tests/oci/oci_test.sh after its setup, in its order (a case may
# use what an earlier file left: the main registry's artifacts, the cache);
# the helpers are tests/oci/lib.sh's.
# shellcheck shell=bash disable=SC2154 # NAME_REGISTRY_* are set by registry_save NAME

t_corrupt_blob() {
  registry_use main
  local src=$work/corrupt-src layer blob hex listing_before
  cp -r "$mini" "$src" && head -c 64 /dev/urandom | base64 >"$src/NOTICE"
  registry_push_artifact corrupt:v1 "$src" flux flux-images NOTICE >/dev/null ||
    { because "curl push failed"; return 1; }
  layer=$(registry_layer_digest corrupt:v1) || { because "no layer digest"; return 1; }
  blob=$(registry_blob_path "$layer")
  [ -f "$blob" ] || { because "no blob file $blob"; return 1; }
  # Same size, different bytes in the middle.
  python3 - "$blob" <<'PY' || { because "could not corrupt $blob"; return 1; }
import sys
with open(sys.argv[1], "r+b") as f:
    data = bytearray(f.read())
    middle = len(data) // 2
    for i in range(middle, min(middle + 16, len(data))):
        data[i] ^= 0xFF
    f.seek(0); f.write(data)
PY
  hex=${layer#sha256:}
  fresh_cache
  listing_before=$(cache_listing)
  fx pull "oci://$main/corrupt:v1"
  one_line_error "pull of a corrupted blob" "$hex" || return 1
  [ "$(cache_listing)" = "$listing_before" ] ||
    { because "the cache changed: $(cache_listing | head -3 | tr '\n' ' ')"; return 1; }
  fx build "$instance" --distribution-artifact "oci://$main/corrupt:v1"
  one_line_error "build of a corrupted blob" "$hex" || return 1
  [ "$(cache_listing)" = "$listing_before" ] || because "the cache changed after the build"
}

# make_evil KIND FILE: a tar+gzip of the mini distribution with one bad entry
# in the middle (after flux/, before flux-images/); prints the entry to look
# for in the error.
make_evil() {
  python3 - "$1" "$2" "$mini" "$work/outside" <<'PY'
import io, sys, tarfile
kind, out, mini, outside = sys.argv[1:]
def info(name, **kw):
    t = tarfile.TarInfo(name)
    t.mtime = 0
    t.mode = kw.pop("mode", 0o644)
    for k, v in kw.items():
        setattr(t, k, v)
    return t
with tarfile.open(out, "w:gz", format=tarfile.GNU_FORMAT) as tar:
    tar.add(mini + "/flux", arcname="flux")
    payload = b"written by a malicious artifact\n"
    if kind == "dotdot":
        name = "flux/" + "../" * 40 + outside.lstrip("/") + "/escape-dotdot"
        tar.addfile(info(name, size=len(payload)), io.BytesIO(payload))
        shown = "escape-dotdot"
    elif kind == "absolute":
        name = outside + "/escape-absolute"
        t = info(name, size=len(payload))
        t.name = name  # keep the leading slash
        tar.addfile(t, io.BytesIO(payload))
        shown = "escape-absolute"
    elif kind == "symlink":
        tar.addfile(info("flux/evil-symlink", type=tarfile.SYMTYPE, linkname=outside, mode=0o777))
        tar.addfile(info("flux/evil-symlink/escape-symlink", size=len(payload)), io.BytesIO(payload))
        shown = "evil-symlink"
    elif kind == "hardlink":
        tar.addfile(info("flux/evil-hardlink", type=tarfile.LNKTYPE, linkname=outside + "/target"))
        shown = "evil-hardlink"
    tar.add(mini + "/flux-images", arcname="flux-images")
print(shown)
PY
}

t_evil_tar() {
  local kind=$1 shown listing_before
  registry_use main
  shown=$(make_evil "$kind" "$work/evil-$kind.tgz") || { because "python3 tarfile failed"; return 1; }
  registry_push_layer "evil-$kind:v1" "$work/evil-$kind.tgz" >/dev/null || { because "curl push failed"; return 1; }
  fresh_cache
  listing_before=$(cache_listing)
  fx pull "oci://$main/evil-$kind:v1"
  one_line_error "pull of a tarball with a $kind entry" "$shown" || return 1
  local escaped
  escaped=$(find "$work/outside" "$work" -maxdepth 1 -name 'escape-*' 2>/dev/null | head -1)
  [ -z "$escaped" ] || { because "written outside the cache: $escaped"; return 1; }
  [ "$(cat "$work/outside/target")" = "outside" ] || { because "$work/outside/target was changed"; return 1; }
  [ "$(cache_listing)" = "$listing_before" ] ||
    because "the cache changed: $(cache_listing | head -3 | tr '\n' ' ')"
}
echo outside >"$work/outside/target"

t_parallel() {
  fresh_cache
  timeout -k 5 "$cmd_timeout" "$bin" pull "oci://$main/full:v1" -o json >"$work/p1.out" 2>"$work/p1.err" &
  local p1=$!
  timeout -k 5 "$cmd_timeout" "$bin" pull "oci://$main/full:v1" -o json >"$work/p2.out" 2>"$work/p2.err" &
  local p2=$! s1 s2
  wait $p1; s1=$?
  wait $p2; s2=$?
  cat "$work/p1.err" "$work/p2.err" >"$work/err"
  [ $s1 -eq 0 ] && [ $s2 -eq 0 ] || { because "exit statuses $s1 and $s2"; return 1; }
  [ "$(json_field "$work/p1.out" digest)" = "$full_digest" ] &&
    [ "$(json_field "$work/p2.out" digest)" = "$full_digest" ] ||
    { because "the pulls' digests are not $full_digest"; return 1; }
  local n
  n=$(cache_entries) || { because "$n"; return 1; }
  [ "$n" = 1 ] || { because "pull --list shows $n entries (want 1)"; return 1; }
  n=$(find "$(cache_root)" -name manifest.json | wc -l)
  [ "$n" -eq 1 ] || because "$n manifest.json files in the cache (want 1)"
}

t_prune() {
  registry_use main
  fresh_cache
  registry_push_artifact moving:v1 "$mini" flux flux-images >/dev/null || { because "curl push failed"; return 1; }
  fx pull "oci://$main/moving:v1"
  succeeded "first pull" || return 1
  # The tag moves to other content.
  local src=$work/moving-src
  cp -r "$mini" "$src" && echo moved >"$src/NOTICE"
  registry_push_artifact moving:v1 "$src" flux flux-images NOTICE >/dev/null || { because "curl push failed"; return 1; }
  fx pull "oci://$main/moving:v1"
  succeeded "second pull" || return 1
  local n
  n=$(cache_entries) || { because "$n"; return 1; }
  [ "$n" = 2 ] || { because "pull --list shows $n entries after the tag moved (want 2)"; return 1; }
  fx pull --prune
  succeeded "pull --prune" || return 1
  n=$(cache_entries) || { because "$n"; return 1; }
  [ "$n" = 1 ] || because "pull --list shows $n entries after --prune (want 1)"
}

# whole_entries: every entry under sha256/ is complete (manifest.json,
# layer, layer.index) and nothing is left under tmp/.
whole_entries() {
  local dir entry
  dir=$(cache_root)
  for entry in "$dir"/sha256/*; do
    [ -e "$entry" ] || continue
    [ -f "$entry/manifest.json" ] && [ -f "$entry/layer" ] && [ -f "$entry/layer.index" ] ||
      { because "half an entry: $entry has $(ls "$entry" | tr '\n' ' ')"; return 1; }
  done
  [ -z "$(ls -A "$dir/tmp" 2>/dev/null)" ] || because "leftovers under tmp/: $(ls "$dir/tmp" | tr '\n' ' ')"
}

# damage HOW ENTRY: changes a pulled entry as a disk error, a stray editor or a
# half-finished copy would.
damage() {
  local how=$1 entry=$2 file
  file=$entry/layer
  chmod -R u+w "$entry"
  flip() { # one byte flipped, same size: only a digest sees it
    python3 -c 'import sys
p = sys.argv[1]; d = bytearray(open(p, "rb").read()); d[len(d) // 2] ^= 1; open(p, "wb").write(d)' "$1"
  }
  case $how in
    change) flip "$file" ;;
    truncate) truncate -s $(($(stat -c %s "$file") / 2)) "$file" ;;
    remove) rm "$file" ;;
    index) flip "$entry/layer.index" ;;
    kept) flip "$entry/layer.kept" ;;
    manifest) truncate -s 10 "$entry/manifest.json" ;;
    garbage) rm -rf "${entry:?}"/* && echo garbage | tee "$entry/manifest.json" >"$entry/layer.index" ;;
  esac
}

# t_damaged HOW tag|digest: a build over an entry damaged after the pull
# notices it, pulls the artifact again and renders the oracles' bytes.
t_damaged() {
  local how=$1 ref=oci://$main/full:v1 entry before
  [ "$2" = tag ] || ref=oci://$main/full@$full_digest
  fresh_cache
  fx pull "$ref"
  succeeded "pull" || return 1
  entry=$(cache_root)/sha256/${full_digest#sha256:}
  [ -f "$entry/layer" ] || { because "no entry $entry"; return 1; }
  damage "$how" "$entry"
  before=$(blob_gets)
  fx build "$instance" --distribution-artifact "$ref"
  succeeded "build over the damaged entry" || return 1
  same_as_oracles "build over the damaged entry" full || return 1
  if [ "$how" = index ]; then
    # An index that does not unseal is made again from the layer, which
    # holds its digest (issue 41): nothing to fetch.
    [ "$(blob_gets)" -eq "$before" ] || { because "the artifact was fetched again"; return 1; }
  elif [ "$how" = change ]; then
    # The default release is read from the files the pull kept, checked by
    # their own digest: not a byte of the layer is read, so nothing to fetch.
    [ "$(blob_gets)" -eq "$before" ] ||
      { because "fetched again for a build that reads nothing of the layer"; return 1; }
    # An older release is read from the layer: its first read hashes it,
    # finds the damage, removes the entry, and the build pulls it again.
    fx build "$older_instance" --distribution-artifact "$ref"
    succeeded "build of an older release over the damaged layer" || return 1
    same_as "build of an older release over the damaged layer vs fluxopctl build DIR" \
      "$work/ref-older.out" || return 1
    grep -q "damaged" "$work/err" || { because "no word of the damaged layer on stderr"; return 1; }
    [ "$(blob_gets)" -gt "$before" ] || { because "the artifact was not fetched again"; return 1; }
  else
    grep -q "damaged" "$work/err" || { because "no word of the damaged entry on stderr"; return 1; }
    [ "$(blob_gets)" -gt "$before" ] || { because "the artifact was not fetched again"; return 1; }
  fi
  whole_entries || return 1
  # Whole again: the next build uses it as it is.
  fx build "$instance" --distribution-artifact "$ref" --offline
  succeeded "build --offline after the repair" || return 1
  same_as_oracles "build --offline after the repair" full || return 1
  ! grep -q "damaged" "$work/err" || because "still damaged after the repair: $(first_err)"
}

t_damaged_offline() {
  fresh_cache
  fx pull "oci://$main/full:v1"
  succeeded "pull" || return 1
  damage truncate "$(cache_root)/sha256/${full_digest#sha256:}"
  fx build "$instance" --distribution-artifact "oci://$main/full:v1" --offline
  one_line_error "build --offline of a damaged entry" 'damaged' || return 1
  fx pull --offline "oci://$main/full@$full_digest"
  one_line_error "pull --offline by digest of a damaged entry" 'damaged'
}

t_missing_entry() {
  fresh_cache
  fx pull "oci://$main/full:v1"
  succeeded "pull" || return 1
  rm -rf "$(cache_root)/sha256/${full_digest#sha256:}"
  fx pull --offline "oci://$main/full:v1"
  one_line_error "pull --offline of a tag whose entry is gone" 'not in the cache' || return 1
  fx build "$instance" --distribution-artifact "oci://$main/full:v1"
  succeeded "build of a tag whose entry is gone" || return 1
  same_as_oracles "build of a tag whose entry is gone" full
}

# A pull and a build, with `pull --prune --older-than 0s` run over and over
# while they last (every record is old then: only a pin keeps an entry), a
# few rounds. The pull and the build must succeed, the build with the
# oracles' bytes (its entry, pinned, is never deleted under it); afterwards
# the cache holds whole entries only, and a kept one verifies offline.
t_prune_race() {
  local i b q prunes build_status pull_status n
  fresh_cache
  for i in 1 2 3 4; do
    timeout -k 5 "$cmd_timeout" "$bin" build "$instance" --distribution-artifact "oci://$main/full:v1" \
      >"$work/race-build.out" 2>"$work/race-build.err" &
    b=$!
    timeout -k 5 "$cmd_timeout" "$bin" pull "oci://$main/full:v1" -o json \
      >"$work/race-pull.out" 2>"$work/race-pull.err" &
    q=$!
    # Bounded: the build and the pull end within their timeouts.
    prunes=0
    while kill -0 $b 2>/dev/null || kill -0 $q 2>/dev/null; do
      fx pull --prune --older-than 0s
      succeeded "round $i: pull --prune" || { wait $b $q; return 1; }
      prunes=$((prunes + 1))
    done
    wait $b; build_status=$?
    wait $q; pull_status=$?
    cat "$work"/race-*.err >"$work/err"
    [ $prunes -gt 0 ] || { because "round $i: no prune ran during the build"; return 1; }
    [ $pull_status -eq 0 ] || { because "round $i: pull: exit $pull_status"; return 1; }
    [ "$(json_field "$work/race-pull.out" digest)" = "$full_digest" ] ||
      { because "round $i: the pull's digest is not $full_digest"; return 1; }
    [ $build_status -eq 0 ] || { because "round $i: build: exit $build_status ($prunes prunes)"; return 1; }
    cp "$work/race-build.out" "$work/out"
    same_as_oracles "round $i: build" full || return 1
    whole_entries || { REASON="round $i: $REASON"; return 1; }
    n=$(cache_entries) || { because "round $i: $n"; return 1; }
    case $n in
      0) ;;
      1) fx pull --offline "oci://$main/full@$full_digest"
        succeeded "round $i: the kept entry, offline" || return 1 ;;
      *) because "round $i: $n entries"; return 1 ;;
    esac
  done
}

tcase "corrupted blob: refused by digest, cache unchanged" t_corrupt_blob
tcase "tarball: a ../ entry is refused" t_evil_tar dotdot
tcase "tarball: an absolute path is refused" t_evil_tar absolute
tcase "tarball: a symlink is refused" t_evil_tar symlink
tcase "tarball: a hard link is refused" t_evil_tar hardlink
tcase "parallel: two pulls into an empty cache, one entry" t_parallel
tcase "pull --prune drops an entry no tag points to" t_prune
tcase "damaged cache entry (a byte of the layer changed): found by the first read of the layer, pulled again, never built from" t_damaged change tag
tcase "damaged cache entry (the layer truncated): pulled again, never built from" t_damaged truncate tag
tcase "damaged cache entry (the layer removed): pulled again, never built from" t_damaged remove digest
tcase "damaged cache entry (a byte of the index changed): indexed again from the verified layer" t_damaged index tag
tcase "damaged cache entry (a byte of the files the pull kept changed): pulled again, never built from" t_damaged kept tag
tcase "damaged cache entry (manifest truncated): pulled again, never built from" t_damaged manifest digest
tcase "damaged cache entry (garbage in its place): pulled again, never built from" t_damaged garbage tag
tcase "damaged cache entry: --offline refuses it" t_damaged_offline
tcase "a record of a missing entry: --offline fails clearly, online pulls again" t_missing_entry
tcase "pull racing pull --prune: whole entries, none in use deleted" t_prune_race
