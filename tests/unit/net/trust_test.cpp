// Trust added for registries: CAs trusted beside the default ones (never
// instead), per host; a certs.d directory read as Docker reads it; CA files
// that are not PEM certificates refused. Certificates are made by the
// openssl CLI; the HTTPS server is the fake API server.
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "../kube/fake_api_server.h"
#include "../temp_dir.h"
#include "../test_certificates.h"
#include "core/error.h"
#include "core/net/http.h"
#include "core/net/trust.h"

namespace {

using fluxop::net::HostTrust;
using fluxop::testing::FakeApiServer;
using fluxop::testing::FakeRequest;
using fluxop::testing::FakeResponse;
using fluxop::testing::FakeTlsIdentity;
using fluxop::testing::file_text;
using fluxop::testing::TempDir;

// Under DIR: server-ca.pem signs server.pem (for 127.0.0.1); client-ca.pem
// signs client.pem, whose key is client.key.
void make_trust_files(const TempDir& dir) {
  fluxop::testing::make_certificates(dir, {"server-ca", "client-ca"},
                                     {{"server", "server-ca", "subjectAltName=IP:127.0.0.1"},
                                      {"client", "client-ca", "extendedKeyUsage=clientAuth"}});
}

FakeResponse ok(const FakeRequest&) { return {200, "{}", ""}; }

// The error of a GET of `url` with `options` (empty when it succeeded).
std::string get_error(const std::string& url, fluxop::net::HttpOptions options) {
  options.attempts = 1;
  fluxop::net::HttpClient client(std::move(options));
  try {
    fluxop::net::HttpRequest request;
    request.url = url + "/v2/";
    long status = client.send(request).status;
    CHECK(status == 200);
  } catch (const fluxop::Error& e) {
    return e.what();
  }
  return "";
}

// Sets an environment variable for a scope.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnvironment() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string error_of(const auto& action) {
  try {
    action();
  } catch (const fluxop::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("http: a host's added CA is trusted beside the default ones, never instead of them") {
  TempDir dir;
  make_trust_files(dir);
  FakeApiServer server(ok, FakeTlsIdentity{(dir.path() / "server.pem").string(),
                                           (dir.path() / "server.key").string()});
  std::string authority = server.url().substr(std::string("https://").size());
  auto trusting = [&](const std::string& ca_file, const std::string& for_host) {
    fluxop::net::HttpOptions options;
    options.untrusted_hint = "add its CA with --ca-file";
    options.host_trust = [=, pem = file_text(dir, ca_file)](std::string_view host) {
      HostTrust trust;
      if (host == for_host) trust.ca_pem = pem;
      return trust;
    };
    return options;
  };

  SUBCASE("nothing added: not trusted, and the hint says how to trust it") {
    std::string error = get_error(server.url(), trusting("server-ca.pem", "elsewhere:1"));
    CAPTURE(error);
    CHECK(error.find("(the server's certificate is not trusted: add its CA with --ca-file)") !=
          std::string::npos);
    CHECK(server.requests().empty());
  }
  SUBCASE("the server's CA added for its host") {
    CHECK(get_error(server.url(), trusting("server-ca.pem", authority)) == "");
    CHECK(server.requests().size() == 1);
  }
  SUBCASE("another CA added: the default trust (SSL_CERT_FILE here) still holds") {
    ScopedEnvironment default_cas("SSL_CERT_FILE", (dir.path() / "server-ca.pem").string());
    CHECK(get_error(server.url(), trusting("client-ca.pem", authority)) == "");
    CHECK(server.requests().size() == 1);
  }
  SUBCASE("only the other CA: refused") {
    CHECK(get_error(server.url(), trusting("client-ca.pem", authority)) != "");
    CHECK(server.requests().empty());
  }
}

TEST_CASE("trust: a certs.d directory read as Docker reads it") {
  TempDir dir;
  make_trust_files(dir);
  std::string certs = (dir.path() / "certs.d").string();
  auto put = [&](const std::string& from, const std::string& to) {
    dir.write("certs.d/" + to, file_text(dir, from));
  };

  SUBCASE("no directory for the host: nothing") {
    put("server-ca.pem", "other.example:5000/ca.crt");
    HostTrust trust = fluxop::net::certs_dir_trust(certs, "registry.example:5000");
    CHECK(trust.ca_pem.empty());
    CHECK(trust.client_cert_pem.empty());
    CHECK(fluxop::net::certs_dir_trust(certs, "..").ca_pem.empty());
  }
  SUBCASE("every *.crt is a CA; a *.cert with its *.key is the client certificate") {
    put("server-ca.pem", "registry.example:5000/ca.crt");
    put("client-ca.pem", "registry.example:5000/extra.crt");
    put("client.pem", "registry.example:5000/client.cert");
    put("client.key", "registry.example:5000/client.key");
    dir.write("certs.d/registry.example:5000/README", "ignored");
    HostTrust trust = fluxop::net::certs_dir_trust(certs, "registry.example:5000");
    CHECK(trust.ca_pem ==
          file_text(dir, "server-ca.pem") + "\n" + file_text(dir, "client-ca.pem") + "\n");
    CHECK(trust.client_cert_pem == file_text(dir, "client.pem"));
    CHECK(trust.client_key_pem == file_text(dir, "client.key"));
  }
  SUBCASE("a certificate without its key, a key without its certificate, a mismatched key") {
    std::string host = certs + "/registry.example";
    put("client.pem", "registry.example/client.cert");
    CHECK(error_of([&] { fluxop::net::certs_dir_trust(certs, "registry.example"); }) ==
          host + "/client.cert: a client certificate without its key client.key");
    std::filesystem::rename(host + "/client.cert", host + "/a.crt");
    put("client.key", "registry.example/client.key");
    CHECK(error_of([&] { fluxop::net::certs_dir_trust(certs, "registry.example"); }) ==
          host + "/client.key: a client key without its certificate client.cert");
    put("server.pem", "registry.example/client.cert");
    CHECK(error_of([&] { fluxop::net::certs_dir_trust(certs, "registry.example"); }) ==
          host + "/client.key: not the private key of " + host + "/client.cert");
  }
  SUBCASE("a *.crt that is not PEM") {
    dir.write("certs.d/registry.example/ca.crt", "not a certificate\n");
    CHECK(error_of([&] { fluxop::net::certs_dir_trust(certs, "registry.example"); }) ==
          certs + "/registry.example/ca.crt: no PEM certificate in it");
  }
  SUBCASE("the CA file and the directory's CAs together, each host read once") {
    put("server-ca.pem", "registry.example/ca.crt");
    auto trust = fluxop::net::registry_trust(file_text(dir, "client-ca.pem"), certs);
    std::string both =
        file_text(dir, "client-ca.pem") + "\n" + file_text(dir, "server-ca.pem") + "\n";
    CHECK(trust("registry.example").ca_pem == both);
    std::filesystem::remove(certs + "/registry.example/ca.crt");
    CHECK(trust("registry.example").ca_pem == both);
    CHECK(trust("other.example").ca_pem == file_text(dir, "client-ca.pem") + "\n");
  }
}

TEST_CASE("trust: a CA file must hold PEM certificates and nothing else") {
  TempDir dir;
  make_trust_files(dir);
  auto problem = [&](const std::string& name) {
    return error_of([&] { fluxop::net::read_ca_file((dir.path() / name).string()); });
  };
  CHECK(problem("server-ca.pem") == "");
  dir.write("bundle.pem",
            "# two CAs\n" + file_text(dir, "server-ca.pem") + file_text(dir, "client-ca.pem"));
  CHECK(problem("bundle.pem") == "");
  dir.write("empty.pem", "");
  CHECK(problem("empty.pem") == dir.str() + "/empty.pem: no PEM certificate in it");
  CHECK(problem("server-ca.key") ==
        dir.str() + "/server-ca.key: holds a PEM PRIVATE KEY, not only certificates");
  dir.write("broken.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  CHECK(problem("broken.pem") == dir.str() + "/broken.pem: a PEM block is not a valid certificate");
  CHECK(problem("missing.pem").starts_with(dir.str() + "/missing.pem: "));
}
