// `create secret KIND NAME`: the Secrets a FluxInstance names, made as the
// upstream CLI's `create secret` makes them (the same flags, the same
// object), printed with --export or applied. Secret values come from files
// or stdin (the upstream --password is accepted too) and are never printed
// but in the exported object.
#include <iostream>
#include <map>
#include <memory>

#include "cli/change_output.h"
#include "cli/cluster_flags.h"
#include "cli/commands.h"
#include "cli/notice.h"
#include "cli/output.h"
#include "core/error.h"
#include "core/file.h"
#include "core/names.h"
#include "core/reconcile/instance_requests.h"
#include "core/reconcile/secrets.h"

namespace fluxop::cli {

namespace {

using reconcile::SecretKind;

struct CreateSecretOptions {
  SecretKind kind = SecretKind::basic_auth;
  std::string name;
  std::string ns = "flux-system";
  std::vector<std::string> labels, annotations;
  bool immutable = false;
  bool exported = false;
  std::string dry_run = "none";
  ClusterFlags cluster;
  // basic-auth, registry, proxy; ssh (the key's passphrase)
  std::string username, password, server, address;
  bool password_stdin = false;
  // ssh
  std::string private_key_file, public_key_file, known_hosts_file;
  // githubapp
  std::string app_id, installation_owner, installation_id, app_private_key_file, app_base_url;
  // tls
  std::string tls_crt_file, tls_key_file, ca_crt_file;
  // sops
  std::vector<std::string> age_key_files, gpg_key_files;
  bool age_key_stdin = false, gpg_key_stdin = false;
};

// A file's bytes; an error names the flag and the file, never the content.
std::string read_value_file(const std::string& flag, const std::string& path) {
  try {
    return read_input_file(path, /*pipes=*/true, std::size_t{1} << 20);
  } catch (const Error& e) {
    throw CommandError(flag + ": " + e.what(), 1);
  }
}

// Standard input as the upstream CLI reads a password: its first line,
// without the line break (a password may hold spaces here).
std::string stdin_line(const std::string& flag) {
  std::string text = read_input_stream(std::cin, flag + " (stdin)", std::size_t{1} << 20);
  text = text.substr(0, text.find('\n'));
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

// Standard input as the upstream CLI reads a key: its lines joined by "\n",
// without a final line break.
std::string stdin_lines(const std::string& flag) {
  std::string text = read_input_stream(std::cin, flag + " (stdin)", std::size_t{1} << 20);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  std::string lines;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] == '\n')) continue;
    lines += text[i];
  }
  return lines;
}

[[noreturn]] void usage(const std::string& message) { throw CommandError(message, kExitUsage); }

void require(const std::string& value, const std::string& flag, const std::string& also = "") {
  if (value.empty()) usage(flag + " is required" + also);
}

// --label and --annotation: KEY=VALUE, repeatable and comma-separated.
std::map<std::string, std::string> metadata(const std::vector<std::string>& items,
                                            const std::string& flag, const NameRule& key_rule) {
  std::map<std::string, std::string> parsed;
  for (const std::string& item : items) {
    std::size_t equals = item.find('=');
    if (equals == std::string::npos || item.find('=', equals + 1) != std::string::npos)
      usage(flag + ": " + quote(item) + " is not KEY=VALUE");
    std::string key = item.substr(0, equals), value = item.substr(equals + 1);
    if (!key_rule.valid(key))
      usage(flag + ": " + quote(key) + " " + std::string(key_rule.requirement));
    if (!is_label_value(value))
      usage(flag + ": the value of " + key + " " + std::string(kLabelValue.requirement));
    parsed[key] = value;
  }
  return parsed;
}

std::string password_of(const CreateSecretOptions& options) {
  if (!options.password_stdin) return options.password;
  if (!options.password.empty()) usage("--password and --password-stdin: give one");
  return stdin_line("--password-stdin");
}

