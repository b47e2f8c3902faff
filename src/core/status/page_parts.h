// What every page fluxopctl writes is made of: one style sheet, the
// Content-Security-Policy that allows it alone, the document's head, and the
// table cells the pages share. Nothing here runs script: the pages have none.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status/html.h"
#include "core/status/overview.h"
#include "core/status/resources.h"

namespace fluxop::status {

// The pages' style sheet: light by default, dark when the browser says so,
// readable on a phone.
std::string_view page_style();
// The Content-Security-Policy of a page: nothing loaded, nothing run, its
// one style allowed by its SHA-256, forms sent only where `form_action`
// says ("'none'", "'self'").
std::string content_security_policy(std::string_view form_action);

// "<!DOCTYPE html>" up to the end of the head, titled `title`, with the
// policy as a meta element too (a file opened from disk has no headers).
Html document_head(const Escaped& title, std::string_view policy);

// The CSS class of a health: its name, a space written "-" ("not-ready").
Escaped health_class(Health health);

// The CSS class of an object's state: its name in lower case.
Escaped state_class(ResourceState state);

// Table cells: a value ("-" when empty), a message (wrapped), a number, a
// condition's status (True, False, Unknown, coloured), and a yes or no as one.
Html cell(std::string_view value);
Html message_cell(std::string_view value);
Html number_cell(std::int64_t value);
Html status_cell(const std::string& status);
Html yes_no_cell(bool ready);

// A part of a page: its title, then its table (the header row given, the
// rows after it), or `none` when it has no rows.
Html part(Markup title, Markup none, Markup header, const Html& rows, bool empty);
// An object's Events, newest first (object_events'), as a part.
Html events_table(const std::vector<ObjectEvent>& events);

}  // namespace fluxop::status
