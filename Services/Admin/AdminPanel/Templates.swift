import Mustache

/// The panel's pages as Mustache templates. Every `{{value}}` is HTML-escaped by the
/// engine; `{{{…}}}` is used only for markup the panel itself made (charts, rendered
/// forms and tables).
enum Templates {
    static func library() throws -> MustacheLibrary {
        var library = MustacheLibrary()
        for (name, text) in [
            ("layout", layout), ("login", login), ("page", page), ("form", form), ("table", table), ("confirm", confirm),
            ("message", message),
        ] {
            try library.register(text, named: name)
        }
        return library
    }

    static let layout = """
        <!doctype html>
        <html lang="{{language}}">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Admin</title>
        <link rel="stylesheet" href="/assets/admin.css">
        </head>
        <body>
        <header class="top">
          <a class="brand" href="/">Backend admin</a>
          {{#user}}
          <nav aria-label="Sections">
            {{#nav}}<a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a>{{/nav}}
          </nav>
          <form class="signout" method="post" action="/logout">
            <input type="hidden" name="_csrf" value="{{csrf}}">
            <span class="who">{{name}} ({{role}})</span>
            <button type="submit">Sign out</button>
          </form>
          {{/user}}
        </header>
        <main>
        <h1>{{title}}</h1>
        {{#flash}}<p class="flash" role="status">{{flash}}</p>{{/flash}}
        {{{body}}}
        </main>
        </body>
        </html>
        """

    static let login = """
        <form class="card narrow" method="post" action="/login">
          <input type="hidden" name="_csrf" value="{{loginToken}}">
          <input type="hidden" name="next" value="{{next}}">
          {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required value="{{email}}">
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required>
          <button type="submit" class="primary">Sign in</button>
          <p class="hint">For administrators and the park's staff. Accounts get these roles from an administrator.</p>
        </form>
        """

    static let page = """
        {{#blocks}}
        <section class="block{{#wide}} wide{{/wide}}">
          {{#heading}}<h2>{{heading}}</h2>{{/heading}}
          {{#text}}<p class="intro">{{text}}</p>{{/text}}
          {{{html}}}
          {{#links}}<p class="links">{{#items}}<a href="{{href}}">{{label}}</a> {{/items}}</p>{{/links}}
        </section>
        {{/blocks}}
        """

    static let form = """
        <form class="card form{{#danger}} danger{{/danger}}" method="post" action="/act/{{formID}}"{{#multipart}} enctype="multipart/form-data"{{/multipart}}>
          <h3>{{title}}</h3>
          <input type="hidden" name="_csrf" value="{{csrf}}">
          <input type="hidden" name="_return" value="{{returnTo}}">
          <input type="hidden" name="_idem" value="{{idem}}">
          {{#zone}}<input type="hidden" name="_zone" value="{{zone}}">{{/zone}}
          {{#general}}<p class="error" role="alert">{{.}}</p>{{/general}}
          {{#fields}}
          {{#isHidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/isHidden}}
          {{^isHidden}}
          <div class="field{{#error}} invalid{{/error}}">
            {{#isCheckbox}}
            <label><input type="checkbox" id="{{inputID}}" name="{{name}}"{{#checked}} checked{{/checked}}> {{label}}</label>
            {{/isCheckbox}}
            {{^isCheckbox}}<label for="{{inputID}}">{{label}}{{#required}} <span class="req" title="required">*</span>{{/required}}</label>{{/isCheckbox}}
            {{#isInput}}<input id="{{inputID}}" name="{{name}}" type="{{inputType}}" value="{{value}}"{{#step}} step="{{step}}"{{/step}}{{#required}} required{{/required}}{{#error}} aria-invalid="true" aria-describedby="{{inputID}}-error"{{/error}}>{{/isInput}}
            {{#isTextarea}}<textarea id="{{inputID}}" name="{{name}}" rows="{{rows}}"{{#required}} required{{/required}}{{#error}} aria-invalid="true" aria-describedby="{{inputID}}-error"{{/error}}>{{value}}</textarea>{{/isTextarea}}
            {{#isSelect}}<select id="{{inputID}}" name="{{name}}"{{#required}} required{{/required}}>{{^required}}<option value="">—</option>{{/required}}{{#options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/options}}</select>{{/isSelect}}
            {{#isFile}}
            {{#current}}<span class="current"><img src="{{currentSrc}}" alt="current image" class="thumb"> <label><input type="checkbox" name="{{name}}__clear"> remove</label></span>{{/current}}
            <input type="hidden" name="{{name}}" value="{{value}}">
            <input id="{{inputID}}" name="{{name}}__file" type="file" accept="image/png,image/jpeg,image/webp">
            {{/isFile}}
            {{#help}}<small class="help">{{help}}</small>{{/help}}
            {{#error}}<small class="error" id="{{inputID}}-error">{{error}}</small>{{/error}}
          </div>
          {{/isHidden}}
          {{/fields}}
          <button type="submit" class="{{#danger}}danger{{/danger}}{{^danger}}primary{{/danger}}">{{submit}}</button>
          {{#previewable}}<button type="submit" name="_preview" value="yes">Preview</button>{{/previewable}}
        </form>
        """

