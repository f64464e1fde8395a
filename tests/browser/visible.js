// What a reader sees, shared by the probes of tests/test_browser.py (injected before each):
// an element is visible unless it sits in a closed <details> (its summary excepted) or under
// an element styled display: none or visibility: hidden.
window.casebookVisible = (el) => {
  if (!el) return false;
  const closed = el.closest("details:not([open])");
  if (closed && !(closed.querySelector("summary") || document.body).contains(el)) return false;
  for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
    const style = getComputedStyle(e);
    if (style.display === "none" || style.visibility === "hidden") return false;
  }
  return true;
};