// What the flags of the Secret's kind give: each required one checked, the
// files and stdin read; reconcile::secret_data lays them out.
reconcile::SecretInput secret_input(const CreateSecretOptions& options) {
  reconcile::SecretInput input;
  switch (options.kind) {
    case SecretKind::basic_auth:
    case SecretKind::registry:
      if (options.kind == SecretKind::registry) require(options.server, "--server");
      require(options.username, "--username");
      input.server = options.server;
      input.username = options.username;
      input.password = password_of(options);
      require(input.password, "--password", " (or --password-stdin)");
      break;
    case SecretKind::proxy:
      require(options.address, "--address");
      if (options.address.find("://") == std::string::npos)
        usage("--address: " + quote(options.address) + " is not a URL such as http://proxy:3128");
      input.address = options.address;
      input.username = options.username;
      input.password = password_of(options);
      break;
    case SecretKind::ssh:
      require(options.private_key_file, "--private-key-file");
      require(options.known_hosts_file, "--knownhosts-file");
      input.identity = read_value_file("--private-key-file", options.private_key_file);
      input.known_hosts = read_value_file("--knownhosts-file", options.known_hosts_file);
      if (!options.public_key_file.empty())
        input.identity_pub = read_value_file("--public-key-file", options.public_key_file);
      input.password = password_of(options);
      break;
    case SecretKind::githubapp:
      require(options.app_id, "--app-id");
      require(options.app_private_key_file, "--app-private-key-file");
      if (options.installation_owner.empty() == options.installation_id.empty())
        usage("--app-installation-owner and --app-installation-id: give exactly one");
      input.app_id = options.app_id;
      input.app_private_key =
          read_value_file("--app-private-key-file", options.app_private_key_file);
      input.installation_owner = options.installation_owner;
      input.installation_id = options.installation_id;
      input.app_base_url = options.app_base_url;
      break;
    case SecretKind::tls:
      if (options.tls_crt_file.empty() != options.tls_key_file.empty())
        usage("--tls-crt-file and --tls-key-file: give both or neither");
      if (options.tls_crt_file.empty() && options.ca_crt_file.empty())
        usage("--tls-crt-file and --tls-key-file, or --ca-crt-file, is required");
      if (!options.tls_crt_file.empty()) {
        input.tls_crt = read_value_file("--tls-crt-file", options.tls_crt_file);
        input.tls_key = read_value_file("--tls-key-file", options.tls_key_file);
      }
      if (!options.ca_crt_file.empty())
        input.ca_crt = read_value_file("--ca-crt-file", options.ca_crt_file);
      break;
    case SecretKind::sops:
      if (options.age_key_stdin && options.gpg_key_stdin)
        usage("--age-key-stdin and --gpg-key-stdin: stdin holds one key");
      for (const std::string& file : options.age_key_files)
        input.sops_keys.push_back({read_value_file("--age-key-file", file), true});
      for (const std::string& file : options.gpg_key_files)
        input.sops_keys.push_back({read_value_file("--gpg-key-file", file), false});
      if (options.age_key_stdin) input.sops_keys.push_back({stdin_lines("--age-key-stdin"), true});
      if (options.gpg_key_stdin) input.sops_keys.push_back({stdin_lines("--gpg-key-stdin"), false});
      if (input.sops_keys.empty())
        usage("--age-key-file, --gpg-key-file, --age-key-stdin or --gpg-key-stdin is required");
      for (const reconcile::SecretInput::SopsKey& key : input.sops_keys) {
        if (key.key.empty())
          throw CommandError(std::string(key.age ? "an Age" : "a GPG") + " key is empty", 1);
      }
      break;
  }
  return input;
}

// The Secret's keys and values; tls's refusal of a certificate and a key that are no
// pair names their flags.
std::map<std::string, std::string> secret_data(const CreateSecretOptions& options) {
  reconcile::SecretInput input = secret_input(options);
  try {
    return reconcile::secret_data(options.kind, input);
  } catch (const Error& e) {
    throw CommandError("--tls-crt-file, --tls-key-file: " + std::string(e.what()), 1);
  }
}

void run_create_secret(const CreateSecretOptions& options) {
  if (!is_dns_subdomain(options.name))
    usage("NAME: " + quote(options.name) + " " + std::string(kDnsSubdomain.requirement));
  if (!is_dns_label(options.ns))
    usage("--namespace: " + quote(options.ns) + " " + std::string(kDnsLabel.requirement));
  std::map<std::string, std::string> labels = metadata(options.labels, "--label", kLabelKey);
  std::map<std::string, std::string> annotations =
      metadata(options.annotations, "--annotation", kAnnotationKey);
  nlohmann::ordered_json secret = reconcile::secret_object(
      options.kind, options.name, options.ns, secret_data(options), labels, annotations);
  if (options.exported) {
    // As the upstream CLI prints it: one document after "---".
    if (options.immutable) secret["immutable"] = true;
    std::cout << "---\n" << render_document(secret, OutputFormat::Yaml);
    return;
  }
  bool dry_run = options.dry_run != "none";
  ConnectedCluster connected = connect(options.cluster, dry_run);
  std::string done = reconcile::apply_secret(*connected.cluster, secret, options.immutable);
  print_notice("Secret " + options.ns + "/" + options.name + " " + done +
               (dry_run ? " (server dry run)" : ""));
}

void add_common_flags(CLI::App& cmd, CreateSecretOptions& options) {
  cmd.add_option("NAME", options.name, "The Secret's name")->required()->option_text(" ");
  cmd.add_option("-n,--namespace", options.ns, "The Secret's namespace: the instance's")
      ->option_text("NAMESPACE (default flux-system)");
  cmd.add_option("--label", options.labels, "A label KEY=VALUE; repeatable or comma-separated")
      ->delimiter(',')
      ->option_text("KEY=VALUE");
  cmd.add_option("--annotation", options.annotations,
                 "An annotation KEY=VALUE; repeatable or comma-separated")
      ->delimiter(',')
      ->option_text("KEY=VALUE");
  cmd.add_flag("--immutable", options.immutable, "Make the Secret immutable");
  cmd.add_flag("--export", options.exported,
               "Print the Secret as YAML on stdout instead of applying it (it holds the values)");
  add_dry_run_flag(cmd, options.dry_run);
  add_cluster_flags(cmd, options.cluster);
}

