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

// The instance's key: the file's name and namespace, else flux in -n
// (flux-system by default).
kube::ObjectKey target_key(const InstanceTarget& target);

}  // namespace fluxop::cli
