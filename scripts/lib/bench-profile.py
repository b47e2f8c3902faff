"""Groups `perf script -F comm,ip,sym,dso` lines of fluxopctl into components.

Usage: perf script ... | bench-profile.py LABEL RUNS FREQUENCY
Prints one Markdown table row per component: CPU milliseconds per run (each
sample stands for 1/FREQUENCY s) and the share of the process's samples.
"""
import collections
import re
import sys

label, runs, frequency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

# Within fluxopctl's own code: the first namespace names the component.
OWN = [
    (r"fluxop::yaml::.*(BlockReader|read_block|parse|Decoder|decode|scalar|resolve)", "YAML parse"),
    (r"fluxop::yaml::.*(Emit|emit|string_style|plain|printable)", "YAML emit"),
    (r"fluxop::yaml::", "YAML nodes (build, copy, free)"),
    (r"fluxop::kustomize::", "kustomize transforms"),
    (r"fluxop::render::", "render"),
    (r"fluxop::oci::", "OCI: tar index, cache"),
    (r"CLI::", "command line"),
    # Libraries linked into the static binary, by their symbols.
    (r"isal_|decode_huffman|\.\.@|loop_block|byte_copy|decode_len_dist|setup_dynamic_header|"
     r"read_header_stateful", "inflate (ISA-L igzip)"),
    (r"\binflate|deflate", "zlib"),
    (r"sha256_block|SHA256", "SHA-256"),
]

# By shared object.
LIBRARIES = [
    ("ld-linux", "dynamic linking (ld.so)"),
    ("libz.so", "gunzip (zlib inflate)"),
    ("libcrypto", "OpenSSL (SHA-256, start-up)"),
    ("libssl", "OpenSSL (SHA-256, start-up)"),
    ("libc.so", "libc (malloc, memcpy, ...)"),
    ("libstdc++", "libstdc++"),
    ("libyaml-cpp", "YAML parse"),
    ("libre2", "RE2 (patch targets)"),
    ("libcurl", "HTTP (libcurl and its libraries)"),
    ("libnghttp2", "HTTP (libcurl and its libraries)"),
    ("libgnutls", "HTTP (libcurl and its libraries)"),
]

counts = collections.Counter()
for line in sys.stdin:
    fields = line.split(None, 1)
    if not fields or fields[0] != "fluxopctl":
        continue
    rest = fields[1] if len(fields) > 1 else ""
    dso = re.search(r"\(([^()]*)\)\s*$", rest)
    dso = dso.group(1) if dso else ""
    if "kernel" in dso:
        component = "kernel (exec, page faults, file and socket I/O)"
    elif dso.endswith("/fluxopctl"):
        component = next((name for pattern, name in OWN if re.search(pattern, rest)),
                         "other fluxopctl code")
    else:
        component = next((name for key, name in LIBRARIES if key in dso), "other libraries")
    counts[component] += 1

total = sum(counts.values())
if total == 0:
    print(f"| {label} | (no samples) | | |")
    sys.exit(0)
ms = lambda samples: samples * 1000.0 / frequency / runs
print(f"| {label} | all CPU | {ms(total):.1f} ms | 100% |")
for component, samples in counts.most_common():
    print(f"| {label} | {component} | {ms(samples):.1f} ms | {100.0 * samples / total:.0f}% |")
