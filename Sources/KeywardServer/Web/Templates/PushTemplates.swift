// Templates of the push waiting, outcome and enrollment pages.
extension PageTemplates {
    /// The push step: the number or PIN to match, Resend and Cancel; follows the challenge over SSE and submits
    /// the form by itself when the phone answers. Without JavaScript the page refreshes and has a Check button.
    static let pushWait = #"""
    <h1>Approve on your phone</h1>
    <div data-events-url="{{eventsURL}}" data-submit-form="push-form">
    {{#numberMatch}}
    <p id="instruction">Open the app on your phone and tap this number:</p>
    <p class="code" id="verification-code" aria-describedby="instruction">{{value}}</p>
    {{/numberMatch}}
    {{#pin}}
    <p id="instruction">Open the app on your phone and enter this PIN:</p>
    <p class="code" id="verification-code" aria-describedby="instruction">{{value}}</p>
    {{/pin}}
    {{^hasVerification}}<p id="instruction">We sent a push to your phone. Approve the login there.</p>{{/hasVerification}}
    {{#hasDevices}}<p class="muted" id="approving-devices-label">It can be approved on:</p>
    <ul id="approving-devices" aria-labelledby="approving-devices-label">{{#devices}}<li>{{.}}</li>{{/devices}}</ul>{{/hasDevices}}
    <p id="status-live" role="status" aria-live="polite" class="muted">Waiting for your phone…</p>
    </div>
    <form method="post" action="{{action}}" id="push-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="challengeId" value="{{challengeId}}">
    <button type="submit" name="check" value="true" id="check">I approved it</button>
    <button type="submit" name="refresh" value="true" class="secondary" id="resend">Resend push</button>
    <button type="submit" name="cancel" value="true" class="secondary" id="cancel">Cancel</button>
    </form>
    {{#alternatives}}<p><a href="{{href}}" class="alternative">{{label}}</a></p>{{/alternatives}}
    {{#demo}}
    <div class="demo" id="demo-aid">
    <p><strong>Demo realm aid</strong> — never shown in production realms.</p>
    <p>Confirm token: <code id="confirm-token">{{confirmToken}}</code></p>
    <p><a href="{{sameDeviceLink}}" id="open-app">Open app</a></p>
    </div>
    {{/demo}}
    """#

    /// Denied, expired, locked out, too many pending, wait required, cancelled.
    static let pushOutcome = #"""
    <h1>{{heading}}</h1>
    <p{{#isError}} class="error" role="alert"{{/isError}} id="outcome">{{text}}</p>
    {{#waitSeconds}}<p class="muted" data-wait-seconds="{{waitSeconds}}" data-enable="retry" aria-live="polite">You can try again in {{waitSeconds}} seconds.</p>{{/waitSeconds}}
    {{#retry}}
    <form method="post" action="{{action}}">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <button type="submit" name="retry" value="true" id="retry">Try again</button>
    </form>
    {{/retry}}
    <p><a href="{{loginURL}}">Back to sign in</a></p>
    """#

    /// Enrollment: Keyward's own QR code (inline SVG) of the enrollment link, the link itself with a copy button,
    /// and the enrollment followed over SSE.
    static let enroll = #"""
    <h1>Add a push-approval device</h1>
    {{#required}}<p>Your account needs a phone that approves logins before you can continue.</p>{{/required}}
    {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
    <p id="qr-help">Scan this code with the Keyward app on your phone.</p>
    <div class="qr" id="qr" role="img" aria-labelledby="qr-help">{{{qrSVG}}}</div>
    <label for="enrollment-link">Or open this link on the phone</label>
    <input type="text" id="enrollment-link" value="{{link}}" readonly>
    <button type="button" class="secondary" id="copy-link" data-copy-target="enrollment-link" hidden>Copy link</button>
    <div data-events-url="{{eventsURL}}" data-submit-form="check-form">
    <p id="status-live" role="status" aria-live="polite" class="muted">Waiting for your phone… (the code is valid for {{ttlMinutes}} minutes)</p>
    </div>
    <form method="post" action="{{action}}" id="enroll-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <button type="submit" name="confirm" value="true" id="confirm">I've enrolled</button>
    <button type="submit" name="refresh" value="true" class="secondary" id="new-code">New QR code</button>
    </form>
    <form method="post" action="{{action}}" id="check-form" hidden>
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="check" value="true">
    </form>
    {{#canSkip}}<p><a href="{{accountURL}}">Back to your account</a></p>{{/canSkip}}
    """#
}
