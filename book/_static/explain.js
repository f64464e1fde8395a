// `python3 -m casebook explain`, in the Errors page: a pasted traceback read and ranked in
// the browser, nothing sent anywhere. The reading follows casebook/explain/_parse.py and
// the ranking casebook/explain/_rank.py, step for step; the data (the families' patterns,
// the signatures, the cases' messages) is the one they read, exported at build
// (casebook/explain/_export.py, as CASEBOOK_EXPLAIN). tests/test_browser.py feeds the
// variant corpus to both and asserts the same answers.
const casebookExplain = (() => {
  const DATA = CASEBOOK_EXPLAIN;
  const S = DATA.scores;
  const LIBRARIES = ["optax", "equinox", "diffrax"];
  const ANSI = /\x1b\[[0-9;]{0,20}[A-Za-z]/g;
  const PYTHON = /^\s{0,8}File "([^"\n]{1,500})", line (\d{1,9}), in (\S{1,300})/;
  const IPYTHON = /^\s{0,8}File (\S{1,500}):(\d{1,9}), in ([^\s(]{1,300})/;
  const CELL = /^\s{0,8}(Cell In ?\[\d{1,9}\]), line (\d{1,9})/;
  const EXCEPTION = new RegExp(
    "^((?:[A-Za-z_]\\w{0,100}\\.){0,8}[A-Z]\\w{0,100}" +
      "(?:Error|Exception|Warning|Exit|Interrupt))(?::( .{0,100000})?)?$"
  );
  const END = ["-".repeat(20), "The above exception", "During handling of the above exception", "Traceback ("];
  const compiled = new Map();
  const regex = (source) => {
    if (!compiled.has(source)) compiled.set(source, new RegExp(source));
    return compiled.get(source);
  };

  // Python's str.splitlines: every line break it knows, no empty last line.
  const splitlines = (text) => {
    const lines = text.split(/\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/);
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    return lines;
  };
  const words = (text) => text.split(/\s+/).filter(Boolean).join(" ");
  const normalize = (text) =>
    text.replace(/0x[0-9a-fA-F]+|0x…/g, "0x…").replace(/\s+/g, " ").trim();

  const frame = (file, line, fn, source) => {
    const path = file.replaceAll("\\", "/");
    const parts = path.split("/");
    const library = parts.slice(0, -1).find((p) => LIBRARIES.includes(p)) || "";
    return { file, line, fn, source, path, library, where: `${parts[parts.length - 1]}:${line}` };
  };
  const readFrame = (line, source) => {
    for (const pattern of [PYTHON, IPYTHON, CELL]) {
      const m = pattern.exec(line);
      if (m) return frame(m[1], Number(m[2]), pattern === CELL ? "<cell>" : m[3], source.trim());
    }
    return null;
  };
  const matches = (f, signature) => {
    const colon = signature.indexOf(":");
    const [path, fn] = colon < 0 ? [signature, ""] : [signature.slice(0, colon), signature.slice(colon + 1)];
    if (path.endsWith("/")) return f.path.includes("/" + path);
    if (!f.path.endsWith(path)) return false;
    return !fn || f.fn === fn || f.fn.endsWith("." + fn);
  };

  const isOwn = (f) =>
    !f.library && !f.path.includes("site-packages/") && !f.path.includes("/lib/python");

  const parse = (text) => {
    const lines = splitlines(text.slice(-DATA.limit).replace(ANSI, ""));
    let start = -1;
    lines.forEach((line, i) => {
      if (line.startsWith("Traceback (")) start = i;
    });
    const frames = [];
    let found = null;
    for (let i = start + 1; i < lines.length; i++) {
      const line = lines[i];
      const next = i + 1 < lines.length ? lines[i + 1] : "";
      const f = readFrame(line, next.startsWith("    ") && !readFrame(next, "") ? next : "");
      if (f && found === null) {
        frames.push(f);
        continue;
      }
      const m = EXCEPTION.exec(line);
      if (m && (found === null || !found[1].length)) found = [m[1], [(m[2] || "").trim()]];
      else if (found !== null) {
        if (END.some((e) => line.startsWith(e))) break;
        found[1].push(line);
      }
    }
    if (found === null)
      for (let i = lines.length - 1; i >= 0; i--) {
        const m = EXCEPTION.exec(lines[i]);
        if (m) {
          found = [m[1], [(m[2] || "").trim(), ...lines.slice(i + 1)]];
          break;
        }
      }
    const has = (signature) => [...frames].reverse().find((f) => matches(f, signature)) || null;
    const ownFrame = () => [...frames].reverse().find(isOwn) || null;
    const libraries = [...new Set(frames.filter((f) => f.library).map((f) => f.library))];
    if (found === null) return { excType: "", message: "", frames, has, ownFrame, libraries };
    const excType = found[0].split(".").pop();
    return { excType, message: found[1].join("\n").trim(), frames, has, ownFrame, libraries };
  };

  const search = (source, text) => {
    const m = regex(source).exec(text);
    if (!m) return null;
    return Object.fromEntries(Object.entries(m.groups || {}).filter(([, v]) => v !== undefined));
  };
  const fill = (template, values) =>
    template.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? values[name] : whole));
  const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

  // A user frame that is a callable that is data (the family's data_frame).
  const isData = (family, f) => new RegExp(family.dataFrame).test(`${f.fn} ${f.source}`);
  // The frame that raised is the user's own, and no such callable: the user's code decides.
  const theirs = (tb, family) => {
    const raised = tb.frames.length ? tb.frames[tb.frames.length - 1] : null;
    return Boolean(family.dataFrame) && raised !== null && tb.ownFrame() === raised && !isData(family, raised);
  };
  // Through one of the family's sites into a user frame that is data: the reason, or "".
  const site = (tb, family) => {
    for (let i = tb.frames.length - 1; i >= 0; i--) {
      const at = tb.frames[i];
      if (!family.sites.some((s) => matches(at, s))) continue;
      const own = tb.frames.slice(i + 1).filter(isOwn);
      if (own.length && isData(family, own[0]))
        return (
          `\`${at.fn}\` (${at.where}) called your \`${own[0].fn}\` ` +
          `(${own[0].where}) as it calls a schedule, a mask or labels`
        );
    }
    return "";
  };

  const score = (sig, tb, text, values) => {
    if (sig.notFrames.some((f) => tb.has(f))) return null;
    const found = { owner: sig.owner, score: 0, reasons: [], signature: sig };
    for (const name of sig.hints)
      if (new RegExp(`(?<![\\w])${escape(name)}(?![\\w])`).test(text)) {
        const where = (values.path || "").includes(name) ? values.path || "" : name;
        found.score += S.hint;
        found.reasons.push(`\`${where}\`: ${sig.says}`);
        break;
      }
    for (const mark of sig.marks) {
      const got = search(mark.regex, text);
      if (got !== null) {
        found.score += S.mark;
        found.reasons.push(fill(mark.reason, got));
      }
    }
    for (const name of sig.frames) {
      const f = tb.has(name);
      if (f) {
        found.score += S.frame;
        found.reasons.push(`the traceback passes through \`${f.fn}\` (${f.where})`);
        break;
      }
    }
    if (found.score === 0 && !sig.primary) return null;
    if (sig.primary) found.score += S.primary;
    return found;
  };

  const own = (tb, values) => {
    const f = tb.ownFrame();
    const api =
      ["cond", "switch", "scan", "while_loop", "fori_loop"].find((a) => f.source.includes(`${a}(`)) ??
      ("api" in values ? values.api : "loop");
    const get = (key, otherwise) => (key in values ? values[key] : otherwise);
    const [a, b] = [get("dtype", "one type"), get("dtype2", "another")];
    let did;
    if (api === "cond" || api === "switch") did = `returns ${a} in one branch and ${b} in the other`;
    else {
      did = `takes a carry of ${a} and returns ${b}`;
      if ("path" in values) did += ` at \`${values.path}\``;
    }
    return `your own \`lax.${api}\` at ${f.where} ${did}: no library frame is in the traceback`;
  };

  const rank = (text) => {
    const tb = parse(text);
    const message = tb.excType ? words(`${tb.excType}: ${tb.message}`) : "";
    const hits = [];
    if (message)
      for (const family of DATA.families)
        for (const pattern of family.patterns) {
          if (pattern.frames.length && !pattern.frames.some((f) => tb.has(f))) continue;
          const values = search(pattern.regex, message);
          if (values !== null) {
            hits.push([family, fill(pattern.reason, values), values]);
            break;
          }
        }
    const sited = new Map();
    for (const family of DATA.families) {
      const reason = family.sites.length && message ? site(tb, family) : "";
      if (reason) {
        sited.set(family.key, reason);
        if (!hits.some(([f]) => f.key === family.key)) hits.push([family, reason, {}]);
      }
    }
    const kept = hits.filter(([f]) => !theirs(tb, f));
    hits.length = 0;
    hits.push(...kept);
    const seen = normalize(text.slice(-DATA.limit));
    const exact = DATA.messages.filter((m) => seen.includes(m.text)).sort((x, y) => y.length - x.length);
    const byOwner = new Map();
    const add = (c) => {
      const old = byOwner.get(c.owner);
      if (old === undefined || c.score > old.score) byOwner.set(c.owner, c);
    };
    for (const m of exact) {
      const score = m.familyWording && hits.length ? S.sameWording : S.exact + m.length / 1000;
      add({
        owner: m.case,
        score,
        reasons: [
          score === S.sameWording
            ? `this case's wording, through ${m.api}; any code whose branches or carry disagree prints it too`
            : `the book's wording, word for word (through ${m.api})`,
        ],
        message: m,
        exact: score >= S.exact,
      });
    }
    let ownFrame = null;
    let says = "";
    for (const [family, reason, values] of hits) {
      let scored = DATA.signatures
        .filter((s) => s.family === family.key)
        .map((s) => score(s, tb, message, values))
        .filter(Boolean);
      const evidence = scored.filter((c) => c.score > S.primary);
      if (!tb.libraries.length && !evidence.length) {
        if (family.library) continue;
        if (tb.ownFrame() !== null) {
          [ownFrame, says] = [tb.ownFrame(), own(tb, values)];
          for (const c of [...byOwner.values()]) if (c.score < S.exact) byOwner.delete(c.owner);
          scored = [];
        }
      }
      for (const c of scored) {
        c.family = family;
        c.reasons.unshift(reason);
        if (c.signature && c.signature.primary && sited.has(family.key)) {
          c.score += S.site;
          if (sited.get(family.key) !== reason) c.reasons.splice(1, 0, sited.get(family.key));
        }
        const prior = byOwner.get(c.owner);
        if (prior !== undefined && prior.message) {
          c.score += prior.score;
          c.reasons.push(...prior.reasons);
          [c.message, c.exact] = [prior.message, prior.exact];
        }
        add(c);
      }
      add({ owner: `family-${family.key}`, score: S.family, reasons: [reason], family });
    }
    const candidates = [...byOwner.values()].sort((x, y) => y.score - x.score);
    return { tb, candidates, own: ownFrame, says };
  };

  // The best two, a family's own section left out where a case or finding of it is shown.
  const shown = (r) => {
    const best = [];
    for (const c of r.candidates) {
      if (best.length === 2) break;
      if (!c.signature && !c.message && best.some((b) => b.family === c.family)) continue;
      best.push(c);
    }
    return best;
  };

  // The one line of casebook/explain/_answer.py's hint_line, from the same ranking.
  const hint = (r) => {
    if (!r.candidates.length) return null;
    const c = r.candidates[0];
    const tail = " (or run `python3 -m casebook explain` on the traceback)";
    if (r.own !== null && c.family) return `casebook: ${r.says}; see ${c.family.url}`;
    if (c.message)
      return (
        `casebook: ${c.exact ? "this is" : "this looks like"} ${c.message.label} ` +
        `(case ${c.message.number}, ${c.message.versions}); the fix is on its card: ${c.message.url}` +
        tail
      );
    const [label, page] = c.signature
      ? [c.signature.label, c.signature.url]
      : [`family ${c.family.number}`, c.family.url];
    return `casebook: like ${label} (${c.reasons[0]}); see ${page}${tail}`;
  };

  const why = (c) => [...new Set(c.reasons)].join("; ");
  const answer = (text) => {
    const r = rank(text);
    return {
      hint: hint(r),
      says: r.says,
      shown: shown(r).map((c) => [c.owner, why(c)]),
    };
  };

  // The page's box: the answer as links, under the box, as the reader types or pastes.
  const render = (box, out) => {
    const r = rank(box.value);
    out.replaceChildren();
    const line = (tag, text, href) => {
      const el = document.createElement(tag);
      if (href) {
        const a = document.createElement("a");
        a.href = href;
        a.textContent = text;
        el.append(a);
      } else el.textContent = text;
      out.append(el);
      return el;
    };
    if (!box.value.trim()) return;
    if (!r.candidates.length) {
      line("p", "No match: no message or family of bugs this book knows is in this text.");
      return;
    }
    if (r.own) line("p", `This is ${r.says}: the mistake of a family of this book, in your code.`);
    for (const c of shown(r)) {
      const owner = DATA.owners[c.owner];
      line("p", owner.title, owner.url.replace(DATA.bookUrl, relativeRoot));
      line("p", `Why it matched: ${why(c)}`).className = "casebook-explain-why";
    }
  };
  let relativeRoot = "../";
  const wire = () => {
    const root = document.getElementById("casebook-explain");
    if (!root) return;
    relativeRoot = root.dataset.root || relativeRoot;
    const box = root.querySelector("textarea");
    const out = root.querySelector("output");
    box.addEventListener("input", () => render(box, out));
    render(box, out);
  };
  if (typeof document !== "undefined") document.addEventListener("DOMContentLoaded", wire);
  return { answer, rank, parse };
})();
