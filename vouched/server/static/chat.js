// The vouched chat page: POST /v1/ask, read its Server-Sent Events from a ReadableStream, and
// render each released sentence as it arrives. No framework, no build step, no external asset.
"use strict";

(() => {
  const CONFIG = JSON.parse(document.getElementById("vouched-config").textContent || "{}");
  const RTL_LANGS = new Set(["fa", "ar", "he", "ur"]);
  const RTL_CHAR = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/;
  const STRONG_CHAR = /[A-Za-z\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF\u0590-\u08FF\u0900-\u097F\u3040-\u9FFF\uFB1D-\uFDFF\uFE70-\uFEFF]/;

  const TEXT = {
    en: {
      title: "Ask", title_subject: "Ask about {subject}", language: "Language", skip: "Skip to the question box",
      lede: "Answers come only from this site's own pages; every sentence is checked against the sources it cites. Some questions are declined rather than guessed.",
      conversation: "Conversation", suggested: "Suggested questions", your_question: "Your question",
      placeholder: "Ask a question…", ask: "Ask", stop: "Stop", hint: "Enter sends · Shift+Enter adds a line · Esc stops an answer",
      sources: "Sources", notice: "Notice", declined: "Declined", error: "Error", stopped: "Stopped: the rest of this answer was not requested.",
      too_long: "The question is too long ({n} of {max} bytes).", rate: "Too many questions from this address. Try again in {s} s.",
      failed: "The answer could not be completed. Please try again.", you: "You", assistant: "Answer", done: "Answer complete.",
    },
    fa: {
      title: "پرسش", title_subject: "پرسش درباره‌ی {subject}", language: "زبان", skip: "رفتن به کادر پرسش",
      lede: "پاسخ‌ها فقط از صفحه‌های همین سایت می‌آیند و هر جمله با منبعی که به آن استناد می‌کند سنجیده می‌شود. به برخی پرسش‌ها به‌جای حدس زدن پاسخ داده نمی‌شود.",
      conversation: "گفت‌وگو", suggested: "پرسش‌های پیشنهادی", your_question: "پرسش شما",
      placeholder: "پرسش خود را بنویسید…", ask: "بپرس", stop: "توقف", hint: "Enter می‌فرستد · Shift+Enter خط تازه · Esc پاسخ را متوقف می‌کند",
      sources: "منابع", notice: "توجه", declined: "بدون پاسخ", error: "خطا", stopped: "متوقف شد: ادامه‌ی این پاسخ درخواست نشد.",
      too_long: "پرسش بیش از اندازه بلند است ({n} از {max} بایت).", rate: "پرسش‌های این نشانی بیش از حد مجاز است. {s} ثانیه‌ی دیگر دوباره تلاش کنید.",
      failed: "پاسخ کامل نشد. لطفاً دوباره تلاش کنید.", you: "شما", assistant: "پاسخ", done: "پاسخ کامل شد.",
    },
    es: {
      title: "Preguntar", title_subject: "Pregunte sobre {subject}", language: "Idioma", skip: "Ir al cuadro de pregunta",
      lede: "Las respuestas salen solo de las páginas de este sitio; cada frase se comprueba con las fuentes que cita. Algunas preguntas se declinan en lugar de adivinar.",
      conversation: "Conversación", suggested: "Preguntas sugeridas", your_question: "Su pregunta",
      placeholder: "Escriba su pregunta…", ask: "Preguntar", stop: "Detener", hint: "Intro envía · Mayús+Intro añade una línea · Esc detiene la respuesta",
      sources: "Fuentes", notice: "Aviso", declined: "Sin respuesta", error: "Error", stopped: "Detenida: no se pidió el resto de la respuesta.",
      too_long: "La pregunta es demasiado larga ({n} de {max} bytes).", rate: "Demasiadas preguntas desde esta dirección. Inténtelo de nuevo en {s} s.",
      failed: "No se pudo completar la respuesta. Inténtelo de nuevo.", you: "Usted", assistant: "Respuesta", done: "Respuesta completa.",
    },
    ar: {
      title: "اسأل", title_subject: "اسأل عن {subject}", language: "اللغة", skip: "انتقل إلى مربع السؤال",
      lede: "تأتي الإجابات من صفحات هذا الموقع فقط، وتُفحص كل جملة مقابل المصادر التي تستشهد بها. يُعتذر عن بعض الأسئلة بدلاً من التخمين.",
      conversation: "المحادثة", suggested: "أسئلة مقترحة", your_question: "سؤالك",
      placeholder: "اكتب سؤالك…", ask: "اسأل", stop: "إيقاف", hint: "Enter للإرسال · Shift+Enter لسطر جديد · Esc لإيقاف الإجابة",
      sources: "المصادر", notice: "تنبيه", declined: "بدون إجابة", error: "خطأ", stopped: "توقفت: لم يُطلب باقي الإجابة.",
      too_long: "السؤال طويل جداً ({n} من {max} بايت).", rate: "أسئلة كثيرة من هذا العنوان. حاول مجدداً بعد {s} ث.",
      failed: "تعذر إكمال الإجابة. حاول مرة أخرى.", you: "أنت", assistant: "الإجابة", done: "اكتملت الإجابة.",
    },
  };

  const $ = (id) => document.getElementById(id);
  const log = $("log"), form = $("ask"), box = $("question"), send = $("send"), picker = $("ui-lang");
  let uiLang = pickLanguage();
  let previous = null;     // {question, answer} of the last exchange, for follow-ups
  let controller = null;   // AbortController of the answer being streamed
  let counter = 0;

  function t(key, vars = {}) {
    const table = TEXT[uiLang] || TEXT.en;
    return (table[key] || TEXT.en[key] || key).replace(/\{(\w+)\}/g, (_, k) => String(vars[k] ?? ""));
  }

  function pickLanguage() {
    const served = CONFIG.languages || ["en"];
    const wanted = (navigator.languages || [navigator.language || ""]).map((l) => l.slice(0, 2));
    return wanted.find((l) => served.includes(l)) || CONFIG.default_language || served[0] || "en";
  }

  function dirOf(text) {
    const m = (text || "").match(STRONG_CHAR);
    return m && RTL_CHAR.test(m[0]) ? "rtl" : "ltr";
  }

  function el(tag, attrs = {}, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // ---- page chrome, in the reader's language ------------------------------------------------
  function applyLanguage() {
    document.documentElement.lang = uiLang;
    document.documentElement.dir = RTL_LANGS.has(uiLang) ? "rtl" : "ltr";
    for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
    for (const node of document.querySelectorAll("[data-i18n-label]")) node.setAttribute("aria-label", t(node.dataset.i18nLabel));
    for (const node of document.querySelectorAll("[data-i18n-placeholder]")) node.placeholder = t(node.dataset.i18nPlaceholder);
    $("title").textContent = CONFIG.subject ? t("title_subject", { subject: CONFIG.subject }) : t("title");
    document.title = $("title").textContent;
    send.textContent = controller ? t("stop") : t("ask");
    const holder = $("suggestions");
    holder.replaceChildren();
    const suggested = (CONFIG.suggested_questions || {})[uiLang] || [];
    for (const q of suggested) {
      const b = el("button", { type: "button", dir: dirOf(q) }, q);
      b.addEventListener("click", () => { box.value = q; ask(); });
      holder.append(b);
    }
    holder.hidden = suggested.length === 0;
  }

  function fillPicker() {
    let names = null;
    try { names = new Intl.DisplayNames([uiLang], { type: "language" }); } catch (_) { names = null; }
    for (const code of CONFIG.languages || ["en"]) {
      let label = code;
      try { label = (names && names.of(code)) || code; } catch (_) { label = code; }
      const opt = el("option", { value: code }, label);
      if (code === uiLang) opt.selected = true;
      picker.append(opt);
    }
    picker.addEventListener("change", () => { uiLang = picker.value; applyLanguage(); });
  }

  // ---- Server-Sent Events over fetch --------------------------------------------------------
  async function* readEvents(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (!line || line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          let value = colon < 0 ? "" : line.slice(colon + 1);
          if (value.startsWith(" ")) value = value.slice(1);
          if (field === "event") event = value;
          else if (field === "data") data.push(value);
        }
        if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
      }
    }
  }

  // ---- one exchange -------------------------------------------------------------------------
  function addUser(question) {
    const m = el("div", { class: "msg user", dir: dirOf(question) });
    m.append(el("span", { class: "visually-hidden" }, t("you") + ": "), document.createTextNode(question));
    log.append(m);
  }

  function addBot(question) {
    const id = `a${++counter}`;
    const m = el("article", { class: "msg bot", id, dir: dirOf(question), "aria-busy": "true", "aria-label": t("assistant") });
    const answer = el("p", { class: "answer" });
    m.append(answer);
    log.append(m);
    return { id, node: m, answer, sentences: [] };
  }

  function addBlock(bot, kind, text, tag) {
    const p = el("p", { class: kind, dir: dirOf(text), role: kind === "error" ? "alert" : "note" });
    p.append(el("span", { class: "tag" }, tag), document.createTextNode(text));
    bot.node.append(p);
    return p;
  }

  function addSentence(bot, ev) {
    if (!bot.sentences.length) bot.answer.setAttribute("dir", dirOf(ev.text));
    if (bot.sentences.length) bot.answer.append(" ");
    // A code block, table or list item keeps its lines (the gate released it whole).
    const block = ev.text.includes("\n") || ev.text.startsWith("- ");
    const span = el("span", { class: block ? "sentence block" : "sentence" }, ev.text);
    for (const n of ev.sources || []) {
      const sup = el("sup");
      sup.append(el("a", { href: `#${bot.id}-src-${n}`, "aria-label": `${t("sources")} ${n}` }, String(n)));
      span.append(sup);
    }
    bot.answer.append(span);
    bot.sentences.push(ev.text);
  }

  function safeHref(url) {
    try {
      const u = new URL(url, location.href);
      return ["http:", "https:"].includes(u.protocol) ? u.href : null;
    } catch (_) { return null; }
  }

  function addSources(bot, sources) {
    if (!sources || !sources.length) return;
    const box = el("section", { class: "sources" });
    box.append(el("h2", {}, t("sources")));
    const list = el("ol");
    for (const s of sources) {
      const li = el("li", { id: `${bot.id}-src-${s.number}`, value: String(s.number), dir: "auto" });
      const href = s.url ? safeHref(s.url) : null;
      li.append(href ? el("a", { href, rel: "noopener" }, s.title) : el("span", { class: "title" }, s.title));
      const meta = [s.section, s.date].filter(Boolean).join(" · ");
      if (meta) li.append(" ", el("span", { class: "meta" }, "— " + meta));
      list.append(li);
    }
    box.append(list);
    bot.node.append(box);
  }

  function finish(bot, done) {
    if (done.lang) bot.node.setAttribute("dir", RTL_LANGS.has(done.lang) ? "rtl" : "ltr");
    bot.node.dataset.outcome = done.outcome;
    addSources(bot, done.sources);
  }

  async function failure(bot, response) {
    let message = t("failed");
    if (response.status === 429) {
      message = t("rate", { s: response.headers.get("Retry-After") || "60" });
    } else {
      try {
        const body = await response.json();
        if (body && body.error && response.status < 500) message = body.error.message;
      } catch (_) { /* keep the generic text */ }
    }
    addBlock(bot, "error", message, t("error"));
  }

  function busy(on) {
    send.textContent = on ? t("stop") : t("ask");
    send.classList.toggle("stop", on);
    send.setAttribute("type", on ? "button" : "submit");
  }

  async function ask() {
    const question = box.value.trim();
    if (!question || controller) return;
    const size = new TextEncoder().encode(question).length;
    const max = CONFIG.max_question_bytes || Infinity;
    addUser(question);
    const bot = addBot(question);
    box.value = "";
    box.focus();
    if (size > max) {
      addBlock(bot, "error", t("too_long", { n: size, max }), t("error"));
      bot.node.setAttribute("aria-busy", "false");
      return;
    }
    controller = new AbortController();
    busy(true);
    const body = { question };
    if (previous) body.previous = previous;
    let gotDone = false;
    try {
      const response = await fetch("/v1/ask", {
        method: "POST", headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify(body), signal: controller.signal,
      });
      if (!response.ok) {
        await failure(bot, response);
      } else {
        for await (const { event, data } of readEvents(response)) {
          if (event === "sentence") addSentence(bot, data);
          else if (event === "notice") addBlock(bot, `notice notice-${data.kind}`, data.text, t("notice"));
          else if (event === "refusal") addBlock(bot, "refusal", data.text, t("declined"));
          else if (event === "done") { finish(bot, data); gotDone = true; }
          else if (event === "error") addBlock(bot, "error", t("failed"), t("error"));
          bot.node.scrollIntoView({ block: "end" });
        }
      }
    } catch (err) {
      if (err && err.name === "AbortError") addBlock(bot, "notice notice-stopped", t("stopped"), t("notice"));
      else addBlock(bot, "error", t("failed"), t("error"));
    } finally {
      controller = null;
      busy(false);
      bot.node.setAttribute("aria-busy", "false");
      $("status").textContent = t("done");
      previous = gotDone ? trimTurn(question, bot.sentences.join(" ")) : previous;
      box.focus();
    }
  }

  function trimTurn(question, answer) {
    const max = CONFIG.max_history_bytes || 8000;
    const enc = new TextEncoder();
    while (answer && enc.encode(question + answer).length > max) answer = answer.slice(0, Math.floor(answer.length * 0.8));
    return enc.encode(question).length > max ? null : { question, answer };
  }

  // ---- keyboard -----------------------------------------------------------------------------
  form.addEventListener("submit", (e) => { e.preventDefault(); ask(); });
  send.addEventListener("click", (e) => { if (controller) { e.preventDefault(); controller.abort(); } });
  box.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); ask(); }
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && controller) controller.abort(); });

  fillPicker();
  applyLanguage();
  box.focus();
})();
