#!/usr/bin/env python3
"""Reads an HTML page fluxopctl wrote, as a browser's parser would, and prints
what the tests check as one JSON object: the names of the elements in it
("tags"), the attributes that could run or load something ("active": on*
handlers, href/src/action other than an in-page "#" link), the rows of the
table with id TABLE (default "clusters") as lists of cell texts ("rows"), and
all of the page's text, entities decoded ("text").

    python3 tests/e2e/html_page.py PAGE.html [TABLE]
"""
import json
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self, table_id):
        super().__init__(convert_charrefs=True)
        self.table_id = table_id
        self.tags = set()
        self.active = []
        self.rows = []
        self.text = []
        self._table = 0  # depth inside table#TABLE
        self._row = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.active.append(f"{tag} {name}")
            if name in ("href", "src", "action", "formaction") and not (value or "").startswith("#"):
                self.active.append(f"{tag} {name}={value}")
        if tag == "table" and ("id", self.table_id) in attrs:
            self._table = 1
        elif tag == "table" and self._table:
            self._table += 1
        if self._table and tag == "tr":
            self._row = []
        if self._table and tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if self._table and tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        if self._table and tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None
        if tag == "table" and self._table:
            self._table -= 1

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def main():
    page = Page(sys.argv[2] if len(sys.argv) > 2 else "clusters")
    with open(sys.argv[1], encoding="utf-8") as f:
        page.feed(f.read())
    page.close()
    json.dump(
        {"tags": sorted(page.tags), "active": page.active, "rows": page.rows, "text": "".join(page.text)},
        sys.stdout,
    )


if __name__ == "__main__":
    main()
