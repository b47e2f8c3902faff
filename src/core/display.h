// Text shortened to a place on a terminal: the live status line of a wait,
// adopt's proof of a value, a table's column. One order, always: secrets
// redacted, control characters escaped (printable(), core/error.h), and only
// then the cut, by the columns the text takes on the screen. A cut made
// first could fall inside a URL's user information before the redaction saw
// its "@", or inside an escape; a cut by bytes overruns a row with escapes
// and wide characters, and a wrapped status line leaves rows behind at each
// redraw.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fluxop {

// The columns `text` (as printable() writes it: no control character)
// takes on a terminal: each UTF-8 character one, East Asian wide
// characters and emoji two, combining marks and zero-width characters none;
// a byte that is not UTF-8 one (the terminal shows a replacement character).
std::size_t display_columns(std::string_view text);

// `text` redacted, escaped and cut to at most `columns` columns, "..." then
// ending it; whole when it fits. Never cuts inside a character or an escape.
std::string printable_within(std::string_view text, std::size_t columns);

}  // namespace fluxop
