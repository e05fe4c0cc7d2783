// Laid into a copy of a page runbook wrote, run by headless Chromium once the page is laid out:
// what a reader would see as broken, measured in the DOM, written as JSON into
// <pre id="page-check"> for the test to read from the dumped DOM.
(() => {
  const width = document.documentElement.clientWidth;
  const problems = [];
  const skip = new Set(["SCRIPT", "STYLE", "TITLE", "HEAD", "META"]);
  const name = (el) => {
    const cls = el.getAttribute("class");
    const text = (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 50);
    return `<${el.tagName.toLowerCase()}${cls ? " ." + cls.trim().split(/\s+/).join(".") : ""}> "${text}"`;
  };
  const px = (n) => Math.round(n * 10) / 10;
  if (document.documentElement.scrollWidth > width) {
    problems.push(`the page scrolls sideways: ${document.documentElement.scrollWidth}px in a ${width}px window`);
  }
  const elements = [...document.body.querySelectorAll("*")].filter(
    (el) => !skip.has(el.tagName.toUpperCase()) && !el.closest("title") && !el.closest("#page-check")
  );
  for (const el of elements) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < -0.5 || r.right > width + 0.5) {
      problems.push(`${name(el)} leaves the window: ${px(r.left)}..${px(r.right)} of ${width}px`);
    }
    const parent = el.parentElement;
    if (parent && parent !== document.body && parent !== document.documentElement) {
      const p = parent.getBoundingClientRect();
      if ((p.width > 0 || p.height > 0) && (r.left < p.left - 0.5 || r.right > p.right + 0.5)) {
        problems.push(`${name(el)} overflows ${name(parent)}: ${px(r.left)}..${px(r.right)} in ${px(p.left)}..${px(p.right)}`);
      }
    }
    if (!(el instanceof SVGElement) && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
      problems.push(`${name(el)} holds content wider than itself: ${el.scrollWidth}px in ${el.clientWidth}px`);
    }
  }
  // Every text a reader sees, as boxes: each line of an HTML text, each SVG label.
  const boxes = [];
  for (const t of document.querySelectorAll("svg text")) {
    boxes.push({ owner: t, rect: t.getBoundingClientRect() });
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!node.textContent.trim() || !parent || parent.closest("svg, title, style, script, #page-check")) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) {
      if (rect.width > 0 && rect.height > 0) boxes.push({ owner: node, rect });
    }
  }
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.owner === b.owner) continue;
      const w = Math.min(a.rect.right, b.rect.right) - Math.max(a.rect.left, b.rect.left);
      const h = Math.min(a.rect.bottom, b.rect.bottom) - Math.max(a.rect.top, b.rect.top);
      if (w > 1 && h > 1) {
        const text = (o) => JSON.stringify((o.textContent || "").trim().slice(0, 40));
        problems.push(`text ${text(a.owner)} overlaps text ${text(b.owner)} by ${px(w)}x${px(h)}px`);
      }
    }
  }
  // The numbers and colours the page shows, by what they are.
  const figures = {};
  for (const el of document.querySelectorAll("[data-figure], [data-key]")) {
    const key = el.getAttribute("data-figure") || "card:" + el.getAttribute("data-key");
    const value = el.matches("g") ? el.querySelector("text.value") : el;
    figures[key] = (value.textContent || "").trim();
  }
  const fills = {};
  for (const g of document.querySelectorAll('g[data-figure^="outcome:"]')) {
    fills[g.getAttribute("data-figure").slice(8)] = getComputedStyle(g.querySelector("rect")).fill;
  }
  // Each chart's value axis, and its labels: what is shown, and the whole text on hover.
  const charts = [...document.querySelectorAll("svg.chart")].map((svg) => ({
    name: svg.getAttribute("aria-label"),
    axis: [...svg.querySelectorAll("text.axis-value")].map((t) => t.textContent),
    labels: [...svg.querySelectorAll("text.label")].map((t) => {
      const title = t.querySelector("title");
      const whole = title ? title.textContent : null;
      const shown = [...t.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join("");
      return { shown, whole };
    }),
  }));
  const result = {
    charts,
    width,
    dark: matchMedia("(prefers-color-scheme: dark)").matches,
    background: getComputedStyle(document.documentElement).backgroundColor,
    text: getComputedStyle(document.body).color,
    scripts: document.scripts.length,
    // What would fetch something: an address in an element, or in the style sheet.
    fetching:
      document.querySelectorAll("[src], [href], [srcset], [poster], [data], link, iframe, object, embed").length +
      [...document.querySelectorAll("style")].filter((s) => /url\(|@import/.test(s.textContent)).length,
    // Elements a foreign string could have made, had it not been escaped.
    foreign_elements: document.querySelectorAll("img, b, a, iframe, object, embed, form, script:not(#page-checker)").length,
    problems,
    figures,
    fills,
  };
  const out = document.createElement("pre");
  out.id = "page-check";
  // `<`, `>` and `&` spelled as JSON escapes: the dumped DOM holds the JSON as it is.
  out.textContent = JSON.stringify(result).replace(/[<>&]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
  document.body.appendChild(out);
})();
