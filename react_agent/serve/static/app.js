// The page of `react-agent serve`: a chat box, the live step trace of each run (read from the run's
// Server-Sent Events with fetch, so the bearer token can be sent), approval buttons, the list of runs.
// Plain script, no build step, no network beyond this server. Labels come from static/labels.json.
(function () {
  "use strict";
  const LANG_KEY = "react-agent-lang";
  const TOKEN_KEY = "react-agent-token";
  const RETRIES = 60;
  const RETRY_MS = 1000;
  const body = document.body;
  const $ = (selector) => document.querySelector(selector);
  let labels = {};
  let lang = localStorage.getItem(LANG_KEY) || body.dataset.lang || "en";
  let threadId = newId();
  let shown = null;

  function newId() {
    return "thread-" + Math.random().toString(36).slice(2) + Date.now().toString(36);
  }

  function t(key) {
    return (labels[lang] && labels[lang][key]) || (labels.en && labels.en[key]) || key;
  }

  function applyLabels() {
    document.documentElement.lang = lang;
    document.querySelectorAll("[data-label]").forEach((node) => { node.textContent = t(node.dataset.label); });
    document.querySelectorAll("[data-placeholder]").forEach((node) => { node.placeholder = t(node.dataset.placeholder); });
    document.querySelectorAll("[data-set-lang]").forEach((node) => {
      node.classList.toggle("active", node.dataset.setLang === lang);
    });
    document.querySelectorAll("[data-status]").forEach((node) => { node.textContent = t(node.dataset.status); });
  }

  function headers() {
    const result = { "Content-Type": "application/json" };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) result.Authorization = "Bearer " + token;
    return result;
  }

  function notice(text) {
    const node = $("#notice");
    node.textContent = text || "";
    node.hidden = !text;
  }

  async function api(method, path, data) {
    const response = await fetch(path, { method, headers: headers(), body: data ? JSON.stringify(data) : undefined });
    if (response.status === 401) {
      notice(t("token_needed"));
      throw new Error("401");
    }
    if (!response.ok) {
      const text = await response.text();
      notice(t("failed_request") + ": " + response.status + " " + text);
      throw new Error(String(response.status));
    }
    notice("");
    return response.json();
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function labelled(key, className) {
    const node = el("span", className);
    node.dataset.label = key;
    node.textContent = t(key);
    return node;
  }

  function show(value) {
    return typeof value === "string" ? value : JSON.stringify(value, null, 1);
  }

  function renderStep(trace, step) {
    const card = el("div", "step" + (step.is_error ? " error" : ""));
    card.dataset.index = step.index;
    const head = el("div", "step-head");
    head.append(labelled("step"), el("span", "", String(step.index)));
    const meta = el("span", "step-meta", step.duration_s.toFixed(2) + " ");
    meta.append(labelled("seconds"), document.createTextNode(", " + step.usage.total_tokens + " "), labelled("tokens"));
    if (step.replayed) meta.append(document.createTextNode(" · "), labelled("replayed"));
    head.append(meta);
    const fields = el("dl");
    const rows = [["thought", step.thought, "step-thought", ""], ["action", step.action || "—", "step-action", "code"],
      ["input", show(step.action_input), "step-input", "code"], ["observation", step.observation, "step-observation", ""]];
    if (step.reflection) rows.push(["reflection", step.reflection, "step-reflection", ""]);
    for (const [key, value, name, kind] of rows) {
      const term = el("dt");
      term.append(labelled(key));
      fields.append(term, el("dd", (name + " " + kind).trim(), value));
    }
    card.append(head, fields);
    trace.append(card);
  }

  function renderApproval(trace, runId, approval) {
    const card = el("div", "approval");
    card.dataset.approvalId = approval.id;
    const title = el("strong");
    title.append(labelled("approval_title"));
    const text = el("p");
    text.append(labelled("approval_text"));
    const call = el("pre", "approval-call", approval.tool + "(" + show(approval.input) + ")");
    const buttons = el("div", "approval-buttons");
    const yes = el("button", "approve");
    const no = el("button", "deny");
    yes.type = no.type = "button";
    yes.append(labelled("approve"));
    no.append(labelled("deny"));
    const decide = (approved) => {
      yes.disabled = no.disabled = true;
      api("POST", "runs/" + runId + "/approval", { approved, approval_id: approval.id }).catch(() => {
        yes.disabled = no.disabled = false;
      });
    };
    yes.addEventListener("click", () => decide(true));
    no.addEventListener("click", () => decide(false));
    buttons.append(yes, no);
    card.append(title, text, call, buttons);
    trace.append(card);
  }

  function renderDecision(trace, decision) {
    const card = trace.querySelector('[data-approval-id="' + decision.id + '"]');
    if (!card) return;
    card.querySelectorAll("button").forEach((button) => { button.disabled = true; });
    const key = decision.by === "timeout" ? "timed_out" : decision.approved ? "approved" : "denied";
    const line = el("p", "approval-decision");
    line.dataset.decision = key;
    line.append(labelled(key));
    card.append(line);
  }

  function renderResult(trace, result) {
    const card = el("div", "answer" + (result.status === "finished" ? "" : " failed"), result.output || result.error || "");
    const status = el("span", "status");
    const name = el("span", "run-result-status");
    name.dataset.status = result.status;
    name.textContent = t(result.status);
    status.append(name, document.createTextNode(" · " + result.steps + " "), labelled("steps"),
      document.createTextNode(" · " + result.llm_calls + " "), labelled("model_calls"),
      document.createTextNode(" · " + ((result.usage && result.usage.total_tokens) || 0) + " "), labelled("tokens"));
    if (result.seconds !== null && result.seconds !== undefined) {
      status.append(document.createTextNode(" · " + result.seconds.toFixed(2) + " "), labelled("seconds"));
    }
    card.append(status);
    trace.append(card);
  }

  function parseEvent(block) {
    const event = { event: "message", data: "" };
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      const at = line.indexOf(":");
      const field = at < 0 ? line : line.slice(0, at);
      const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
      if (field === "event") event.event = value;
      else if (field === "data") event.data += value;
      else if (field === "id") event.id = value;
    }
    return event;
  }

  // What a run is doing after each event (shown below its trace until the result).
  const STATES = { queued: "queued", started: "running", approval: "waiting_approval", approval_decided: "running",
    step: "running", result: null };

  function setState(trace, status) {
    let line = trace.querySelector(".run-state");
    if (status === undefined) return;
    if (status === null) {
      if (line) line.remove();
      return;
    }
    if (!line) line = el("div", "run-state");
    line.dataset.status = status;
    line.textContent = t(status) + "…";
    trace.append(line);
  }

  // One pass over the run's event stream; true once its result has come.
  async function readEvents(runId, trace) {
    const response = await fetch("runs/" + runId + "/events", { headers: headers() });
    if (!response.ok) {
      notice(t("failed_request") + ": " + response.status);
      return response.status === 404 || response.status === 401;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = parseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (!event.data) continue;
        const data = JSON.parse(event.data);
        setState(trace, STATES[event.event]);
        if (event.event === "step") renderStep(trace, data);
        else if (event.event === "approval") renderApproval(trace, runId, data);
        else if (event.event === "approval_decided") renderDecision(trace, data);
        else if (event.event === "result") {
          renderResult(trace, data);
          return true;
        }
      }
    }
  }

  // Follow a run to its result. A stream cut short (the server restarted, the network dropped) is read
  // again from its start, since a restarted server resumes the run and numbers its events afresh.
  async function follow(runId, trace) {
    for (let attempt = 0; attempt < RETRIES; attempt++) {
      if (attempt) {
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        if (trace.dataset.run !== shown) return;
        trace.textContent = "";
      }
      try {
        if (await readEvents(runId, trace)) break;
      } catch (error) {
        notice(t("failed_request") + ": " + error.message);
      }
    }
    refreshRuns();
  }

  function startTurn(task, runId) {
    const conversation = $("#conversation");
    conversation.append(el("div", "user", task));
    const trace = el("div", "trace");
    trace.dataset.run = runId;
    conversation.append(trace);
    shown = runId;
    refreshRuns();
    follow(runId, trace).catch((error) => notice(t("failed_request") + ": " + error.message));
  }

  async function send(event) {
    event.preventDefault();
    const box = $("#task");
    const task = box.value.trim();
    if (!task) return;
    const run = await api("POST", "runs", { task, thread_id: threadId });
    box.value = "";
    startTurn(task, run.id);
  }

  async function refreshRuns() {
    let data;
    try {
      data = await api("GET", "runs?limit=50");
    } catch (error) {
      return;
    }
    const list = $("#runs");
    list.textContent = "";
    if (!data.runs.length) list.append(labelled("no_runs"));
    for (const run of data.runs) {
      const item = el("li", run.id === shown ? "current" : "", run.task.length > 70 ? run.task.slice(0, 70) + "…" : run.task);
      item.dataset.run = run.id;
      const status = el("span", "run-status");
      status.dataset.status = run.status;
      status.textContent = t(run.status);
      item.append(status);
      item.addEventListener("click", () => openRun(run));
      list.append(item);
    }
  }

  function openRun(run) {
    $("#conversation").textContent = "";
    threadId = run.thread_id || newId();
    startTurn(run.task, run.id);
    refreshRuns();
  }

  async function start() {
    const response = await fetch("static/labels.json");
    labels = await response.json();
    if (body.dataset.auth === "true") {
      const box = $("#token-box");
      box.hidden = false;
      const input = $("#token");
      input.value = sessionStorage.getItem(TOKEN_KEY) || "";
      input.addEventListener("change", () => {
        sessionStorage.setItem(TOKEN_KEY, input.value.trim());
        notice("");
        refreshRuns();
      });
    }
    document.querySelectorAll("[data-set-lang]").forEach((button) => {
      button.addEventListener("click", () => {
        lang = button.dataset.setLang;
        localStorage.setItem(LANG_KEY, lang);
        applyLabels();
      });
    });
    $("#ask").addEventListener("submit", (event) => send(event).catch(() => {}));
    $("#task").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) $("#ask").requestSubmit();
    });
    $("#new-chat").addEventListener("click", () => {
      threadId = newId();
      shown = null;
      $("#conversation").textContent = "";
      refreshRuns();
    });
    applyLabels();
    try {
      const info = await api("GET", "info");
      $("#agent-name").textContent = info.agent + " · " + info.tools.join(", ");
    } catch (error) { /* shown by api() */ }
    refreshRuns();
    setInterval(refreshRuns, 5000);
    body.dataset.ready = "true";
  }

  start();
})();
