#include "core/net/trust.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "core/file.h"

namespace fluxop::net {

namespace {

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;
using PrivateKey = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

Bio memory_bio(std::string_view bytes) {
  Bio bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())), BIO_free);
  if (!bio) throw Error("out of memory");
  return bio;
}

// The certificates of `pem`, or why it is not a file of certificates alone
// (text between blocks, as bundles have, is allowed).
std::vector<Certificate> pem_certificates(std::string_view pem, std::string& problem) {
  std::vector<Certificate> certificates;
  Bio bio = memory_bio(pem);
  for (;;) {
    char* name = nullptr;
    char* header = nullptr;
    unsigned char* data = nullptr;
    long length = 0;
    if (PEM_read_bio(bio.get(), &name, &header, &data, &length) != 1) break;
    std::string block = name;
    const unsigned char* cursor = data;
    Certificate certificate(block == "CERTIFICATE" ? d2i_X509(nullptr, &cursor, length) : nullptr,
                            X509_free);
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
    if (!certificate) {
      problem = block == "CERTIFICATE" ? "a PEM block is not a valid certificate"
                                       : "holds a PEM " + block + ", not only certificates";
      certificates.clear();
      break;
    }
    certificates.push_back(std::move(certificate));
  }
  ERR_clear_error();  // the end of the blocks reads as "no start line"
  if (problem.empty() && certificates.empty()) problem = "no PEM certificate in it";
  return certificates;
}

std::string read_certificates(const std::string& path) {
  std::string pem = read_input_file(path, /*pipes=*/false, kMaxTrustFileBytes);
  std::string problem;
  pem_certificates(pem, problem);
  if (!problem.empty()) throw Error(path + ": " + problem);
  return pem;
}

// The client certificate and its key, checked to be a pair.
void read_client_pair(const std::string& cert_path, const std::string& key_path, HostTrust& trust) {
  trust.client_cert_pem = read_certificates(cert_path);
  trust.client_key_pem = read_input_file(key_path, /*pipes=*/false, kMaxTrustFileBytes);
  Bio key_bio = memory_bio(trust.client_key_pem);
  // No passphrase callback prompts: an encrypted key is refused.
  auto no_passphrase = [](char*, int, int, void*) { return 0; };
  PrivateKey key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, no_passphrase, nullptr),
                 EVP_PKEY_free);
  ERR_clear_error();
  if (!key) throw Error(key_path + ": not an unencrypted PEM private key");
  std::string problem;
  std::vector<Certificate> certificates = pem_certificates(trust.client_cert_pem, problem);
  if (X509_check_private_key(certificates.front().get(), key.get()) != 1) {
    ERR_clear_error();
    throw Error(key_path + ": not the private key of " + cert_path);
  }
}

}  // namespace

std::string read_ca_file(const std::string& path) { return read_certificates(path); }

HostTrust certs_dir_trust(const std::string& dir, std::string_view authority) {
  namespace fs = std::filesystem;
  HostTrust trust;
  // A registry's name is never a path of its own (reference.h checks it);
  // this keeps one from reaching outside the directory all the same.
  if (authority.empty() || authority == "." || authority == ".." ||
      authority.find('/') != std::string_view::npos)
    return trust;
  fs::path host_dir = fs::path(dir) / std::string(authority);
  std::error_code error;
  if (!fs::is_directory(host_dir, error)) return trust;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(host_dir, error), end; !error && it != end; it.increment(error)) {
    if (entries.size() == kMaxHostDirectoryEntries) {
      throw Error(host_dir.string() + ": more than " + std::to_string(kMaxHostDirectoryEntries) +
                  " entries");
    }
    entries.push_back(it->path());
  }
  if (error) throw Error(host_dir.string() + ": " + error.message());
  std::sort(entries.begin(), entries.end());
  auto with_extension = [](fs::path path, std::string_view extension) {
    return path.replace_extension(extension);
  };
  for (const fs::path& entry : entries) {
    std::string extension = entry.extension().string();
    if (extension == ".crt") {
      trust.ca_pem += read_certificates(entry.string()) + "\n";
    } else if (extension == ".key" && !fs::exists(with_extension(entry, ".cert"), error)) {
      throw Error(entry.string() + ": a client key without its certificate " +
                  with_extension(entry, ".cert").filename().string());
    } else if (extension == ".cert") {
      fs::path key = with_extension(entry, ".key");
      if (!fs::exists(key, error)) {
        throw Error(entry.string() + ": a client certificate without its key " +
                    key.filename().string());
      }
      // The first pair by name, as one TLS connection offers one.
      if (trust.client_cert_pem.empty()) read_client_pair(entry.string(), key.string(), trust);
    }
  }
  return trust;
}

std::function<HostTrust(std::string_view authority)> registry_trust(std::string ca_pem,
                                                                    std::string certs_dir) {
  auto hosts = std::make_shared<std::map<std::string, HostTrust, std::less<>>>();
  return [ca_pem = std::move(ca_pem), certs_dir = std::move(certs_dir),
          hosts](std::string_view authority) {
    auto known = hosts->find(authority);
    if (known != hosts->end()) return known->second;
    HostTrust trust = certs_dir.empty() ? HostTrust{} : certs_dir_trust(certs_dir, authority);
    trust.ca_pem = ca_pem + (ca_pem.empty() ? "" : "\n") + trust.ca_pem;
    return hosts->emplace(std::string(authority), std::move(trust)).first->second;
  };
}

bool add_trusted_certificates(void* ssl_ctx, std::string_view pem) {
  X509_STORE* store = SSL_CTX_get_cert_store(static_cast<SSL_CTX*>(ssl_ctx));
  std::string problem;
  std::vector<Certificate> certificates = pem_certificates(pem, problem);
  bool added = store && problem.empty();
  for (const Certificate& certificate : certificates) {
    // A CA the store has already (the system's own) is no failure.
    added = X509_STORE_add_cert(store, certificate.get()) == 1 && added;
  }
  ERR_clear_error();
  return added;
}

}  // namespace fluxop::net
