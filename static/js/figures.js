// Draw every Plotly figure a view serialized with json_script: <div data-figure="script-id">.
(function () {
  "use strict";
  var NARROW_PX = 600;
  // A page may ship one template for all its figures (<script id="plotly-template">).
  var shared = document.getElementById("plotly-template");
  var template = shared ? JSON.parse(shared.textContent) : null;

  // Plotly never wraps an axis title: on a phone a long one ran past the figure's edge.
  function wrap(text, max) {
    return String(text).split("<br>").map(function (line) {
      var lines = [], current = "";
      line.split(" ").forEach(function (word) {
        if (current && (current + " " + word).length > max) { lines.push(current); current = word; }
        else current = current ? current + " " + word : word;
      });
      if (current) lines.push(current);
      return lines.join("<br>");
    }).join("<br>");
  }

  function narrowLayout(div, figure, layout, width) {
    var entries = (figure.data || []).filter(function (t) {
      return t.name && t.showlegend !== false;
    }).length;
    var hasLegend = layout.showlegend !== false && entries > 1;
    var room = hasLegend ? 30 + 22 * entries : 0;  // first guess, corrected once drawn
    var height = layout.height || 450;
    // The title as a heading above the chart, where the text wraps by itself (Plotly never
    // wraps a title, and a wrapped one with <br> slid above the figure's top edge).
    var title = layout.title, text = typeof title === "string" ? title : title && title.text;
    if (text) {
      var heading = document.createElement("p");
      heading.className = "chart-title";
      heading.textContent = String(text).replace(/<br\s*\/?>/g, " ").replace(/<[^>]+>/g, "");
      div.parentNode.insertBefore(heading, div);
      layout.title = { text: "" };
    }
    Object.keys(layout).forEach(function (key) {
      if (!/^[xy]axis\d*$/.test(key) || !layout[key]) return;
      var axis = layout[key];
      axis.automargin = true;
      // Rotated category names (regions, sources) stand upright: side by side they overlapped.
      if (key[0] === "x" && axis.tickangle) axis.tickangle = -90;
    });
    if (hasLegend) {
      // Under everything, anchored to the figure's bottom edge (not to the plot, whose
      // tick labels and axis title have a height Plotly knows only once drawn).
      layout.legend = Object.assign({}, layout.legend, {
        orientation: "h", x: 0, xanchor: "left", y: 0, yanchor: "bottom", yref: "container"
      });
    }
    var top = layout.margin && layout.margin.t || 50;
    layout.margin = Object.assign({}, layout.margin, {
      l: 50, r: 10, t: 20, b: (layout.margin && layout.margin.b || 60) + room
    });
    layout.height = height + room - (top - 20);
  }

  // Once drawn, a title reaching under the toolbar's corner moves below it (the toolbar shows
  // on hover and covered the end of long titles).
  function clearToolbar(div) {
    var bar = div.querySelector(".modebar"), title = div.querySelector(".gtitle");
    if (!bar || !title || !div._fullLayout) return null;
    var b = bar.getBoundingClientRect(), t = title.getBoundingClientRect();
    if (!b.width || t.right < b.left || t.top > b.bottom) return null;
    var drop = Math.ceil(b.bottom - t.top) + 4;
    return Plotly.relayout(div, {
      "title.yref": "container", "title.y": 1, "title.yanchor": "top", "title.pad.t": b.height + 8,
      "margin.t": div._fullLayout._size.t + drop, height: div._fullLayout.height + drop
    });
  }

  function isLegendBelow(layout) {
    var legend = layout.legend || {};
    return layout.showlegend !== false && legend.orientation === "h" && legend.y < 0;
  }

  // A legend under the plot anchored to the figure's bottom edge, `perRow` entries a row
  // guessed for its room (clearLegend corrects the guess once drawn).
  function legendUnderAll(figure, layout, perRow) {
    var entries = (figure.data || []).filter(function (t) {
      return t.name && t.showlegend !== false;
    }).length;
    var room = 20 + 22 * Math.ceil(entries / perRow);
    layout.legend = Object.assign({}, layout.legend, {
      orientation: "h", x: 0, xanchor: "left", y: 0, yanchor: "bottom", yref: "container"
    });
    layout.margin = Object.assign({}, layout.margin, {
      b: (layout.margin && layout.margin.b || 60) + room
    });
    layout.height = (layout.height || 450) + room;
  }

  // Once drawn, wrap each axis title to its axis' real length (tick labels took their share).
  function fitAxisTitles(div) {
    var full = div._fullLayout, update = {};
    if (!full) return null;
    Object.keys(full).forEach(function (key) {
      if (!/^[xy]axis\d*$/.test(key) || !full[key] || !full[key].title) return;
      var text = full[key].title.text;
      if (!text) return;
      var span = key[0] === "x" ? full._size.w : full._size.h;
      var wrapped = wrap(text.replace(/<br>/g, " "), Math.max(12, Math.floor(span / 7.2)));
      if (wrapped !== text) update[key + ".title.text"] = wrapped;
    });
    return Object.keys(update).length ? Plotly.relayout(div, update) : null;
  }

  // Once drawn, push the legend below whatever the x axis needed (rotated names, a wrapped
  // title), or pull it up to it: the figure grows or shrinks, the plot keeps its size.
  function clearLegend(div) {
    var legend = div.querySelector(".legend");
    if (!legend || !div._fullLayout) return null;
    var top = legend.getBoundingClientRect().top;
    var bottom = -Infinity;
    div.querySelectorAll(".xtick text, .g-xtitle text, .g-x2title text").forEach(function (el) {
      var box = el.getBoundingClientRect();
      if (box.height) bottom = Math.max(bottom, box.bottom);
    });
    // Grow by any overlap, or give back a gap of more than a line (the room was a guess).
    var overlap = bottom - top + 10;
    if (bottom === -Infinity || (overlap <= 0 && overlap > -20)) return null;
    var full = div._fullLayout;
    return Plotly.relayout(div, { height: full.height + overlap, "margin.b": full._size.b + overlap });
  }

  document.querySelectorAll("[data-figure]").forEach(function (div) {
    var source = document.getElementById(div.dataset.figure);
    if (!source || typeof Plotly === "undefined") return;
    var figure = JSON.parse(source.textContent);
    var layout = figure.layout || {};
    if (template && !layout.template) layout.template = template;
    // Tick labels read like the page's numbers: 1,000 and 2,000, not 1000 and 2000.
    ["xaxis", "yaxis"].forEach(function (key) { layout[key] = layout[key] || {}; });
    Object.keys(layout).forEach(function (key) {
      var axis = layout[key];
      if (/^[xy]axis\d*$/.test(key) && axis.separatethousands === undefined) {
        axis.separatethousands = true;
      }
    });
    // A chart in a closed section has no width yet: the window says which layout it needs.
    var narrow = (div.clientWidth || window.innerWidth) < NARROW_PX;
    if (narrow) narrowLayout(div, figure, layout, div.clientWidth || window.innerWidth);
    var below = narrow || isLegendBelow(layout);
    if (below && !narrow) legendUnderAll(figure, layout, 3);
    div.innerHTML = "";
    // The toolbar shows on hover only, and not at all on a phone, where it covered the title.
    Plotly.newPlot(div, figure.data, layout, {
      responsive: true, displaylogo: false, displayModeBar: narrow ? false : "hover"
    }).then(function () {
      return narrow ? fitAxisTitles(div) : null;
    }).then(function () {
      return below ? clearLegend(div) : null;
    }).then(function () {
      return narrow ? null : clearToolbar(div);
    }).then(function () {
      div.dataset.drawn = "true";
    });
  });
})();
