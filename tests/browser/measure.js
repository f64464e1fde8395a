// Measures a case page's first screen as a reader sees it, at the window's size, and writes
// the figures as JSON into a pre element, id casebook-measure (read back via --dump-dom).
// Used by tests/test_browser.py; the page itself is never changed on the site.
window.addEventListener("load", () => {
  const article = document.querySelector("article") || document.body;
  const visible = window.casebookVisible;
  const top = (el) => el.getBoundingClientRect().top + window.scrollY;

  const h1 = article.querySelector("h1");
  const h1Style = getComputedStyle(h1);
  const lineHeight = parseFloat(h1Style.lineHeight) || parseFloat(h1Style.fontSize) * 1.2;
  const h1Lines = Math.round(h1.getBoundingClientRect().height / lineHeight);

  // The first code block after the words "Do this" (a translation's own words where the
  // test sets window.casebookDoThis), in document order.
  const label = window.casebookDoThis || "Do this";
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  let doThis = null;
  while (walker.nextNode()) {
    if (walker.currentNode.textContent.includes(label) && visible(walker.currentNode.parentElement)) {
      doThis = walker.currentNode;
      break;
    }
  }
  let fix = null;
  if (doThis) {
    for (const pre of article.querySelectorAll("div.highlight pre")) {
      if (doThis.compareDocumentPosition(pre) & Node.DOCUMENT_POSITION_FOLLOWING && visible(pre)) {
        fix = pre;
        break;
      }
    }
  }

  // Visible words above that block, code included.
  let words = 0;
  const counter = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  while (counter.nextNode()) {
    const node = counter.currentNode;
    if (fix && (fix.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING || fix.contains(node))) break;
    const parent = node.parentElement;
    if (!parent || !visible(parent) || parent.closest("script, style, .headerlink")) continue;
    words += node.textContent.split(/\s+/).filter((w) => /[\w]/.test(w)).length;
  }

  // Visible code wider than its column.
  let widest = 0;
  let column = 0;
  let widestText = "";
  for (const pre of article.querySelectorAll("pre")) {
    if (!visible(pre)) continue;
    column = Math.max(column, pre.clientWidth);
    if (pre.scrollWidth - pre.clientWidth > widest) {
      widest = pre.scrollWidth - pre.clientWidth;
      widestText = pre.textContent.slice(0, 80);
    }
  }

  const out = document.createElement("pre");
  out.id = "casebook-measure";
  out.textContent = JSON.stringify({
    h1Lines,
    fixTop: fix ? Math.round(top(fix)) : null,
    // The first line the fix marks as changed (emphasize-lines), where it marks one.
    changedTop: fix && fix.querySelector(".hll") ? Math.round(top(fix.querySelector(".hll"))) : null,
    wordsAbove: words,
    overflowPx: widest,
    columnPx: column,
    widest: widestText,
    title: h1.textContent.trim(),
  });
  document.body.appendChild(out);
});
