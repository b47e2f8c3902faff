#include "cli/cluster_flags.h"

namespace fluxop::cli {

void add_cluster_flags(CLI::App& command, ClusterFlags& flags, bool writes) {
  command
      .add_option("--kubeconfig", flags.kubeconfig,
                  "The kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
      ->option_text("FILE");
  command
      .add_option("--context", flags.context, "The kubeconfig context (default: its current one)")
      ->option_text("NAME");
  command.add_flag("--insecure-skip-tls-verify", flags.insecure_skip_tls_verify,
                   "Do not verify the API server's certificate (insecure)");
  add_request_timeout_flag(command, flags.request_timeout);
  if (!writes) return;
  command
      .add_option("--field-manager", flags.field_manager,
                  flags.field_manager == "flux-operator"
                      ? "Field manager of the server-side apply (default: the in-cluster "
                        "operator's, so that it and fluxopctl can hand a cluster to each other)"
                      : "Field manager of the writes (default: the upstream CLI's)")
      ->option_text("NAME (default " + flags.field_manager + ")");
}

}  // namespace fluxop::cli
