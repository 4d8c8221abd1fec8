// Templates of the authorization endpoint's consent page.
extension PageTemplates {
    /// An app asks to sign the person in: who it is, what it asks for, where the answer goes; Allow or Deny.
    static let consent = #"""
    <h1>Allow <span id="client">{{clientId}}</span> to sign you in?</h1>
    <p>You are signed in to {{realmName}} as <strong id="username">{{username}}</strong>.</p>
    {{#hasScopes}}
    <p>The app asks to:</p>
    <ul id="scopes">
    {{#scopes}}<li>{{text}}</li>{{/scopes}}
    </ul>
    {{/hasScopes}}
    <form method="post" action="{{action}}" id="consent-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="id" value="{{id}}">
    <button type="submit" name="decision" value="allow" id="allow">Allow</button>
    <button type="submit" name="decision" value="deny" class="secondary" id="deny">Deny</button>
    </form>
    <p class="muted">Your answer goes back to <code id="destination">{{destination}}</code>.</p>
    """#

    /// An app asked to sign the person out without proving who it signs out: the person confirms.
    static let logoutConfirm = #"""
    <h1>Sign out of {{realmName}}?</h1>
    <p>An app asked to sign you out. Apps you signed in to from this browser are signed out too.</p>
    <form method="post" action="{{action}}" id="logout-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    {{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}
    <button type="submit" id="sign-out">Sign out</button>
    </form>
    <p><a href="{{accountURL}}">Stay signed in</a></p>
    """#

    /// An app asks for a second factor the session has not had: the person starts it (a push to their phone).
    static let stepUp = #"""
    <h1>Confirm it is you</h1>
    <p><span id="client">{{clientId}}</span> asks you to confirm this sign-in with your second factor.</p>
    <form method="post" action="{{action}}" id="step-up-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="id" value="{{id}}">
    <button type="submit" name="decision" value="continue" id="continue">Continue</button>
    <button type="submit" name="decision" value="cancel" class="secondary" id="cancel">Cancel</button>
    </form>
    """#
}
