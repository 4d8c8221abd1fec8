// Templates of the sign-in, message and account pages.
extension PageTemplates {
    static let login = #"""
    <h1>Sign in to {{realmName}}</h1>
    {{#notice}}<p role="status">{{notice}}</p>{{/notice}}
    {{#error}}<p class="error" role="alert" id="login-error">{{error}}</p>{{/error}}
    <form method="post" action="{{action}}" id="login-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <label for="username">Username</label>
    <input type="text" id="username" name="username" value="{{username}}" autocomplete="username{{#passkeys}}{{#conditional}} webauthn{{/conditional}}{{/passkeys}}" required autofocus{{#error}} aria-describedby="login-error"{{/error}}>
    <label for="password">Password</label>
    <input type="password" id="password" name="password" autocomplete="current-password" required>
    <button type="submit" id="sign-in">Sign in</button>
    </form>
    {{#passkeys}}
    <div data-passkey-signin data-options-url="{{optionsURL}}" data-url="{{url}}" data-csrf="{{csrf}}"{{#conditional}} data-conditional="1"{{/conditional}}>
    <button type="button" class="secondary" id="passkey-sign-in" hidden>Sign in with a passkey</button>
    <p id="passkey-status" role="status" aria-live="polite" class="muted"></p>
    </div>
    {{/passkeys}}
    {{#hasProviders}}
    <p class="muted">Or sign in with</p>
    <ul class="providers">
    {{#providers}}<li><a class="provider" href="{{href}}" id="provider-{{alias}}">{{name}}</a></li>{{/providers}}
    </ul>
    {{/hasProviders}}
    """#

    /// A short page with a message and one way on (errors, cancelled, logged out).
    static let message = #"""
    <h1>{{heading}}</h1>
    <p{{#isError}} class="error" role="alert"{{/isError}}>{{text}}</p>
    {{#requestId}}<p class="muted">Request id: <code>{{requestId}}</code></p>{{/requestId}}
    {{#link}}<p><a href="{{href}}">{{label}}</a></p>{{/link}}
    """#

    static let account = #"""
    <h1>Your account</h1>
    <p>Signed in as <strong id="username">{{username}}</strong>.</p>
    {{#notice}}<p role="status">{{notice}}</p>{{/notice}}
    <h2>Your devices</h2>
    {{#hasRegisteredDevices}}
    <table id="registered-devices">
    <caption class="muted">Phones with this realm's app: what vouched for them, whether they approve your logins, and the app sign-ins they hold</caption>
    <thead><tr><th scope="col">Device</th><th scope="col">Attestation</th><th scope="col">Approves logins</th><th scope="col">Last seen</th><th scope="col">App sign-ins</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
    <tbody>
    {{#registeredDevices}}
    <tr><td>{{name}}</td><td>{{attestation}}</td><td>{{push}}</td><td>{{lastSeen}}</td><td>{{tokens}}</td>
    <td>{{#removed}}<span class="muted">Removed {{removed}}</span> {{/removed}}<form method="post" action="{{removeAction}}"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" aria-label="Remove {{name}}">{{#removed}}Remove again{{/removed}}{{^removed}}Remove{{/removed}}</button></form></td></tr>
    {{/registeredDevices}}
    </tbody>
    </table>
    {{/hasRegisteredDevices}}
    {{#hasDevices}}
    <table>
    <caption class="muted">Phones that approve your logins</caption>
    <thead><tr><th scope="col">Device</th><th scope="col">Type</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
    <tbody>
    {{#devices}}
    <tr><td>{{label}}</td><td>{{type}}</td><td>{{created}}</td><td>{{lastUsed}}</td>
    <td><form method="post" action="{{removeAction}}"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" aria-label="Remove {{label}}">Remove</button></form></td></tr>
    {{/devices}}
    </tbody>
    </table>
    {{/hasDevices}}
    {{^hasDevices}}{{^hasRegisteredDevices}}<p id="no-devices">No device yet.</p>{{/hasRegisteredDevices}}{{/hasDevices}}
    <p><a href="{{enrollURL}}" id="add-device">Add a device</a></p>
    {{#passkeysOn}}
    <h2>Passkeys</h2>
    {{#hasPasskeys}}
    <table id="passkeys">
    <caption class="muted">Passkeys that sign you in</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="muted">Actions</span></th></tr></thead>
    <tbody>
    {{#passkeys}}
    <tr><td>{{name}}{{#suspended}} <span class="error">(suspended: its counter went back; remove it)</span>{{/suspended}}</td><td>{{kind}}</td><td>{{created}}</td><td>{{lastUsed}}</td>
    <td><form method="post" action="{{renameAction}}" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><label class="inline">New name <input type="text" name="name" maxlength="64" required></label><button type="submit" class="secondary" aria-label="Rename {{name}}">Rename</button></form>
    {{#canRemove}}<form method="post" action="{{removeAction}}" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" aria-label="Remove {{name}}">Remove</button></form>{{/canRemove}}
    {{^canRemove}}<span class="muted">Your only way in</span>{{/canRemove}}</td></tr>
    {{/passkeys}}
    </tbody>
    </table>
    {{/hasPasskeys}}
    {{^hasPasskeys}}<p id="no-passkeys">No passkey yet.</p>{{/hasPasskeys}}
    {{#canAddPasskey}}
    <div data-passkey-register data-options-url="{{passkeyOptionsURL}}" data-url="{{passkeyRegisterURL}}" data-csrf="{{csrf}}">
    <label for="passkey-name">Name for a new passkey</label>
    <input type="text" id="passkey-name" maxlength="64" placeholder="This laptop">
    <button type="button" id="add-passkey" hidden>Add a passkey</button>
    <p id="passkey-status" role="status" aria-live="polite" class="muted"></p>
    </div>
    <noscript><p>Adding a passkey needs JavaScript in this browser.</p></noscript>
    {{/canAddPasskey}}
    {{^canAddPasskey}}<p><a href="{{passkeySignInAgainURL}}" id="add-passkey-sign-in">Sign in again to add a passkey</a></p>{{/canAddPasskey}}
    {{/passkeysOn}}
    {{#hasIdentities}}
    <h2>Signed in with</h2>
    <ul id="identities">
    {{#identities}}<li>{{provider}} ({{email}}){{#canUnlink}} <form method="post" action="{{unlinkAction}}" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="issuer" value="{{issuer}}"><input type="hidden" name="subject" value="{{subject}}"><button type="submit" class="secondary" aria-label="Unlink {{provider}}">Unlink</button></form>{{/canUnlink}}</li>{{/identities}}
    </ul>
    {{/hasIdentities}}
    {{#hasLinkable}}
    <h2>Link another way to sign in</h2>
    <ul id="linkable">
    {{#linkable}}<li><form method="post" action="{{linkAction}}" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" id="link-{{alias}}">Link {{name}}</button></form></li>{{/linkable}}
    </ul>
    {{/hasLinkable}}
    <h2>Where you are signed in</h2>
    <table id="sessions">
    <caption class="muted">Browsers signed in to your account</caption>
    <thead><tr><th scope="col">Browser</th><th scope="col">Signed in with</th><th scope="col">Started</th><th scope="col">Last used</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
    <tbody>
    {{#sessions}}
    <tr><td>{{browser}}</td><td>{{how}}</td><td>{{started}}</td><td>{{lastSeen}}</td>
    <td>{{#isCurrent}}<span class="muted">This browser</span>{{/isCurrent}}{{^isCurrent}}<form method="post" action="{{endAction}}"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" aria-label="End the session of {{browser}} started {{started}}">End</button></form>{{/isCurrent}}</td></tr>
    {{/sessions}}
    </tbody>
    </table>
    {{#hasApps}}
    <table id="app-sessions">
    <caption class="muted">Apps signed in to your account</caption>
    <thead><tr><th scope="col">App</th><th scope="col">Signed in</th><th scope="col">Last used</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
    <tbody>
    {{#apps}}
    <tr><td>{{client}}</td><td>{{started}}</td><td>{{lastUsed}}</td>
    <td><form method="post" action="{{endAction}}"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" aria-label="Sign {{client}} out, signed in {{started}}">Sign out</button></form></td></tr>
    {{/apps}}
    </tbody>
    </table>
    {{/hasApps}}
    <form method="post" action="{{endAllAction}}"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" id="end-all">Sign out everywhere</button></form>
    <form method="post" action="{{logoutAction}}"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="secondary" id="logout">Log out</button></form>
    <p><a href="{{deleteURL}}" id="delete-account">Delete your account</a></p>
    """#

    static let deleteAccount = #"""
    <h1>Delete your account</h1>
    <p>Deleting <strong>{{username}}</strong> removes its phones, the sign-in providers linked to it and every browser
    session. It cannot be undone.</p>
    <form method="post" action="{{action}}"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" id="confirm-delete">Delete my account</button></form>
    <p><a href="{{accountURL}}">Keep my account</a></p>
    """#
}
