/// The one first-party script: follows a challenge over SSE and submits the page's form when it leaves PENDING,
/// enables the copy button, runs the passkey ceremonies (sign-in, autofill, the second step, adding one), and runs
/// the wait countdown. Pages work without it; passkeys need it.
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
      // Passkeys: the ceremonies run here against the JSON endpoints, in WebAuthn Level 3's JSON forms. Byte strings
      // are converted by hand where the browser lacks PublicKeyCredential.parse…FromJSON and toJSON.
      var toBytes = function (text) {
        var base64 = text.replace(/-/g, "+").replace(/_/g, "/");
        while (base64.length % 4) { base64 += "="; }
        var binary = atob(base64), bytes = new Uint8Array(binary.length);
        for (var i = 0; i < binary.length; i += 1) { bytes[i] = binary.charCodeAt(i); }
        return bytes.buffer;
      };
      var toText = function (buffer) {
        var bytes = new Uint8Array(buffer), binary = "";
        for (var i = 0; i < bytes.length; i += 1) { binary += String.fromCharCode(bytes[i]); }
        return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      };
      var descriptors = function (list) {
        return (list || []).map(function (item) { return { type: item.type, id: toBytes(item.id), transports: item.transports }; });
      };
      var creationOptions = function (json) {
        if (PublicKeyCredential.parseCreationOptionsFromJSON) { return PublicKeyCredential.parseCreationOptionsFromJSON(json); }
        var options = Object.assign({}, json);
        options.challenge = toBytes(json.challenge);
        options.user = Object.assign({}, json.user, { id: toBytes(json.user.id) });
        options.excludeCredentials = descriptors(json.excludeCredentials);
        return options;
      };
      var requestOptions = function (json) {
        if (PublicKeyCredential.parseRequestOptionsFromJSON) { return PublicKeyCredential.parseRequestOptionsFromJSON(json); }
        var options = Object.assign({}, json);
        options.challenge = toBytes(json.challenge);
        options.allowCredentials = descriptors(json.allowCredentials);
        return options;
      };
      var credentialJSON = function (credential) {
        if (credential.toJSON) { return credential.toJSON(); }
        var response = credential.response, json = { id: credential.id, rawId: toText(credential.rawId), type: credential.type, response: {
          clientDataJSON: toText(response.clientDataJSON) }, clientExtensionResults: credential.getClientExtensionResults() };
        if (response.attestationObject) {
          json.response.attestationObject = toText(response.attestationObject);
          if (response.getTransports) { json.response.transports = response.getTransports(); }
        } else {
          json.response.authenticatorData = toText(response.authenticatorData);
          json.response.signature = toText(response.signature);
          if (response.userHandle) { json.response.userHandle = toText(response.userHandle); }
        }
        return json;
      };
      var postJSON = function (url, csrf, body) {
        return fetch(url, { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
          body: JSON.stringify(body) }).then(function (response) {
          return response.json().then(function (json) {
            if (!response.ok) { var error = new Error(json.message || "The server refused the passkey."); error.code = json.reason || json.error; throw error; }
            return json;
          });
        });
      };
      var report = function (status, error) {
        if (!status) { return; }
        // A ceremony the person closed, or a browser already asking: nothing went wrong.
        if (error && (error.name === "NotAllowedError" || error.name === "AbortError")) { status.textContent = "The passkey was not used."; return; }
        status.textContent = error && error.message ? error.message : "Something went wrong with the passkey. Try again.";
        status.className = "error";
      };
      var signInWith = function (area, mediation, signal) {
        var csrf = area.getAttribute("data-csrf"), status = document.getElementById("passkey-status");
        return postJSON(area.getAttribute("data-options-url"), csrf, {}).then(function (options) {
          var request = { publicKey: requestOptions(options) };
          if (mediation) { request.mediation = mediation; request.signal = signal; }
          return navigator.credentials.get(request);
        }).then(function (credential) {
          if (status) { status.className = "muted"; status.textContent = "Signing in…"; }
          return postJSON(area.getAttribute("data-url"), csrf, credentialJSON(credential));
        }).then(function (answer) {
          // The server answers a path of this site; anything else is not followed.
          if (typeof answer.next !== "string" || answer.next.charAt(0) !== "/" || /^\/[\/\\]/.test(answer.next)) { throw new Error("Unexpected answer."); }
          window.location.assign(answer.next);
        });
      };
      var passkeys = window.PublicKeyCredential && window.fetch && navigator.credentials;
      var signInArea = document.querySelector("[data-passkey-signin], [data-passkey-step]");
      if (signInArea && passkeys) {
        var signInButton = document.getElementById("passkey-sign-in") || document.getElementById("passkey-confirm");
        var autofill = null;
        if (signInArea.hasAttribute("data-conditional") && PublicKeyCredential.isConditionalMediationAvailable) {
          PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
            if (!available) { return; }
            autofill = new AbortController();
            signInWith(signInArea, "conditional", autofill.signal).catch(function (error) {
              if (error.name !== "AbortError") { report(document.getElementById("passkey-status"), error); }
            });
          });
        }
        if (signInButton) {
          signInButton.hidden = false;
          signInButton.addEventListener("click", function () {
            // A pending autofill request holds the browser's one ceremony: end it before asking.
            if (autofill) { autofill.abort(); autofill = null; }
            signInButton.disabled = true;
            signInWith(signInArea).catch(function (error) { report(document.getElementById("passkey-status"), error); })
              .then(function () { signInButton.disabled = false; });
          });
        }
      }
      var registerArea = document.querySelector("[data-passkey-register]");
      if (registerArea && passkeys) {
        var addButton = document.getElementById("add-passkey");
        addButton.hidden = false;
        addButton.addEventListener("click", function () {
          var csrf = registerArea.getAttribute("data-csrf"), status = document.getElementById("passkey-status");
          var name = document.getElementById("passkey-name");
          addButton.disabled = true;
          postJSON(registerArea.getAttribute("data-options-url"), csrf, {}).then(function (options) {
            return navigator.credentials.create({ publicKey: creationOptions(options) });
          }).then(function (credential) {
            var body = credentialJSON(credential);
            if (name && name.value) { body.name = name.value; }
            return postJSON(registerArea.getAttribute("data-url"), csrf, body);
          }).then(function () {
            window.location.assign(window.location.pathname + "?notice=passkey-added");
          }).catch(function (error) { report(status, error); addButton.disabled = false; });
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
