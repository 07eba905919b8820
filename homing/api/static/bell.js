/*
 * Homing's bell (docs/feed.md, "The bell"): plain JavaScript, no build step, no
 * framework. Include it where the bell should be:
 *
 *   <script src="https://homing.example/feed/bell.js"
 *           data-homing-url="https://homing.example" data-token="TOKEN"></script>
 *
 * It draws a button with the unread count and a list of the feed, marks an item read
 * when it is clicked, and follows /feed/stream for new items, reconnecting with
 * Last-Event-ID so it misses none. Item text is only ever set with textContent.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.parentNode) {
    return;
  }
  var base = (script.getAttribute("data-homing-url") || "").replace(/\/+$/, "");
  var token = script.getAttribute("data-token") || "";
  var MAX_BUFFER = 1048576;
  // The highest seq this page has, -1 while unknown (the page was not read): the
  // stream is resumed from it, 0 included, so what came while it was away is shown.
  var lastSeq = -1;
  var unread = 0;
  var retry = 1000;
  var shown = {};

  var root = document.createElement("div");
  root.className = "homing-bell";
  var button = document.createElement("button");
  button.type = "button";
  button.setAttribute("aria-label", "Notifications");
  button.setAttribute("data-homing", "bell");
  var badge = document.createElement("span");
  badge.setAttribute("data-homing", "unread");
  badge.textContent = "0";
  button.appendChild(document.createTextNode("\uD83D\uDD14 "));
  button.appendChild(badge);
  var list = document.createElement("ul");
  list.setAttribute("data-homing", "list");
  list.hidden = true;
  root.appendChild(button);
  root.appendChild(list);
  script.parentNode.insertBefore(root, script.nextSibling);
  button.addEventListener("click", function () {
    list.hidden = !list.hidden;
  });

  function headers(extra) {
    var all = { Authorization: "Bearer " + token };
    for (var name in extra) {
      all[name] = extra[name];
    }
    return all;
  }

  function setUnread(count) {
    unread = Math.max(0, count);
    badge.textContent = String(unread);
  }

  function markRead(item, li) {
    if (li.getAttribute("data-unread") !== "true") {
      return;
    }
    fetch(base + "/feed/" + encodeURIComponent(item.id) + "/read", {
      method: "POST",
      headers: headers({}),
    }).then(function (response) {
      if (response.ok && li.getAttribute("data-unread") === "true") {
        li.removeAttribute("data-unread");
        // While the stream follows, its "unread" event carries the count (taking one
        // off here as well would count this read twice when the event comes first).
        if (root.getAttribute("data-connected") !== "true") {
          setUnread(unread - 1);
        }
      }
    });
  }

  function render(item, first) {
    if (shown[item.id]) {
      return;
    }
    var li = document.createElement("li");
    li.setAttribute("data-homing", "item");
    li.setAttribute("data-id", item.id);
    if (!item.read_at) {
      li.setAttribute("data-unread", "true");
    }
    if (item.title) {
      var title = document.createElement("strong");
      title.textContent = item.title;
      li.appendChild(title);
      li.appendChild(document.createTextNode(" "));
    }
    var body = document.createElement("span");
    body.textContent = item.body;
    li.appendChild(body);
    if (item.url && /^https?:\/\//i.test(item.url)) {
      var link = document.createElement("a");
      link.href = item.url;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      link.textContent = " \u2197";
      li.appendChild(link);
    }
    li.addEventListener("click", function () {
      markRead(item, li);
    });
    shown[item.id] = true;
    if (first && list.firstChild) {
      list.insertBefore(li, list.firstChild);
    } else {
      list.appendChild(li);
    }
    lastSeq = Math.max(lastSeq, item.seq);
  }

  function handle(block) {
    var event = "message";
    var data = "";
    var id = "";
    block.split("\n").forEach(function (line) {
      if (line.indexOf("event: ") === 0) {
        event = line.slice(7);
      } else if (line.indexOf("data: ") === 0) {
        data += line.slice(6);
      } else if (line.indexOf("id: ") === 0) {
        id = line.slice(4);
      }
    });
    if (/^[0-9]{1,18}$/.test(id)) {
      lastSeq = Math.max(lastSeq, Number(id));
    }
    if (!data) {
      return;
    }
    var value = JSON.parse(data);
    if (event === "item") {
      render(value, true);
    } else if (event === "unread") {
      setUnread(value.unread_count);
    }
  }

  function follow(response) {
    if (!response.ok || !response.body) {
      throw new Error("the feed stream answered " + response.status);
    }
    retry = 1000;
    root.setAttribute("data-connected", "true");
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) {
          throw new Error("the feed stream ended");
        }
        buffer += decoder.decode(chunk.value, { stream: true });
        if (buffer.length > MAX_BUFFER) {
          throw new Error("an event too large");
        }
        var at = buffer.indexOf("\n\n");
        while (at >= 0) {
          handle(buffer.slice(0, at));
          buffer = buffer.slice(at + 2);
          at = buffer.indexOf("\n\n");
        }
        return pump();
      });
    }
    return pump();
  }

  function connect() {
    var extra = lastSeq >= 0 ? { "Last-Event-ID": String(lastSeq) } : {};
    fetch(base + "/feed/stream", { headers: headers(extra) })
      .then(follow)
      .catch(function () {
        root.removeAttribute("data-connected");
        setTimeout(connect, retry);
        retry = Math.min(retry * 2, 30000);
      });
  }

  fetch(base + "/feed?limit=20", { headers: headers({}) })
    .then(function (response) {
      if (!response.ok) {
        throw new Error("the feed answered " + response.status);
      }
      return response.json();
    })
    .then(function (page) {
      page.data.forEach(function (item) {
        render(item, false);
      });
      setUnread(page.unread_count);
      lastSeq = Math.max(lastSeq, 0);
    })
    .catch(function () {})
    .then(connect);
})();
