#pragma once

// One table per enum, a row per enumerator in the enum's order, checked when
// it compiles to cover the enum (as reason.cpp's table of reasons is): the
// enum ends with `count`, which is not a value. A row is any struct with
// `value` (the enumerator) and `name`.

#include <cstddef>
#include <string_view>

namespace fluxop {

// Each row at its value's index, every value with a row, no name empty nor
// given twice.
template <typename Row, std::size_t N>
constexpr bool covers_enum(const Row (&rows)[N]) {
  using Enum = decltype(rows[0].value);
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(rows[i].value) != i || rows[i].name.empty()) return false;
    for (std::size_t j = i + 1; j < N; ++j) {
      if (rows[i].name == rows[j].name) return false;
    }
  }
  return N == static_cast<std::size_t>(Enum::count);
}

// The row of `value` in a table that covers_enum.
template <typename Row, std::size_t N>
constexpr const Row& enum_row(const Row (&rows)[N], decltype(rows[0].value) value) {
  return rows[static_cast<std::size_t>(value)];
}

// A table that only names.
template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

}  // namespace fluxop
