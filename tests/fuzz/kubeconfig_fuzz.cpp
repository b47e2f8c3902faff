// libFuzzer target for the kubeconfig: the input is a kubeconfig file,
// loaded as --kubeconfig names it (with the files it names, relative to a
// scratch directory). Any input must load or throw fluxop::Error: never
// crash, hang or read a file unbounded.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/kube/kubeconfig.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path dir = [] {
    std::filesystem::path scratch =
        std::filesystem::temp_directory_path() / ("kubeconfig_fuzz." + std::to_string(getpid()));
    std::filesystem::create_directories(scratch / "pki");
    std::ofstream(scratch / "pki" / "ca.crt") << "CA PEM";
    std::ofstream(scratch / "token") << "a-token\n";
    return scratch;
  }();
  std::string file = (dir / "config").string();
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  fluxop::kube::Environment env;
  env.home = (dir / "home").string();
  env.service_account_dir = (dir / "serviceaccount").string();
  try {
    (void)fluxop::kube::load_cluster_access({file, ""}, env);
  } catch (const fluxop::Error&) {
  }
  return 0;
}
