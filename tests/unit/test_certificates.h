// Throwaway certificates for the TLS tests, made by the openssl CLI under a
// TempDir: ECDSA P-256 keys, valid for two days.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace fluxop::testing {

// NAME.pem and NAME.key, signed by the CA `signer`, with the openssl
// extension line `extension` (subjectAltName=IP:127.0.0.1, extendedKeyUsage=clientAuth).
struct LeafCertificate {
  std::string name;
  std::string signer;
  std::string extension;
};

// Under `dir`: a self-signed CA for each of `cas` (NAME.pem, NAME.key), then
// each of `leaves`.
inline void make_certificates(const TempDir& dir, const std::vector<std::string>& cas,
                              const std::vector<LeafCertificate>& leaves) {
  std::string script = "(cd '" + dir.str() +
                       "' && set -e\n"
                       "key='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n";
  for (const std::string& ca : cas)
    script += "openssl req -x509 $key -days 2 -subj /CN=" + ca + " -keyout " + ca + ".key -out " +
              ca + ".pem\n";
  for (const LeafCertificate& leaf : leaves) {
    dir.write(leaf.name + ".ext", leaf.extension + "\n");
    script += "openssl req -new $key -subj /CN=" + leaf.name + " -keyout " + leaf.name +
              ".key -out " + leaf.name + ".csr\n" + "openssl x509 -req -in " + leaf.name +
              ".csr -CA " + leaf.signer + ".pem -CAkey " + leaf.signer +
              ".key -CAcreateserial -days 2 -extfile " + leaf.name + ".ext -out " + leaf.name +
              ".pem\n";
  }
  script += ") >" + dir.str() + "/openssl.log 2>&1";
  REQUIRE_MESSAGE(std::system(script.c_str()) == 0, "openssl failed, see " << dir.str());
}

// The text of the file `name` under `dir`.
inline std::string file_text(const TempDir& dir, const std::string& name) {
  std::ostringstream text;
  text << std::ifstream(dir.path() / name).rdbuf();
  return text.str();
}

}  // namespace fluxop::testing
