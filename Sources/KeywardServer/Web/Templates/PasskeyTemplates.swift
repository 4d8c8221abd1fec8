// Templates of the passkey step of a sign-in; the sign-in and account pages carry their passkey parts themselves.
extension PageTemplates {
    /// The second step with a passkey: one button the script runs the ceremony behind, Cancel, and the other way
    /// the person may have. Without JavaScript there is no passkey ceremony: the page says so.
    static let passkeyStep = #"""
    <h1>Confirm with your passkey</h1>
    <p id="instruction">Use the passkey on this device or your phone to finish signing in as <strong>{{username}}</strong>.</p>
    <div data-passkey-step data-options-url="{{optionsURL}}" data-url="{{url}}" data-csrf="{{csrf}}">
    <button type="button" id="passkey-confirm" hidden>Use my passkey</button>
    <p id="passkey-status" role="status" aria-live="polite" class="muted"></p>
    </div>
    <noscript><p class="error">Passkeys need JavaScript in this browser.</p></noscript>
    {{#alternatives}}<p><a href="{{href}}" class="alternative">{{label}}</a></p>{{/alternatives}}
    <form method="post" action="{{action}}">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <button type="submit" name="cancel" value="true" class="secondary" id="cancel">Cancel</button>
    </form>
    """#
}
