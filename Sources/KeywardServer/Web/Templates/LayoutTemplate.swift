/// The page frame. Templates are compiled into the binary so a single `keyward` file deploys; the one
/// stylesheet and the one script carry the response's CSP nonce.
extension PageTemplates {
    static let layout = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
    {{#refreshSeconds}}<noscript><meta http-equiv="refresh" content="{{refreshSeconds}}"></noscript>{{/refreshSeconds}}
    <title>{{title}} · {{realmName}} · Keyward</title>
    <style nonce="{{nonce}}">
    :root { color-scheme: light; --ink: #1a1a1a; --muted: #4a4a4a; --accent: #0b5394; --danger: #a61b1b; --line: #c8c8c8; }
    body { font: 17px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #fafafa; margin: 0; }
    main { max-width: 34rem; margin: 2rem auto; padding: 1.5rem 2rem; background: #fff; border: 1px solid var(--line); border-radius: 8px; }
    h1 { font-size: 1.5rem; margin-top: 0; }
    label { display: block; font-weight: 600; margin-top: 1rem; }
    input[type=text], input[type=password] { width: 100%; box-sizing: border-box; font: inherit; padding: .5rem; border: 1px solid #767676; border-radius: 4px; }
    button { font: inherit; margin-top: 1rem; margin-right: .5rem; padding: .5rem 1.1rem; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
    button.secondary { background: #fff; color: var(--accent); }
    ul.providers { list-style: none; padding: 0; margin: .5rem 0 0; }
    form.inline { display: inline; } form.inline button { margin-top: .25rem; padding: .2rem .7rem; }
    label.inline { display: inline; font-weight: normal; } label.inline input { width: 8rem; font: inherit; padding: .2rem; border: 1px solid #767676; border-radius: 4px; }
    a.provider { display: block; margin-top: .5rem; padding: .5rem 1.1rem; border: 1px solid var(--accent); border-radius: 4px; color: var(--accent); text-decoration: none; text-align: center; }
    button:disabled { opacity: .55; cursor: not-allowed; }
    :focus-visible { outline: 3px solid var(--ink); outline-offset: 2px; }
    .error { color: var(--danger); font-weight: 600; }
    .muted { color: var(--muted); }
    .code { font-size: 3.2rem; font-weight: 700; letter-spacing: .3rem; text-align: center; margin: 1rem 0; }
    .qr svg { display: block; max-width: 100%; height: auto; margin: 1rem auto; }
    table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .4rem .3rem; border-bottom: 1px solid var(--line); }
    .demo { border: 2px dashed #b58105; padding: .5rem 1rem; margin-top: 1.5rem; word-break: break-all; font-size: .85rem; }
    </style>
    </head>
    <body>
    <main id="main">
    {{{body}}}
    </main>
    <script nonce="{{nonce}}" src="/static/keyward.js"></script>
    </body>
    </html>
    """#
}

/// Every page template, by name.
enum PageTemplates {
    static var all: [String: String] {
        [
            "layout": layout, "login": login, "push-wait": pushWait, "push-outcome": pushOutcome,
            "enroll": enroll, "account": account, "deleteAccount": deleteAccount, "message": message, "consent": consent, "logout-confirm": logoutConfirm, "step-up": stepUp, "passkey-step": passkeyStep,
        ]
    }
}
