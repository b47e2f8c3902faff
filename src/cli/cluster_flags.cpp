#include "cli/cluster_flags.h"

#include "cli/duration_check.h"
#include "core/error.h"

namespace fluxop::cli {

void add_global_cluster_flags(CLI::App& app) {
  app.add_option("--kubeconfig",
                 "The kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
      ->option_text("FILE");
  app.add_option("--context,--kube-context",
                 "The kubeconfig context (default: its current one); repeatable for get, check, "
                 "diff, apply, wait, report, suspend and resume, which then run on each")
      ->option_text("NAME")
      ->take_all()
      ->allow_extra_args(false);
  app.add_option("-n,--namespace",
                 "The namespace, for the commands that take one (see each command's help); "
                 "ignored by the others")
      ->option_text("NAMESPACE");
  app.add_option("--as,--kube-as", "Impersonate this user (Impersonate-User), as kubectl --as")
      ->option_text("USER");
  app.add_option("--as-group,--kube-as-group",
                 "Impersonate this group, repeatable (Impersonate-Group), as kubectl --as-group")
      ->option_text("GROUP")
      ->take_all()
      ->allow_extra_args(false);
  add_request_timeout_flag(app);
  // The upstream CLI's connection flags fluxopctl leaves to the kubeconfig:
  // refused, out of the help.
  for (const char* flag :
       {"--kube-as-uid", "--kube-token", "--kube-server", "--kube-tls-server-name",
        "--kube-client-certificate", "--kube-client-key", "--kube-certificate-authority"}) {
    app.add_option_function<std::string>(
           flag,
           [flag](const std::string&) {
             throw CLI::ValidationError(flag,
                                        "the upstream CLI's, not fluxopctl's: it goes in the "
                                        "kubeconfig (--kubeconfig FILE)");
           })
        ->group("");
  }
  // The upstream CLI's global --timeout: the commands that wait (apply,
  // delete, wait, reconcile, resume) define their own, which takes it
  // wherever it is given; the others end within --request-timeout per
  // request and accept it, so that an upstream script's line runs.
  app.add_option("--timeout",
                 "How long a command that waits may wait (its own --timeout); accepted and "
                 "unused by the others")
      ->check(duration_check("5m"))
      ->option_text("DURATION");
}

CLI::Option& global_option(CLI::App& command, const std::string& name) {
  CLI::App* app = &command;
  while (app->get_parent() != nullptr) app = app->get_parent();
  return *app->get_option(name);
}

void add_cluster_flags(CLI::App& command, ClusterFlags& flags, bool writes) {
  global_option(command, "--kubeconfig").each([&flags](const std::string& value) {
    flags.kubeconfig = value;
  });
  global_option(command, "--context").each([&flags](const std::string& value) {
    flags.context = value;
    flags.contexts.push_back(value);
  });
  global_option(command, "--as").each([&flags](const std::string& value) {
    flags.impersonate.user = value;
  });
  global_option(command, "--as-group").each([&flags](const std::string& value) {
    flags.impersonate.groups.push_back(value);
  });
  add_request_timeout_flag(command, flags.request_timeout);
  command.add_flag("--insecure-skip-tls-verify", flags.insecure_skip_tls_verify,
                   "Do not verify the API server's certificate (insecure)");
  // The upstream CLI's spelling, out of the help (README: the upstream lines).
  command.add_flag("--kube-insecure-skip-tls-verify", flags.insecure_skip_tls_verify)->group("");
  if (!writes) return;
  command
      .add_option("--field-manager", flags.field_manager,
                  flags.field_manager == "flux-operator"
                      ? "Field manager of the server-side apply (default: the in-cluster "
                        "operator's, so that it and fluxopctl can hand a cluster to each other)"
                      : "Field manager of the writes (default: the upstream CLI's)")
      ->option_text("NAME (default " + flags.field_manager + ")");
}

ConnectedCluster connect(const ClusterFlags& flags, bool dry_run,
                         std::optional<std::chrono::steady_clock::time_point> retry_until,
                         std::function<bool()> cancelled) {
  if (flags.contexts.size() > 1) {
    throw Error("--context: given " + std::to_string(flags.contexts.size()) +
                " times; only get, check, diff, apply, wait, report, suspend and resume run on "
                "several contexts");
  }
  return kube::connect(flags, dry_run, retry_until, std::move(cancelled));
}

}  // namespace fluxop::cli
