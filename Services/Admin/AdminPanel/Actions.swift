import Foundation
import HTTPTypes
import Hummingbird
import Platform

extension AdminPanel {
    /// `POST /act/<form>`: one declared form. Checks, in order: a live session, the form's
    /// CSRF token, the form exists and the role may use it, a confirmation where the form
    /// asks one; then uploads its images, turns its text into `data`, calls the operation
    /// with the form's own idempotency key, and redirects back with a message, or shows
    /// the form again with each problem beside its field.
    func act(_ request: Request, context: AdminRequestContext) async -> Response {
        guard let session = await currentSession(request) else { return redirect("/login") }
        let nav = PageCatalog.nav(for: session.role)
        func refuse(_ text: String, _ status: HTTPResponse.Status) -> Response {
            html(renderer.layout(title: "Not done", body: renderer.message(text, link: ("Back", "/")), session: session, nav: nav, current: "", flash: nil), status: status)
        }
        let body: FormBody
        do {
            body = try await FormBody.read(request, limit: settings.maxBodyBytes)
        } catch is FormBody.TooLarge {
            return refuse("The form is too large: an image may be at most 512 KiB.", .contentTooLarge)
        } catch {
            return refuse("The form could not be read; reload the page and try again.", .badRequest)
        }
        guard Self.same(body.values["_csrf"] ?? "", session.csrf) else {
            return refuse("This form has expired or did not come from this panel: go back, reload the page and try again.", .forbidden)
        }
        guard let form = forms[context.parameters.get("form") ?? ""] else { return refuse("There is no such form.", .notFound) }
        guard session.role.allows(form.role) else { return refuse("This is for administrators only.", .forbidden) }
        let returnTo = Self.localPath(body.values["_return"]) ?? "/"
        let idem = body.values["_idem"].flatMap { $0.count == 64 && $0.allSatisfy(\.isHexDigit) ? $0 : nil } ?? SessionStore.randomToken()
        var values = body.values
        let zone = values["_zone"].flatMap(TimeZone.init(identifier:))

        if form.confirm != nil, values["_confirmed"] != "yes" {
            var hidden: [String: String] = [:]
            for field in form.fields { hidden[field.name] = values[field.name] ?? "" }
            if let zone { hidden["_zone"] = zone.identifier }
            return html(
                renderer.layout(
                    title: form.title, body: renderer.confirm(form, hidden: hidden, csrf: session.csrf, returnTo: returnTo, idem: idem),
                    session: session, nav: nav, current: returnTo, flash: nil))
        }
        if values["_preview"] == "yes" {
            return formPage(form, session: session, values: values, returnTo: returnTo, zone: zone, idem: idem, preview: true)
        }

        // Images first: each through its service's media operation, as the person.
        var uploadErrors: [String: String] = [:]
        for (field, service) in form.imageFields {
            guard let file = body.files["\(field.name)__file"] else { continue }
            let answer = await gateway.call(
                "\(service).media.put", ["content": .string(file.base64EncodedString())], token: session.accessToken,
                idem: "admin-media:\(idem):\(field.name)", client: context.peer)
            switch answer {
            case .success(let uploaded): values[field.name] = uploaded["id"]?.stringValue ?? ""
            case .failure(let error):
                if error.code == .unauthenticated { return redirect("/login") }
                uploadErrors[field.name] = error.code == .payloadTooLarge
                    ? "the image is over 512 KiB" : (error.fields["content"] ?? Self.explain(error))
            }
        }
        let (data, errors) = form.data(from: values, zone: zone, currency: await currency(of: form, values: values, session: session, context: context))
        // What the upload said beats "required" (the file was there, but refused).
        let problems = errors.merging(uploadErrors) { _, upload in upload }
        guard problems.isEmpty else {
            // A hidden field's problem cannot be shown beside it: on top, then.
            let placed = form.placing(problems)
            // A new key: the next submit may carry another file or other values.
            return formPage(
                form, session: session, values: values, errors: placed.byField, general: placed.general, returnTo: returnTo, zone: zone,
                idem: SessionStore.randomToken())
        }
        if form.op.isEmpty {
            // An upload on its own: the image's id is what the person needs next.
            sessions.update(session.id) { $0.flash = Self.filling(form.success, from: data) }
            return redirect(returnTo)
        }
        let answer = await gateway.call(
            form.op, data, token: session.accessToken, idem: form.sendsIdem ? "admin:\(idem)" : nil, client: context.peer)
        switch answer {
        case .success(let result):
            logger.info("admin action", metadata: ["user": "\(session.userID)", "op": "\(form.op)"])
            sessions.update(session.id) { $0.flash = Self.filling(form.success, from: result) }
            return redirect(returnTo)
        case .failure(let error):
            if error.code == .unauthenticated {
                sessions.remove(session.id)
                return redirect("/login")
            }
            let placed = form.placing(error.fields)
            var general = placed.general
            if error.fields.isEmpty || !general.isEmpty || placed.byField.isEmpty { general.insert(Self.explain(error), at: 0) }
            // No answer may still mean done: the same key again, so a retry cannot write twice.
            // A refusal is final for that key: the next try is a new request.
            let unanswered = error.code == .unavailable || error.code == .timeout
            let status: HTTPResponse.Status =
                switch error.code {
                case .validationFailed: .unprocessableContent
                case .forbidden: .forbidden
                case .notFound: .notFound
                case .rateLimited: .tooManyRequests
                case .unavailable, .timeout: .serviceUnavailable
                default: .conflict
                }
            return formPage(
                form, session: session, values: values, errors: placed.byField, general: general, returnTo: returnTo, zone: zone,
                idem: unanswered ? idem : SessionStore.randomToken(), status: status)
        }
    }

