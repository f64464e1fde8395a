// The book's search scorer (Sphinx's html_search_scorer): Sphinx's default weights, and one
// rule of the book's: a reader who pastes an error lands on the Errors page, whose headings
// are the wordings verbatim, before any other page that merely contains the same words
// (ties are otherwise broken alphabetically, which put "API reference" first).
var Scorer = {
  score: (result) => {
    const [docname, , , , score] = result;
    return docname === "book/errors" ? score + 5 : score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
