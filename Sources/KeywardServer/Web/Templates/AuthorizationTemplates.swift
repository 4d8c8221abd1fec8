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
}