    /// The currency a form's amounts are typed in: the one the park's settings form sets,
    /// else the park's (asked of booking when the form has an amount; two decimals when
    /// booking cannot say, and the service then checks the amount as always).
    func currency(of form: AdminForm, values: [String: String], session: AdminSession, context: AdminRequestContext) async -> Currency? {
        guard form.hasMoney else { return nil }
        if let code = values["price.currency"]?.trimmingCharacters(in: .whitespaces).uppercased(), let currency = Currency(code: code) {
            return currency
        }
        guard case .success(let park) = await gateway.call("booking.park.get", [:], token: session.accessToken, idem: nil, client: context.peer) else {
            return nil
        }
        return park["price"]?["currency"]?.stringValue.flatMap { Currency(code: $0) }
    }

    /// The form on a page of its own, as posted, with its problems (or a preview).
    func formPage(
        _ form: AdminForm, session: AdminSession, values: [String: String], errors: [String: String] = [:], general: [String] = [],
        returnTo: String, zone: TimeZone?, idem: String, preview: Bool = false, status: HTTPResponse.Status = .unprocessableContent
    ) -> Response {
        var blocks: [Block] = []
        if preview {
            blocks.append(Block(heading: "Preview", text: "How the push shows on a phone's lock screen.", html: Self.pushPreview(values)))
        }
        blocks.append(
            Block(
                html: renderer.form(
                    form, values: values, errors: errors, general: general, csrf: session.csrf, returnTo: returnTo, zone: zone, idem: idem)
                    + "<p><a href=\"\(SVGChart.escape(returnTo))\">Back</a></p>"))
        return html(
            renderer.layout(
                title: form.title, body: renderer.blocks(blocks), session: session, nav: PageCatalog.nav(for: session.role), current: returnTo,
                flash: nil), status: preview ? .ok : status)
    }

    static func pushPreview(_ values: [String: String]) -> String {
        let title = SVGChart.escape(values["title"] ?? "")
        let text = SVGChart.escape(values["text"] ?? "").replacingOccurrences(of: "\n", with: "<br>")
        return "<div class=\"phone\"><div class=\"push\"><b>\(title.isEmpty ? "(no title)" : title)</b>\(text.isEmpty ? "(no text)" : text)</div></div>"
    }

    /// `"Sent to {devices} devices."` with the answer's members filled in.
    static func filling(_ template: String, from result: JSONValue) -> String {
        var text = template
        for (key, value) in result.objectValue ?? [:] {
            let placeholder = "{\(key)}"
            guard text.contains(placeholder) else { continue }
            let shown: String =
                switch value {
                case .string(let string): string
                case .integer(let number): String(number)
                case .array(let items): String(items.count)
                default: ""
                }
            text = text.replacingOccurrences(of: placeholder, with: shown)
        }
        return text
    }
}
