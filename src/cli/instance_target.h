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

// `COMMAND instance [NAME]`, the upstream CLI's spelling (`flux-operator
// get instance flux -n flux-system`), so that its scripts port over: the
// same command, on the instance in -n. NAME, required when `name_required`,
// can only be flux, the one name the FluxInstance CRD allows.
void add_upstream_spelling(CLI::App& command, bool name_required);

// The instance's key: the file's name and namespace, else flux in -n
// (flux-system by default).
kube::ObjectKey target_key(const InstanceTarget& target);

}  // namespace fluxop::cli
