#include "core/oci/credentials.h"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>

#include "../temp_dir.h"
#include "core/error.h"

namespace fluxop::oci {
namespace {

// Puts `dir` first on PATH for the test's lifetime.
class PathPrefix {
 public:
  explicit PathPrefix(const std::string& dir) : saved_(std::getenv("PATH")) {
    setenv("PATH", (dir + ":" + saved_).c_str(), 1);
  }
  ~PathPrefix() { setenv("PATH", saved_.c_str(), 1); }

 private:
  std::string saved_;
};

// An executable docker-credential-NAME that runs `script` (sh).
void write_helper(const testing::TempDir& dir, const std::string& name, const std::string& script) {
  std::string file = "docker-credential-" + name;
  dir.write(file, "#!/bin/sh\n" + script);
  std::filesystem::permissions(dir.path() / file, std::filesystem::perms::owner_all);
}

TEST_CASE("docker config: auths by host, with auth, username/password or an identity token") {
  DockerConfig config = DockerConfig::parse(R"({"auths": {
      "https://registry.example.com/v1/": {"auth": "dXNlcjpwYTpzcw=="},
      "127.0.0.1:5000": {"username": "alice", "password": "secret"},
      "http://tokens.example.com": {"identitytoken": "refresh-me"},
      "empty.example.com": {}}})",
                                            "config.json");
  Credential basic = config.lookup("registry.example.com");
  CHECK(basic.username == "user");
  CHECK(basic.password == "pa:ss");  // only the first ':' separates
  Credential plain = config.lookup("127.0.0.1:5000");
  CHECK(plain.username == "alice");
  CHECK(plain.password == "secret");
  CHECK(config.lookup("tokens.example.com").identity_token == "refresh-me");
  CHECK(config.lookup("empty.example.com").empty());
  CHECK(config.lookup("127.0.0.1:5001").empty());  // the port is part of the key
  CHECK(DockerConfig::parse("{}", "config.json").lookup("ghcr.io").empty());
}

TEST_CASE("docker config: malformed files are named, secrets are not") {
  CHECK_THROWS_WITH_AS(DockerConfig::parse("[", "/home/u/.docker/config.json"),
                       "/home/u/.docker/config.json: not a JSON object", Error);
  CHECK_THROWS_WITH_AS(
      DockerConfig::parse(R"({"auths": {"ghcr.io": {"auth": "bm9jb2xvbg=="}}})", "config.json"),
      "config.json: auths.ghcr.io.auth: not base64 of username:password", Error);
}

TEST_CASE("docker config: a FIFO or a directory in config.json's place is refused, not read") {
  testing::TempDir dir;
  const char* saved = std::getenv("DOCKER_CONFIG");
  std::string restore = saved ? saved : "";
  setenv("DOCKER_CONFIG", dir.str().c_str(), 1);
  std::string path = dir.str() + "/config.json";
  SUBCASE("a FIFO (a plain read would wait for a writer forever)") {
    REQUIRE(mkfifo(path.c_str(), 0644) == 0);
    CHECK_THROWS_WITH_AS(DockerConfig::load_default(), doctest::Contains(path.c_str()), Error);
  }
  SUBCASE("a directory") {
    std::filesystem::create_directory(path);
    CHECK_THROWS_WITH_AS(DockerConfig::load_default(), doctest::Contains(path.c_str()), Error);
  }
  SUBCASE("none: no credentials") {
    CHECK(DockerConfig::load_default().lookup("registry.example.com").empty());
  }
  if (saved) {
    setenv("DOCKER_CONFIG", restore.c_str(), 1);
  } else {
    unsetenv("DOCKER_CONFIG");
  }
}

TEST_CASE("docker config: credHelpers, then credsStore, then auths") {
  testing::TempDir bin;
  write_helper(bin, "one", R"(read host
echo "{\"ServerURL\":\"$host\",\"Username\":\"one-$host\",\"Secret\":\"s1\"}")");
  write_helper(bin, "store", R"(read host
case $host in
  stored.example.com) echo '{"Username":"<token>","Secret":"identity"}' ;;
  *) echo "credentials not found in native keychain"; exit 1 ;;
esac)");
  write_helper(bin, "broken", "echo 'keychain locked'; exit 3");
  PathPrefix path(bin.str());

  DockerConfig config = DockerConfig::parse(R"({
      "auths": {"file.example.com": {"username": "f", "password": "p"}},
      "credsStore": "store",
      "credHelpers": {"helped.example.com": "one", "broken.example.com": "broken",
                      "missing.example.com": "nope"}})",
                                            "config.json");
  Credential helped = config.lookup("helped.example.com");
  CHECK(helped.username == "one-helped.example.com");
  CHECK(helped.password == "s1");
  // "<token>" as user name: the secret is an identity token.
  Credential stored = config.lookup("stored.example.com");
  CHECK(stored.username.empty());
  CHECK(stored.identity_token == "identity");
  // The store does not know it: the file's entry answers.
  CHECK(config.lookup("file.example.com").username == "f");
  CHECK(config.lookup("unknown.example.com").empty());
  CHECK_THROWS_WITH_AS(config.lookup("broken.example.com"),
                       "docker-credential-broken get broken.example.com: exit status 3: keychain "
                       "locked",
                       Error);
  CHECK_THROWS_WITH_AS(config.lookup("missing.example.com"),
                       "docker-credential-nope: not found on PATH (named by the Docker config)",
                       Error);
}

}  // namespace
}  // namespace fluxop::oci