// --password and --password-stdin, after --username unless `what` is an
// SSH key's passphrase.
void add_password_flags(CLI::App& cmd, CreateSecretOptions& options, const std::string& what,
                        bool username = true) {
  if (username) cmd.add_option("--username", options.username, "The username")->option_text("NAME");
  cmd.add_option("--password", options.password,
                 what + " (visible to other users of the machine: prefer --password-stdin)")
      ->option_text("PASSWORD");
  cmd.add_flag("--password-stdin", options.password_stdin,
               "Read the password from stdin's first line");
}

}  // namespace

void add_create_command(CLI::App& app) {
  auto* create = app.add_subcommand("create", "Create the Secrets a FluxInstance names");
  create->require_subcommand(1);
  auto* secret_command = create->add_subcommand(
      "secret",
      "Create a Secret as Flux reads it, as `flux-operator create secret` does: applied with "
      "server-side apply, or printed with --export");
  secret_command->require_subcommand(1);
  for (const reconcile::SecretKindInfo& info : reconcile::secret_kinds()) {
    auto options = std::make_shared<CreateSecretOptions>();
    options->kind = info.kind;
    options->cluster.field_manager = std::string(reconcile::kCliFieldManager);
    auto* cmd = secret_command->add_subcommand(std::string(info.name),
                                               "A Secret of " + std::string(info.use));
    add_common_flags(*cmd, *options);
    switch (info.kind) {
      case SecretKind::basic_auth:
        add_password_flags(*cmd, *options, "The password");
        cmd->footer(
            "Example:\n  echo \"$GITHUB_TOKEN\" | fluxopctl create secret basic-auth git-auth "
            "--username flux --password-stdin");
        break;
      case SecretKind::registry:
        cmd->add_option("--server", options->server, "The registry's host (ghcr.io)")
            ->option_text("HOST");
        add_password_flags(*cmd, *options, "The password or token");
        cmd->footer(
            "Example:\n  echo \"$TOKEN\" | fluxopctl create secret registry ghcr-auth --server "
            "ghcr.io --username flux --password-stdin --export > ghcr-auth.yaml");
        break;
      case SecretKind::proxy:
        cmd->add_option("--address", options->address, "The proxy's URL (http://proxy:3128)")
            ->option_text("URL");
        add_password_flags(*cmd, *options, "The password");
        break;
      case SecretKind::ssh:
        cmd->add_option("--private-key-file", options->private_key_file, "The SSH private key")
            ->option_text("FILE");
        cmd->add_option("--public-key-file", options->public_key_file, "The SSH public key")
            ->option_text("FILE");
        cmd->add_option("--knownhosts-file", options->known_hosts_file,
                        "The known_hosts of the Git server")
            ->option_text("FILE");
        add_password_flags(*cmd, *options, "The private key's passphrase", /*username=*/false);
        break;
      case SecretKind::githubapp:
        cmd->add_option("--app-id", options->app_id, "The GitHub App's ID")->option_text("ID");
        cmd->add_option("--app-installation-owner", options->installation_owner,
                        "The organization or user the App is installed for")
            ->option_text("OWNER");
        cmd->add_option("--app-installation-id", options->installation_id,
                        "The App installation's ID")
            ->option_text("ID");
        cmd->add_option("--app-private-key-file", options->app_private_key_file,
                        "The App's private key")
            ->option_text("FILE");
        cmd->add_option("--app-base-url", options->app_base_url,
                        "The GitHub Enterprise Server's API URL")
            ->option_text("URL");
        break;
      case SecretKind::tls:
        cmd->add_option("--tls-crt-file", options->tls_crt_file, "The client certificate (PEM)")
            ->option_text("FILE");
        cmd->add_option("--tls-key-file", options->tls_key_file, "Its private key (PEM)")
            ->option_text("FILE");
        cmd->add_option("--ca-crt-file", options->ca_crt_file, "The CA certificate (PEM)")
            ->option_text("FILE");
        break;
      case SecretKind::sops:
        cmd->add_option("--age-key-file", options->age_key_files, "An Age private key; repeatable")
            ->delimiter(',')
            ->option_text("FILE");
        cmd->add_option("--gpg-key-file", options->gpg_key_files, "A GPG private key; repeatable")
            ->delimiter(',')
            ->option_text("FILE");
        cmd->add_flag("--age-key-stdin", options->age_key_stdin, "Read an Age key from stdin");
        cmd->add_flag("--gpg-key-stdin", options->gpg_key_stdin, "Read a GPG key from stdin");
        break;
    }
    cmd->callback([options] { run_create_secret(*options); });
  }
}

}  // namespace fluxop::cli
