// Runs the site's own search (Sphinx's searchtools.js, on the site's searchindex.js) for each
// query in CASEBOOK_QUERIES and writes {query: [[docname, anchor], ...]} (best first) as JSON into a
// pre element, id casebook-search, read back via --dump-dom by tests/test_browser.py.
(() => {
  const run = () => {
    if (!Search.hasIndex()) {
      window.setTimeout(run, 50);
      return;
    }
    const found = {};
    for (const query of CASEBOOK_QUERIES) {
      const [q, terms, excluded, highlight, objects] = Search._parseQuery(query);
      const results = Search._performSearch(q, terms, excluded, highlight, objects);
      // searchtools shows the results from the end of this list: the last is the best.
      found[query] = results.slice().reverse().map((r) => [r[0], r[2]]);
    }
    const out = document.createElement("pre");
    out.id = "casebook-search";
    out.textContent = JSON.stringify(found);
    document.body.appendChild(out);
  };
  window.addEventListener("load", run);
})();
