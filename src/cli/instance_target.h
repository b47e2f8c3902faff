// Which FluxInstance a cluster command acts on (delete, get, wait, reconcile,
// suspend, resume): the one FILE describes, or `flux` in -n NAMESPACE, as
// the operator allows one instance per cluster, named flux.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/kube/client.h"

namespace fluxop::cli {

struct InstanceTarget {
  std::string file;
  std::string filename;  // -f
  std::string ns;        // -n
};

// FILE, -f/--filename, -n/--namespace (one of FILE and -n).
void add_instance_target(CLI::App& command, InstanceTarget& target);

// Whether the upstream spelling `COMMAND instance` takes the instance's
// name: `build instance -f FILE` takes none.
enum class UpstreamName { none, optional, required };

// `COMMAND instance [NAME]`, the upstream CLI's spelling (`flux-operator
// get instance flux -n flux-system`), so that its scripts port over: the
// same command, on the instance in -n. NAME can only be flux, the one name
// the FluxInstance CRD allows. Returns the subcommand.
CLI::App* add_upstream_spelling(CLI::App& command, UpstreamName name);

// `COMMAND WORD ...`, an upstream spelling fluxopctl does not run
// (`get resourceset`, `reconcile resource K/N`): out of the help, it takes
// any arguments and is a usage error saying `why` and what to run instead.
// `words`: the names and aliases, comma-separated.
void add_upstream_refusal(CLI::App& command, const std::string& words, const std::string& why);

// The upstream kinds fluxopctl leaves to flux-operator (ResourceSet,
// ResourceSetInputProvider), refused under `command` as upstream spells them.
void add_operator_kind_refusals(CLI::App& command);

// The instance's key: the file's name and namespace, else flux in -n
// (flux-system by default).
kube::ObjectKey target_key(const InstanceTarget& target);

}  // namespace fluxop::cli
