// Trust added to the system's for registries: a CA file (--ca-file) trusted
// beside the system bundle, and a certificates directory laid out as Docker's
// and containerd's certs.d (DIR/HOST[:PORT]/*.crt CAs, *.cert client
// certificates each with the *.key of the same name).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace fluxop::net {

// The most a CA, certificate or key file may hold: a bundle of a few hundred
// CAs is far below it.
inline constexpr std::size_t kMaxTrustFileBytes = std::size_t{1} << 20;
// The most entries a host's directory may hold before it is refused.
inline constexpr std::size_t kMaxHostDirectoryEntries = 64;

// What a host is trusted with beyond the system's CAs.
struct HostTrust {
  std::string ca_pem;           // CAs trusted beside the system's (PEM)
  std::string client_cert_pem;  // a client certificate (PEM), with
  std::string client_key_pem;   // its private key (PEM)
};

// The certificates of a PEM file read whole and checked: only certificates,
// at least one. Throws fluxop::Error "PATH: ..." saying what is wrong.
std::string read_ca_file(const std::string& path);

// Where a certificates directory is looked for: the flag, else this
// environment variable.
inline constexpr std::string_view kCertsDirEnvironment = "FLUXOPCTL_CERTS_DIR";

// What the certificates directory `dir` says of HOST[:PORT] `authority`:
// DIR/AUTHORITY/*.crt (CAs, in name order) and one *.cert with its *.key
// (the first by name). Nothing when DIR/AUTHORITY does not exist. Throws
// fluxop::Error naming the file when one is unreadable, not PEM, or a
// certificate without its key (or a key without its certificate).
HostTrust certs_dir_trust(const std::string& dir, std::string_view authority);

// The trust for each host a registry client reaches: `ca_pem` for every
// host, and what the certificates directory `certs_dir` (none when empty)
// says of it, each host's directory read once.
std::function<HostTrust(std::string_view authority)> registry_trust(std::string ca_pem,
                                                                    std::string certs_dir);

// Adds the certificates of `pem` to the trust store of an OpenSSL SSL_CTX
// (`ssl_ctx`), beside those it has. Returns false when one cannot be added.
bool add_trusted_certificates(void* ssl_ctx, std::string_view pem);

}  // namespace fluxop::net
