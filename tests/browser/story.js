// Reads a case page's visible text as a reader meets it, for tests/test_browser.py: the words
// (prose and printed output) from the title to the Exercises heading, and the text of every
// visible code block (input, not output), each marked as in the story or not. Writes JSON
// into a pre element, id casebook-story (read back via --dump-dom); the site is not changed.
window.addEventListener("load", () => {
  const article = document.querySelector("article") || document.body;
  const visible = window.casebookVisible;
  const end = [...article.querySelectorAll("h2")].find((h) =>
    /^(\d+\.)*\s*Exercises/.test(h.textContent.trim())
  );
  const inStory = (node) => !!end && !!(end.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_PRECEDING);
  const output = (el) => el.closest(".cell_output, .output");
  const codeInput = (el) => {
    const pre = el.closest("pre");
    return pre && !output(pre) ? pre : null;
  };
  let words = 0;
  let outputWords = 0;
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const parent = node.parentElement;
    if (!inStory(node) || !parent || codeInput(parent) || !visible(parent)) continue;
    if (parent.closest("script, style, .headerlink, #casebook-story")) continue;
    const n = node.textContent.split(/\s+/).filter((w) => /[\w]/.test(w)).length;
    words += n;
    if (output(parent)) outputWords += n;
  }
  const code = [];
  for (const pre of article.querySelectorAll("pre")) {
    if (output(pre) || !visible(pre) || pre.id === "casebook-story") continue;
    code.push({ story: inStory(pre), text: pre.textContent.replace(/\n+$/, "") });
  }
  const out = document.createElement("pre");
  out.id = "casebook-story";
  out.textContent = JSON.stringify({ exercises: !!end, words, outputWords, code });
  document.body.appendChild(out);
});
