/// The one first-party script: follows a challenge over SSE and submits the page's form when it leaves PENDING,
/// enables the copy button, and runs the wait countdown. Pages work without it.
enum StaticScript {
    static let path = "/static/keyward.js"

    static let source = #"""
    (function () {
      "use strict";
      var watcher = document.querySelector("[data-events-url]");
      if (watcher && window.EventSource) {
        var form = document.getElementById(watcher.getAttribute("data-submit-form"));
        var live = document.getElementById("status-live");
        var submit = function () { if (form) { form.submit(); } };
        var follow = function () {
          var source = new EventSource(watcher.getAttribute("data-events-url"));
          source.addEventListener("status", function (event) {
            var message;
            try { message = JSON.parse(event.data); } catch (e) { return; }
            if (message.status === "PENDING") { return; }
            source.close();
            // A busy node turned the stream away: come back later rather than reloading the page at once.
            if (message.status === "TOO_MANY_CONNECTIONS") {
              setTimeout(follow, message.retryAfterMillis || 3000);
              return;
            }
            if (live) { live.textContent = "Your phone answered. Continuing…"; }
            submit();
          });
          // A stream the server refused (EventSource gives up on an error status): ask the server instead, as the
          // page without JavaScript does.
          source.addEventListener("error", function () {
            if (source.readyState === EventSource.CLOSED) { setTimeout(submit, 5000); }
          });
        };
        follow();
      }
      var copy = document.querySelector("[data-copy-target]");
      if (copy && navigator.clipboard) {
        copy.hidden = false;
        copy.addEventListener("click", function () {
          var field = document.getElementById(copy.getAttribute("data-copy-target"));
          navigator.clipboard.writeText(field.value).then(function () { copy.textContent = "Copied"; });
        });
      }
      var wait = document.querySelector("[data-wait-seconds]");
      if (wait) {
        var left = parseInt(wait.getAttribute("data-wait-seconds"), 10);
        var button = document.getElementById(wait.getAttribute("data-enable"));
        var tick = function () {
          if (left <= 0) { if (button) { button.disabled = false; } wait.textContent = "You can try again now."; return; }
          if (button) { button.disabled = true; }
          wait.textContent = "You can try again in " + left + " seconds.";
          left -= 1;
          setTimeout(tick, 1000);
        };
        tick();
      }
    })();
    """#
}
