#include "core/status/html.h"

#include <doctest/doctest.h>

namespace fluxop::status {
namespace {

TEST_CASE(
    "escape_html: markup characters become references, so no value ends a tag or an attribute") {
  CHECK(escape_html("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(escape_html("a \"b\" 'c' & d") == "a &quot;b&quot; &#39;c&#39; &amp; d");
  CHECK(escape_html("&lt;") == "&amp;lt;");
  CHECK(escape_html("Ready 3/3 ✓") == "Ready 3/3 ✓");
}

TEST_CASE("escape_html: secrets redacted and control characters shown as escapes, first") {
  CHECK(escape_html("pull https://user:hunter2@registry.example/flux failed") ==
        "pull https://***@registry.example/flux failed");
  CHECK(escape_html("GET https://registry.example/v2/?access_token=abc123&x=1") ==
        "GET https://registry.example/v2/?access_token=***&amp;x=1");
  CHECK(escape_html("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(escape_html("two\nlines") == "two\\nlines");
}

TEST_CASE("Html: markup as written, values only through the escaper") {
  Html html;
  html << "<td class=\"message\">" << text("<b>\"x\"</b>") << "</td>" << number(-42);
  CHECK(html.str() == "<td class=\"message\">&lt;b&gt;&quot;x&quot;&lt;/b&gt;</td>-42");
  Html outer;
  outer << "<tr>" << html << "</tr>";
  CHECK(outer.str() == "<tr>" + html.str() + "</tr>");
}

}  // namespace
}  // namespace fluxop::status
