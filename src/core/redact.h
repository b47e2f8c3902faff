// The one redaction of secrets in text that reaches a message, a log, an
// event or a status: a URL's user information (`oci://user:pass@host`,
// `https://TOKEN@host`, a proxy's `user:pass@host:port` without a scheme,
// whatever the scheme, mistyped ones included) becomes "***", and so does
// the value of a URL's query parameter whose name says it is secret
// (token, password, secret, signature, sig, key, credential, auth).
// printable(), quote() and one_line() (core/error.h) apply it before they
// cut anything; the events and conditions written to a cluster apply it too.
#pragma once

#include <string>
#include <string_view>

namespace fluxop {

std::string redact_secrets(std::string_view text);

}  // namespace fluxop
