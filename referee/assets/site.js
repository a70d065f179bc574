// The results site's tables: a click on a header (or Enter on it) sorts by that column,
// numbers as numbers, and a second click reverses; a select with data-filter shows only
// the rows whose data-ATTRIBUTE holds the chosen value (a space-separated list, or one value);
// a box that scrolls sideways (a table wider than the window) shows the hint above it; on a
// phone, a table's button switches between its brief columns and every column.
"use strict";
(function () {
  function value(row, k, numeric) {
    const cell = row.cells[k];
    const v = cell.dataset.v !== undefined && cell.dataset.v !== "" ? cell.dataset.v : cell.textContent;
    return numeric ? Number(v) : v.toLowerCase();
  }
  function sortBy(th) {
    const tableEl = th.closest("table");
    const k = th.cellIndex;
    const numeric = th.dataset.type === "num";
    const up = th.getAttribute("aria-sort") !== "ascending";
    tableEl.querySelectorAll("th").forEach((h) => h.removeAttribute("aria-sort"));
    th.setAttribute("aria-sort", up ? "ascending" : "descending");
    const body = tableEl.tBodies[0];
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = value(a, k, numeric), y = value(b, k, numeric);
      const order = x < y ? -1 : x > y ? 1 : 0;
      return up ? order : -order;
    });
    rows.forEach((r) => body.appendChild(r));
  }
  function filter(box) {
    const tableEl = document.getElementById(box.dataset.table);
    const chosen = Array.from(box.querySelectorAll("select[data-filter]"))
      .filter((s) => s.value !== "")
      .map((s) => [s.dataset.filter, s.value]);
    let shown = 0;
    Array.from(tableEl.tBodies[0].rows).forEach((row) => {
      const ok = chosen.every(([key, want]) => (row.dataset[key] || "").split(" ").includes(want));
      row.hidden = !ok;
      if (ok) shown++;
    });
    const count = box.querySelector(".count");
    if (count) count.textContent = shown + " of " + tableEl.tBodies[0].rows.length + " games";
  }
  document.querySelectorAll("table.sortable th").forEach((th) => {
    th.addEventListener("click", () => sortBy(th));
    th.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        sortBy(th);
      }
    });
  });
  document.querySelectorAll(".filters").forEach((box) => {
    box.querySelectorAll("select").forEach((s) => s.addEventListener("change", () => filter(box)));
    filter(box);
  });
  // A table with a brief (a phone shows a few of its columns): its button shows every
  // column, as cards, and the brief again.
  document.querySelectorAll("button.columns").forEach((button) => {
    const tableEl = document.getElementById(button.dataset.table);
    button.setAttribute("aria-expanded", "false");
    button.addEventListener("click", () => {
      const brief = tableEl.classList.toggle("brief");
      button.textContent = brief ? "every column" : "fewer columns";
      button.setAttribute("aria-expanded", brief ? "false" : "true");
      hints();
    });
  });
  // A box wider than the window scrolls sideways: its hint (the element before it) says so.
  function hints() {
    document.querySelectorAll(".scroll").forEach((box) => {
      const hint = box.previousElementSibling;
      if (hint && hint.classList.contains("scroll-hint")) hint.hidden = box.scrollWidth <= box.clientWidth;
    });
  }
  window.addEventListener("resize", hints);
  hints();
})();
