// The book's search (Sphinx's html_search_scorer, which Sphinx puts in language_data.js,
// loaded after searchtools.js). A reader arrives with an error message as their program
// printed it: with their own memory addresses, class and function names, and quoted values
// that no page holds. Sphinx's search needs every term on one page, so such a message found
// nothing. Three rules of the book's, on top of Sphinx's default weights:
//
// 1. The query is read the way `python3 -m casebook explain` reads a message: addresses
//    (0x7f4b15d36840) and the reprs that hold them (<function rms_norm at 0x...>) go, and
//    so does any term the site's index does not hold (the reader's own identifiers).
// 2. A page that holds most of the terms is a result, ranked by how many it holds; Sphinx's
//    all-terms search still answers first when it finds anything.
// 3. A message lands on its answer: the Errors page opens at the heading whose wording shares
//    the most words with the query, and case pages rank above the API reference and How to
//    read (pages that merely list the same words) when the query is a message
//    (`SomeError: ...`); a query of a name, such as `check_optimizer`, keeps the API first.
var Scorer = {
  score: (result) => {
    const [docname, , , , score] = result;
    if (docname === "book/errors") return score + 5;
    if (docname.startsWith("notebooks/")) return score + 4;
    const aside = docname === "book/api" || docname === "book/how-to-read";
    return aside && casebookSearch.isMessage() ? score - 10 : score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
  mostTerms: 10, // per term a page holds, when no page holds them all
};

const casebookSearch = (() => {
  // Innermost first: <PjitFunction of <function tanh at 0x...>> loses both reprs.
  const repr = /<[^<>]*\bat 0x[0-9a-f]+>/gi;
  const normalise = (query) => {
    let text = query;
    for (let before = ""; before !== text; ) {
      before = text;
      text = text.replace(repr, " ").replace(/<[^<>]* of\s*>/g, " ");
    }
    return text.replace(/\b0x[0-9a-f]+\b/gi, " ").replace(/\s+/g, " ").trim();
  };
  let words = [];
  let message = false;
  const known = (term) =>
    Object.hasOwn(Search._index.terms, term) || Object.hasOwn(Search._index.titleterms, term);
  // The Errors page's heading that shares the most words with the query: its "#anchor"
  // and its text (shown as "Errors > heading").
  const bestHeading = (file) => {
    let best = ["", "", 0];
    for (const [title, places] of Object.entries(Search._index.alltitles)) {
      const shared = words.filter((w) => title.toLowerCase().includes(w)).length;
      for (const [where, id] of places)
        if (where === file && id && shared > best[2]) best = ["#" + id, title, shared];
    }
    return best;
  };
  const read = (query, highlighted) => {
    message = /^\s*[\w.]*(Error|Exception|Warning)\b:/.test(query);
    words = highlighted.filter((w) => w.length > 2);
  };
  return { normalise, known, bestHeading, read, isMessage: () => message };
})();

if (typeof Search !== "undefined") {
  const parseQuery = Search._parseQuery;
  Search._parseQuery = (query) => {
    const parsed = parseQuery(casebookSearch.normalise(query));
    parsed[1] = new Set([...parsed[1]].filter(casebookSearch.known));
    casebookSearch.read(query, [...parsed[3]]);
    return parsed;
  };
  const allTerms = Search.performTermsSearch;
  Search.performTermsSearch = (searchTerms, excludedTerms) => {
    let results = allTerms(searchTerms, excludedTerms);
    if (!results.length && searchTerms.size > 1) {
      const byFile = new Map();
      for (const term of searchTerms)
        for (const result of allTerms(new Set([term]), excludedTerms)) {
          const seen = byFile.get(result[5]) || { result, terms: 0 };
          seen.terms += 1;
          byFile.set(result[5], seen);
        }
      const half = Math.max(2, Math.ceil(searchTerms.size / 2));
      results = [...byFile.values()]
        .filter((seen) => seen.terms >= half)
        .map(({ result, terms }) => [...result.slice(0, 4), Scorer.mostTerms * terms, result[5]]);
    }
    const errors = Search._index.docnames.indexOf("book/errors");
    for (const result of results)
      if (result[0] === "book/errors" && !result[2]) {
        const [anchor, heading] = casebookSearch.bestHeading(errors);
        if (anchor) [result[1], result[2]] = [`${result[1]} > ${heading}`, anchor];
      }
    return results;
  };
}
