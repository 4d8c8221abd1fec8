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
        var source = new EventSource(watcher.getAttribute("data-events-url"));
        source.addEventListener("status", function (event) {
          var status;
          try { status = JSON.parse(event.data).status; } catch (e) { return; }
          if (status === "PENDING") { return; }
          source.close();
          if (live) { live.textContent = "Your phone answered. Continuing…"; }
          if (form) { form.submit(); }
        });
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