    static let table = """
        {{#hasRows}}
        <div class="scroll">
        <table>
          <thead><tr>{{#headers}}<th scope="col">{{.}}</th>{{/headers}}</tr></thead>
          <tbody>
          {{#rows}}<tr>{{#cells}}<td{{#numeric}} class="num"{{/numeric}}>{{#image}}<img class="thumb" src="{{image}}" alt="">{{/image}}{{#href}}<a href="{{href}}">{{text}}</a>{{/href}}{{^href}}{{#badge}}<span class="badge {{badge}}">{{text}}</span>{{/badge}}{{^badge}}{{text}}{{/badge}}{{/href}}{{#small}}<br><small>{{small}}</small>{{/small}}{{#actions}}<form class="inline" method="post" action="/act/{{formID}}"><input type="hidden" name="_csrf" value="{{csrf}}"><input type="hidden" name="_return" value="{{returnTo}}"><input type="hidden" name="_idem" value="{{idem}}">{{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}<button type="submit" class="{{#danger}}danger{{/danger}}">{{label}}</button></form>{{/actions}}</td>{{/cells}}</tr>
          {{/rows}}
          </tbody>
        </table>
        </div>
        {{/hasRows}}
        {{^hasRows}}<p class="empty">{{empty}}</p>{{/hasRows}}
        """

    static let confirm = """
        <form class="card narrow danger" method="post" action="/act/{{formID}}">
          <p class="question">{{question}}</p>
          <input type="hidden" name="_csrf" value="{{csrf}}">
          <input type="hidden" name="_return" value="{{returnTo}}">
          <input type="hidden" name="_idem" value="{{idem}}">
          <input type="hidden" name="_confirmed" value="yes">
          {{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}
          <button type="submit" class="danger">{{submit}}</button>
          <a class="button" href="{{returnTo}}">Cancel</a>
        </form>
        """

    static let message = """
        <div class="card narrow"><p>{{message}}</p>{{#link}}<p><a href="{{link}}">{{linkLabel}}</a></p>{{/link}}</div>
        """

    /// The style sheet, served as `/assets/admin.css` (the pages allow no inline styles or
    /// scripts). Fluid down to a phone, two columns of cards on a laptop.
    static let css = """
        *{box-sizing:border-box}
        body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2329;background:#f4f6f8}
        header.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.6rem 1rem;background:#1f3a56;color:#fff}
        header.top a{color:#dce8f5;text-decoration:none}
        header.top a.brand{font-weight:600;color:#fff;margin-right:.5rem}
        header.top nav{display:flex;flex-wrap:wrap;gap:.25rem .8rem;flex:1}
        header.top nav a[aria-current]{color:#fff;border-bottom:2px solid #9cc3ea}
        form.signout{display:flex;gap:.5rem;align-items:center;margin:0}
        .who{font-size:.85rem;color:#c9d6e3}
        main{max-width:1280px;margin:0 auto;padding:1rem}
        h1{font-size:1.5rem;margin:.3rem 0 1rem}
        h2{font-size:1.15rem;margin:0 0 .6rem}
        h3{font-size:1rem;margin:0 0 .6rem}
        main{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,560px),1fr));gap:1rem;align-items:start}
        main>h1,main>.flash{grid-column:1/-1;margin-bottom:0}
        section.block{background:#fff;border:1px solid #dde3ea;border-radius:8px;padding:1rem;min-width:0}
        section.block.wide{grid-column:1/-1}
        .card{background:#fff;border:1px solid #dde3ea;border-radius:8px;padding:1rem;margin:.6rem 0}
        .narrow{max-width:420px}
        .danger{border-color:#e2b4b4}
        .flash{background:#e6f4ea;border:1px solid #b7dfc2;padding:.6rem .8rem;border-radius:6px}
        .error{color:#a61b1b}
        p.error{background:#fdecec;border:1px solid #f1c2c2;padding:.5rem .7rem;border-radius:6px}
        .field{display:flex;flex-direction:column;margin:.5rem 0}
        .field.invalid input,.field.invalid textarea,.field.invalid select{border-color:#c62828;background:#fff8f8}
        label{font-weight:500;margin-bottom:.2rem}
        input,select,textarea{font:inherit;padding:.45rem .5rem;border:1px solid #b9c3cd;border-radius:5px;background:#fff;max-width:100%}
        textarea{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85rem}
        .help{color:#5b6570}
        button,.button{font:inherit;padding:.4rem .8rem;border-radius:5px;border:1px solid #8a98a6;background:#f3f5f7;cursor:pointer;color:#1d2329;text-decoration:none;display:inline-block}
        button.primary{background:#2f6fb0;border-color:#2f6fb0;color:#fff}
        button.danger{background:#b3261e;border-color:#b3261e;color:#fff}
        form.inline{display:inline-block;margin:.1rem .2rem .1rem 0}
        form.inline button{padding:.2rem .5rem;font-size:.85rem}
        .scroll{overflow-x:auto}
        table{border-collapse:collapse;width:100%;font-size:.9rem}
        th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #e7ebef;vertical-align:top}
        th{background:#f7f9fb;font-weight:600}
        td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
        .thumb{width:40px;height:40px;object-fit:contain;vertical-align:middle;background:#eef1f4;border-radius:4px}
        .badge{display:inline-block;padding:.05rem .45rem;border-radius:10px;font-size:.8rem;background:#e8edf2}
        .badge.ok{background:#dff3e4;color:#1b5e20}.badge.warn{background:#fff3d6;color:#7a4d00}.badge.bad{background:#fde3e3;color:#8e1c1c}
        .empty{color:#6b7580}
        .intro{color:#47515b;margin-top:0}
        .links a{margin-right:.8rem}
        svg.chart{width:100%;height:auto;max-height:260px}
        .phone{max-width:340px;background:#111;border-radius:22px;padding:14px}
        .push{background:#f2f2f7;border-radius:12px;padding:.6rem .8rem;font-size:.9rem}
        .push b{display:block}
        .req{color:#a61b1b}
        @media (max-width:600px){main{padding:.5rem}header.top nav{order:3;width:100%}}
        """
}
