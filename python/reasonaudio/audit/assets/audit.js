// Listening audit page: renders window.REASONAUDIO_AUDIT (cards.js), keeps answers in localStorage
// under the site id, and downloads them as judgments.json. The page never knows which clip is
// relevant; `reasonaudio audit score` compares the answers with the benchmark.
(function () {
  "use strict";
  var data = window.REASONAUDIO_AUDIT;
  var ANSWERS = ["yes", "no", "unsure"];
  var LABELS = { yes: "satisfies", no: "does not", unsure: "unsure" };
  var KEYS = { "1": "yes", y: "yes", "2": "no", n: "no", "3": "unsure", u: "unsure" };
  var cardsEl = document.getElementById("cards");
  if (!data || !Array.isArray(data.cards)) {
    cardsEl.textContent = "cards.js is missing or broken: rebuild the site with `reasonaudio audit`.";
    return;
  }
  var storageKey = "reasonaudio-audit:" + data.site_id;
  var state = { listener: "", current: 0, selected: 0, answers: {} };
  var storage = null;
  try {
    storage = window.localStorage;
    var saved = JSON.parse(storage.getItem(storageKey) || "null");
    if (saved && typeof saved === "object" && saved.answers) {
      state.listener = String(saved.listener || "");
      state.answers = saved.answers;
      state.current = Math.min(Math.max(0, saved.current | 0), data.cards.length - 1);
    }
  } catch (e) {
    storage = null; // file:// storage can be disabled by policy; answers then live until the tab closes
  }
  if (!storage) document.getElementById("storage-warning").hidden = false;

  function save() {
    if (!storage) return;
    try {
      storage.setItem(storageKey, JSON.stringify(state));
    } catch (e) {
      document.getElementById("storage-warning").hidden = false;
    }
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text; // never innerHTML: card text comes from data
    return node;
  }

  function answerOf(card, clipId) {
    var a = state.answers[card.query_id];
    return a ? a[clipId] : undefined;
  }

  function cardDone(card) {
    return card.clips.every(function (c) { return ANSWERS.indexOf(answerOf(card, c.clip_id)) >= 0; });
  }

  // ------------------------------------------------------------------ rendering
  var cardEls = data.cards.map(function (card, i) {
    var section = el("section", { "class": "card", "data-index": String(i), "data-query-id": card.query_id });
    section.appendChild(el("div", { "class": "task" }, card.task + " \u00b7 " + card.query_id));
    section.appendChild(el("p", { "class": "text" }, "\u201c" + card.text + "\u201d"));
    section.appendChild(el("p", { "class": "logic-title" }, "A clip satisfies this description when it:"));
    var logic = el("ul", { "class": "logic" });
    card.logic.forEach(function (line) { logic.appendChild(el("li", {}, line)); });
    section.appendChild(logic);
    var clipsEl = el("div", { "class": "clips" });
    section.appendChild(clipsEl);
    card.clips.forEach(function (clip, j) {
      var box = el("div", { "class": "clip", "data-clip-id": clip.clip_id, "data-position": String(j) });
      box.appendChild(el("span", { "class": "name" }, "Clip " + String.fromCharCode(65 + j)));
      box.appendChild(el("span", { "class": "duration" }, Number(clip.duration_s).toFixed(1) + " s"));
      var audio = el("audio", { controls: "", preload: "metadata", src: clip.audio });
      box.appendChild(audio);
      box.appendChild(el("img", { src: clip.spectrogram, alt: "spectrogram of clip " + String.fromCharCode(65 + j), width: "480", height: "96" }));
      var row = el("div", { "class": "answers", role: "group", "aria-label": "answer for clip " + String.fromCharCode(65 + j) });
      ANSWERS.forEach(function (a, k) {
        var b = el("button", { type: "button", "data-answer": a, "aria-pressed": "false" }, (k + 1) + " " + LABELS[a]);
        b.addEventListener("click", function () { select(j); answer(a, false); });
        row.appendChild(b);
      });
      box.appendChild(row);
      box.addEventListener("click", function () { select(j); });
      clipsEl.appendChild(box);
    });
    cardsEl.appendChild(section);
    return section;
  });

  function refresh() {
    var done = data.cards.filter(cardDone).length;
    document.getElementById("progress").textContent = done + " / " + data.cards.length;
    document.getElementById("position").textContent = "card " + (state.current + 1) + " of " + data.cards.length;
    cardEls.forEach(function (section, i) {
      section.classList.toggle("current", i === state.current);
      var card = data.cards[i];
      Array.prototype.forEach.call(section.querySelectorAll(".clip"), function (box, j) {
        box.classList.toggle("selected", i === state.current && j === state.selected);
        var given = answerOf(card, box.getAttribute("data-clip-id"));
        Array.prototype.forEach.call(box.querySelectorAll("button[data-answer]"), function (b) {
          b.setAttribute("aria-pressed", String(b.getAttribute("data-answer") === given));
        });
      });
    });
  }

  // --------------------------------------------------------------------- actions
  function pauseAll() {
    Array.prototype.forEach.call(document.querySelectorAll("audio"), function (a) { if (!a.paused) a.pause(); });
  }

  function go(index) {
    if (!data.cards.length) return;
    pauseAll();
    state.current = Math.min(Math.max(0, index), data.cards.length - 1);
    state.selected = 0;
    save();
    refresh();
  }

  function select(j) {
    var n = data.cards[state.current].clips.length;
    state.selected = Math.min(Math.max(0, j), n - 1);
    refresh();
  }

  function answer(value, advance) {
    var card = data.cards[state.current];
    var clip = card.clips[state.selected];
    if (!state.answers[card.query_id]) state.answers[card.query_id] = {};
    state.answers[card.query_id][clip.clip_id] = value;
    if (advance && state.selected < card.clips.length - 1) state.selected += 1;
    save();
    refresh();
  }

  function nextOpen() {
    for (var k = 1; k <= data.cards.length; k++) {
      var i = (state.current + k) % data.cards.length;
      if (!cardDone(data.cards[i])) return go(i);
    }
  }

  function togglePlay() {
    var audio = cardEls[state.current].querySelectorAll("audio")[state.selected];
    if (!audio) return;
    if (audio.paused) {
      pauseAll();
      var p = audio.play();
      if (p && p.catch) p.catch(function () {});
    } else {
      audio.pause();
    }
  }

  function judgments() {
    var rows = [];
    data.cards.forEach(function (card) {
      card.clips.forEach(function (clip, j) {
        var a = answerOf(card, clip.clip_id);
        if (ANSWERS.indexOf(a) >= 0) rows.push({ query_id: card.query_id, clip_id: clip.clip_id, position: j, answer: a });
      });
    });
    return {
      format: "reasonaudio-audit-judgments",
      version: 1,
      site_id: data.site_id,
      bench: data.bench,
      params: data.params,
      listener: state.listener,
      saved_at: new Date().toISOString(),
      n_cards: data.cards.length,
      n_cards_answered: data.cards.filter(cardDone).length,
      answers: rows
    };
  }

  function download() {
    var blob = new Blob([JSON.stringify(judgments(), null, 1) + "\n"], { type: "application/json" });
    var url = URL.createObjectURL(blob);
    var a = el("a", { href: url, download: "judgments.json" });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
  }

  // --------------------------------------------------------------------- wiring
  var listener = document.getElementById("listener");
  listener.value = state.listener;
  listener.addEventListener("input", function () { state.listener = listener.value; save(); });
  document.getElementById("bench-name").textContent = data.bench.name;
  document.getElementById("prev").addEventListener("click", function () { go(state.current - 1); });
  document.getElementById("next").addEventListener("click", function () { go(state.current + 1); });
  document.getElementById("next-open").addEventListener("click", nextOpen);
  document.getElementById("download").addEventListener("click", download);

  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) {
      if (ev.key === "Enter" || ev.key === "Escape") t.blur();
      return;
    }
    var key = ev.key;
    var handled = true;
    if (KEYS[key.toLowerCase()]) answer(KEYS[key.toLowerCase()], true);
    else if (key === "ArrowRight") go(state.current + 1);
    else if (key === "ArrowLeft") go(state.current - 1);
    else if (key === "ArrowDown") select(state.selected + 1);
    else if (key === "ArrowUp") select(state.selected - 1);
    else if (key === " ") togglePlay();
    else if (key === "Enter") nextOpen();
    else if (key.toLowerCase() === "d") download();
    else handled = false;
    if (handled) {
      ev.preventDefault();
      if (t && t.blur && t !== document.body) t.blur(); // a focused button would also take Space/Enter
    }
  });

  window.reasonaudioAudit = { judgments: judgments, go: go }; // for tests and the console
  refresh();
})();
