// The overview's chart: draws the series of the page's own table (one row
// per day, data-t the day's midnight in Unix seconds, data-v the value)
// with the vendored uPlot, inside the <figure>. Without JavaScript the table
// is the chart's content; with it, the table folds under the chart. The
// metric selector submits itself on change.
(function () {
  "use strict";
  function formatter(money, lang) {
    if (money) {
      var cur = new Intl.NumberFormat(lang, { style: "currency", currency: "BRL" });
      return function (v) { return cur.format(v / 100); };
    }
    var num = new Intl.NumberFormat(lang, { maximumFractionDigits: 0 });
    return function (v) { return num.format(v); };
  }
  function draw(fig) {
    var holder = fig.querySelector("[data-chart]");
    if (!holder || typeof uPlot !== "function") { return; }
    var xs = [], ys = [];
    fig.querySelectorAll("tbody tr[data-t]").forEach(function (tr) {
      xs.push(Number(tr.getAttribute("data-t")));
      ys.push(Number(tr.getAttribute("data-v")));
    });
    var lang = document.documentElement.lang || "en";
    var money = fig.getAttribute("data-money") === "1";
    var fmt = formatter(money, lang);
    var zone = fig.getAttribute("data-zone") || "America/Sao_Paulo";
    // A day as the dashboard writes it everywhere (format.go, dayLayouts):
    // two digits for the day and the month, in the language's order,
    // 01/12/2026 or 12/01/2026; on the time axis without the year, 01/12 or
    // 12/01 (uPlot's own labels are US and unpadded: 12/1); a month when the
    // ticks are a month or more apart.
    var dayFmt = new Intl.DateTimeFormat(lang, { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" });
    var tickDay = new Intl.DateTimeFormat(lang, { timeZone: zone, month: "2-digit", day: "2-digit" });
    var tickMonth = new Intl.DateTimeFormat(lang, { timeZone: zone, month: "short", year: "numeric" });
    var ticks = function (u, splits, axis, space, incr) {
      var f = incr >= 28 * 86400 ? tickMonth : tickDay;
      return splits.map(function (ts) { return f.format(new Date(ts * 1e3)); });
    };
    var width = function () { return Math.max(holder.clientWidth, 300); };
    var opts = {
      width: width(),
      height: 260,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), zone); },
      scales: { x: { time: true }, y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.1 : 1]; } } },
      series: [
        { label: fig.getAttribute("data-day-label") || "",
          value: function (u, ts) { return ts == null ? "—" : dayFmt.format(new Date(ts * 1e3)); } },
        {
          label: fig.getAttribute("data-label") || "",
          stroke: "#1f5fbf",
          fill: "rgba(31, 95, 191, 0.12)",
          width: 2,
          points: { show: xs.length <= 31 },
          value: function (u, v) { return v == null ? "—" : fmt(v); }
        }
      ],
      axes: [
        { values: ticks },
        { size: money ? 90 : 50, values: function (u, splits) { return splits.map(fmt); },
          incrs: money ? undefined : [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000] }
      ]
    };
    var plot = new uPlot(opts, [xs, ys], holder);
    var details = fig.querySelector("details.chart-data");
    if (details) { details.open = false; }
    window.addEventListener("resize", function () { plot.setSize({ width: width(), height: 260 }); });
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("figure.chart").forEach(draw);
    document.querySelectorAll("form[data-autosubmit] select").forEach(function (s) {
      s.addEventListener("change", function () { s.form.requestSubmit ? s.form.requestSubmit() : s.form.submit(); });
    });
  });
})();
